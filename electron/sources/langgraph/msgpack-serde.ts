/**
 * The `msgpack` serde type of LangGraph's Python JsonPlusSerializer, decoded
 * into inert data.
 *
 * The serializer (langgraph/checkpoint/serde/jsonplus.py, `_msgpack_default`)
 * writes what msgpack cannot hold as extension types whose payload is itself
 * msgpack: a tuple of the type's module, its name and its data. Python's
 * loader imports that module and calls it; here each becomes a typed value
 * (inert-value.ts) labelled `module.name`, and nothing is imported or called.
 *
 *   code 0  constructor, one argument     (module, name, arg): UUID, Decimal, set, Enum, ZoneInfo, ...
 *   code 1  constructor, positional args  (module, name, args): Path, re.compile, date, timedelta, Send, ...
 *   code 2  constructor, keyword args     (module, name, kwargs): dataclasses, namedtuples, time, Item
 *   code 3  method, one argument          (module, name, arg, method): datetime.fromisoformat
 *   code 4  Pydantic v1 model             (module, name, dict)
 *   code 5  Pydantic v2 model             (module, name, model_dump(), "model_validate_json"): LangChain messages
 *   code 6  NumPy array                   (dtype, shape, order, buffer)
 *   code 7  delta snapshot                (value)
 */
import { decode, ExtData, ExtensionCodec } from '@msgpack/msgpack';
import { bytesValue, isPlainObject, typed, undecodable } from './inert-value.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

export const EXT = {
  constructorSingleArg: 0,
  constructorPosArgs: 1,
  constructorKwArgs: 2,
  methodSingleArg: 3,
  pydanticV1: 4,
  pydanticV2: 5,
  numpyArray: 6,
  deltaSnapshot: 7,
} as const;

/** A payload that is not what its extension code promises: decoding stops with this reason. */
export class MsgpackShapeError extends ServiceError {
  readonly code = 'invalid' as const;
}

const codec = new ExtensionCodec();

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new MsgpackShapeError(`${what} is not a string`);
  return v;
};

/** The (module, name, ...) tuple of an extension payload. */
function tupleOf(data: Uint8Array, code: number, minLength: number): unknown[] {
  const tup = decodeRaw(data);
  if (!Array.isArray(tup) || tup.length < minLength) {
    throw new MsgpackShapeError(
      `extension ${code} holds ${Array.isArray(tup) ? `a tuple of ${tup.length}` : 'no tuple'}, expected at least ${minLength} items`,
    );
  }
  return tup;
}

const labelOf = (tup: unknown[]): string => `${str(tup[0], 'the module name')}.${str(tup[1], 'the type name')}`;

const uuidText = (hex: string) =>
  /^[0-9a-f]{32}$/i.test(hex) ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` : hex;

function singleArg(tup: unknown[]): unknown {
  const label = labelOf(tup);
  if (label === 'uuid.UUID' && typeof tup[2] === 'string') return typed(label, { $value: uuidText(tup[2]) });
  return typed(label, { $value: tup[2] });
}

function positionalArgs(tup: unknown[]): unknown {
  const label = labelOf(tup);
  const args = Array.isArray(tup[2]) ? tup[2] : [tup[2]];
  if (label === 'langgraph.types.Send')
    return typed(label, { node: args[0], arg: args[1], ...(args.length > 2 ? { timeout: args[2] } : {}) });
  if (label === 'datetime.date' && args.length === 3 && args.every((n) => typeof n === 'number')) {
    const [y, m, d] = args as number[];
    return typed(label, { $value: `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}` });
  }
  if (label === 'datetime.timedelta' && args.length === 3) return typed(label, { days: args[0], seconds: args[1], microseconds: args[2] });
  if (label === 're.compile') return typed('re.Pattern', { pattern: args[0], flags: args[1] });
  return typed(label, { $args: args });
}

function keywordArgs(tup: unknown[]): unknown {
  return typed(labelOf(tup), isPlainObject(tup[2]) ? tup[2] : { $value: tup[2] });
}

function numpyArray(tup: unknown[]): unknown {
  const [dtype, shape, order, buf] = tup;
  return typed('numpy.ndarray', {
    dtype,
    shape,
    order,
    ...(buf instanceof Uint8Array ? { data: bytesValue(buf) } : {}),
  });
}

/**
 * An extension's decoder that, like Python's hook, gives up on one value
 * rather than the whole checkpoint: a payload of the wrong shape becomes an
 * undecodable marker in its place, with the reason.
 */
function guarded(code: number, fn: (data: Uint8Array) => unknown): (data: Uint8Array) => unknown {
  return (data) => {
    try {
      return fn(data);
    } catch (err) {
      return undecodable(`extension ${code}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

codec.register({ type: EXT.constructorSingleArg, encode: () => null, decode: guarded(0, (d) => singleArg(tupleOf(d, 0, 3))) });
codec.register({ type: EXT.constructorPosArgs, encode: () => null, decode: guarded(1, (d) => positionalArgs(tupleOf(d, 1, 3))) });
codec.register({ type: EXT.constructorKwArgs, encode: () => null, decode: guarded(2, (d) => keywordArgs(tupleOf(d, 2, 3))) });
codec.register({
  type: EXT.methodSingleArg,
  encode: () => null,
  decode: guarded(3, (d) => {
    const tup = tupleOf(d, 3, 4);
    return typed(labelOf(tup), { $value: tup[2] });
  }),
});
codec.register({ type: EXT.pydanticV1, encode: () => null, decode: guarded(4, (d) => keywordArgs(tupleOf(d, 4, 3))) });
codec.register({ type: EXT.pydanticV2, encode: () => null, decode: guarded(5, (d) => keywordArgs(tupleOf(d, 5, 3))) });
codec.register({ type: EXT.numpyArray, encode: () => null, decode: guarded(6, (d) => numpyArray(tupleOf(d, 6, 4))) });
codec.register({ type: EXT.deltaSnapshot, encode: () => null, decode: guarded(7, (d) => decodeRaw(d)) });

/** msgpack map keys may be any scalar (Python's OPT_NON_STR_KEYS); objects here take them as strings. */
const mapKeyConverter = (key: unknown): string | number => {
  if (typeof key === 'string' || typeof key === 'number') return key;
  if (typeof key === 'bigint' || typeof key === 'boolean' || key === null) return String(key);
  throw new MsgpackShapeError('a map key is neither a string nor a number');
};

function decodeRaw(data: Uint8Array): unknown {
  return decode(data, { extensionCodec: codec, useBigInt64: true, mapKeyConverter });
}

/**
 * Decode Python msgpack bytes into inert data: bytes, big integers and
 * extension codes LangGraph does not define become labelled values too, so
 * the result is plain JSON.
 */
export function decodeMsgpack(data: Uint8Array): unknown {
  return toPlain(decodeRaw(data));
}

function toPlain(value: unknown): unknown {
  if (value instanceof Uint8Array) return bytesValue(value);
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : typed('int', { $value: value.toString() });
  if (value instanceof ExtData) return typed('msgpack.ext', { code: value.type, length: value.data.length, unknown: true });
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Map) return toPlain(Object.fromEntries(value));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, k, { value: toPlain(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}
