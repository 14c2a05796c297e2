/**
 * Values a person gives for a thread's channels (`--values` JSON), encoded
 * the way LangGraph's JavaScript JsonPlusSerializer writes them, so that
 * LangGraph loads them back as the objects its nodes expect: messages as
 * LangChain constructor envelopes, bytes and sets as LangGraph's lc:2
 * records, plain JSON as it is.
 *
 * A message may be given as a plain `{"role": "user", "content": "..."}`,
 * with LangChain's `type` instead of a role, or as Waystation shows it in
 * `show --json` (a value labelled `$type`). A labelled value of any other
 * type cannot be written back: the encoder refuses it, naming the channel.
 */
import { isPlainObject, shortTypeName, TYPE_KEY, typeOf } from './inert-value.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** Raised for a value that cannot be written as LangGraph would: says which channel and why. */
export class UnwritableValue extends ServiceError {
  readonly code = 'invalid-input' as const;
}

/** The LangChain message class a role names, in both languages' serialisations. */
export const CLASS_OF_ROLE: Record<string, string> = {
  user: 'HumanMessage',
  human: 'HumanMessage',
  assistant: 'AIMessage',
  ai: 'AIMessage',
  system: 'SystemMessage',
  tool: 'ToolMessage',
};

const MESSAGE_CLASSES = new Set([
  'HumanMessage',
  'AIMessage',
  'SystemMessage',
  'ToolMessage',
  'ChatMessage',
  'FunctionMessage',
  'RemoveMessage',
]);

/** A LangChain message envelope for a message given as data; null when `value` is no message. */
function messageEnvelope(value: unknown, where: string): Record<string, unknown> | null {
  if (!isPlainObject(value)) return null;
  const label = typeOf(value);
  let cls: string | null = null;
  if (label) {
    const name = shortTypeName(label).replace(/Chunk$/, '');
    if (!label.startsWith('langchain_core.') || !MESSAGE_CLASSES.has(name)) return null;
    cls = name;
  } else if ('content' in value) {
    const role = typeof value.role === 'string' ? value.role : typeof value.type === 'string' ? value.type : null;
    if (role === null) return null;
    cls = CLASS_OF_ROLE[role] ?? 'ChatMessage';
  }
  if (!cls) return null;
  const kwargs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === TYPE_KEY || k === 'type' || k === 'langchain_class' || (k === 'role' && cls !== 'ChatMessage')) continue;
    kwargs[k] = encodeValue(v, `${where}.${k}`);
  }
  if (typeof kwargs.content !== 'string' && !Array.isArray(kwargs.content))
    throw new UnwritableValue(`${where}: a message needs a content string or a list of parts`);
  if (cls === 'ToolMessage' && typeof kwargs.tool_call_id !== 'string')
    throw new UnwritableValue(`${where}: a tool message needs the tool_call_id it answers`);
  kwargs.additional_kwargs ??= {};
  kwargs.response_metadata ??= {};
  if (cls === 'AIMessage') {
    kwargs.tool_calls ??= [];
    kwargs.invalid_tool_calls ??= [];
  }
  return { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', cls], kwargs };
}

/** Encode one value (see the module comment); `where` names it in a refusal. */
export function encodeValue(value: unknown, where: string): unknown {
  if (Array.isArray(value)) return value.map((v, i) => encodeValue(v, `${where}[${i}]`));
  if (!isPlainObject(value)) return value;
  const message = messageEnvelope(value, where);
  if (message) return message;
  const label = typeOf(value);
  if (label === 'bytes' && typeof value.base64 === 'string') {
    return { lc: 2, type: 'constructor', id: ['Uint8Array'], method: 'from', args: [[...Buffer.from(value.base64, 'base64')]], kwargs: {} };
  }
  if (label === 'Set' && Array.isArray(value.$value))
    return { lc: 2, type: 'constructor', id: ['Set'], method: null, args: [encodeValue(value.$value, where)], kwargs: {} };
  if (label !== null) {
    throw new UnwritableValue(
      `${where}: a value of type ${label} cannot be written back as LangGraph would write it; give it as plain JSON`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, k, { value: encodeValue(v, `${where}.${k}`), enumerable: true, writable: true, configurable: true });
  return out;
}
