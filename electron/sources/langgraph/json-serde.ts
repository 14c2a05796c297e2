/**
 * The `json` serde type of LangGraph's JavaScript checkpointers (and of old
 * Python ones), decoded into inert data.
 *
 * LangChain writes its objects as constructor envelopes:
 * `{"lc": 1, "type": "constructor", "id": ["langchain_core", "messages",
 * "AIMessage"], "kwargs": {...}}`; LangGraph adds `lc: 2` records for Set,
 * Map, RegExp, Error, Uint8Array, `undefined` and delta snapshots. Each
 * becomes a typed value (see inert-value.ts) with the envelope's id as its
 * label; a `secret` envelope keeps only the name of its secret, never a value
 * looked up from the environment.
 */
import { bytesValue, isPlainObject, typed } from './inert-value.js';

/** Parse JSON text and turn every envelope in it into a typed value. */
export function decodeJsonText(text: string): unknown {
  return reviveEnvelopes(JSON.parse(text) as unknown);
}

/**
 * Turn the envelopes of parsed JSON into typed values, innermost first. The
 * parsed value is fresh data of JSON.parse's making, so it is revised in
 * place rather than copied: a checkpoint holds the whole conversation, and
 * copying it doubled the cost of opening one.
 */
export function reviveEnvelopes(value: unknown): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = reviveEnvelopes(value[i]);
    return value;
  }
  if (!isPlainObject(value)) return value;
  // Own keys only: JSON.parse makes `__proto__` an own key, and it is revised as one.
  for (const k of Object.keys(value)) {
    const v = value[k];
    if (typeof v === 'object' && v !== null) {
      const revived = reviveEnvelopes(v);
      if (revived !== v) Object.defineProperty(value, k, { value: revived, enumerable: true, writable: true, configurable: true });
    }
  }
  const revived = envelopeValue(value);
  return revived === NOT_AN_ENVELOPE ? value : revived;
}

const idLabel = (id: unknown): string | null =>
  Array.isArray(id) && id.length > 0 && id.every((s) => typeof s === 'string') ? id.join('.') : null;

const NOT_AN_ENVELOPE = Symbol('not an envelope');

/** The typed value an envelope stands for, or NOT_AN_ENVELOPE. */
function envelopeValue(obj: Record<string, unknown>): unknown {
  if (obj.lc === 1) {
    const label = idLabel(obj.id);
    if (!label) return NOT_AN_ENVELOPE;
    if (obj.type === 'constructor') return typed(label, isPlainObject(obj.kwargs) ? obj.kwargs : {});
    if (obj.type === 'secret') return typed('secret', { name: label });
    if (obj.type === 'not_implemented')
      return typed(label, { not_implemented: true, ...(typeof obj.repr === 'string' ? { repr: obj.repr } : {}) });
    return NOT_AN_ENVELOPE;
  }
  if (obj.lc !== 2) return NOT_AN_ENVELOPE;
  if (obj.type === 'undefined') return null;
  if (obj.type === 'delta_snapshot' && 'value' in obj) return obj.value;
  if (obj.type !== 'constructor') return NOT_AN_ENVELOPE;
  const label = idLabel(obj.id);
  if (!label) return NOT_AN_ENVELOPE;
  const args = Array.isArray(obj.args) ? obj.args : [];
  if (label === 'Uint8Array' && Array.isArray(args[0]) && args[0].every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    return bytesValue(Uint8Array.from(args[0] as number[]));
  }
  if ((label === 'Set' || label === 'Error') && args.length === 1) return typed(label, { $value: args[0] });
  if (label === 'Map' && Array.isArray(args[0])) return typed(label, { $entries: args[0] });
  if (label === 'RegExp' && args.length === 2) return typed(label, { source: args[0], flags: args[1] });
  // Python's lc:2 records name a module and class and carry args/kwargs: kept as data, never constructed.
  const kwargs = isPlainObject(obj.kwargs) ? obj.kwargs : {};
  return typed(label, { ...kwargs, ...(args.length ? { $args: args } : {}) });
}
