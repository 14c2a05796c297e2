/**
 * Values a person gives for a thread's channels, encoded as msgpack the way
 * LangGraph's Python JsonPlusSerializer writes them (ormsgpack with
 * `_msgpack_default`), for a fork of a Python checkpoint: plain JSON as
 * msgpack (integers in their smallest form, other numbers as 64-bit floats,
 * maps in the order given), bytes as msgpack bin, and LangChain messages as
 * the serializer writes a Pydantic v2 model, extension 5 holding
 * `(module, class, model_dump(), "model_validate_json")` with the fields
 * `model_dump` gives each class.
 *
 * A message may be given as `{"role": "user", "content": "..."}`, with
 * LangChain's `type`, or as `show --json` prints it (`$type`). Any other
 * labelled value is refused, naming the channel.
 */
import { encode, ExtData } from '@msgpack/msgpack';
import { isPlainObject, shortTypeName, TYPE_KEY, typeOf } from './inert-value.js';
import { EXT } from './msgpack-serde.js';
import { CLASS_OF_ROLE, UnwritableValue } from './state-encoding.js';

/** Each message class: its module, its `type` and the fields model_dump gives it beyond the common ones. */
const CLASSES: Record<string, { module: string; type: string; defaults: Record<string, unknown> }> = {
  HumanMessage: { module: 'langchain_core.messages.human', type: 'human', defaults: { example: false } },
  AIMessage: {
    module: 'langchain_core.messages.ai',
    type: 'ai',
    defaults: { example: false, tool_calls: [], invalid_tool_calls: [], usage_metadata: null },
  },
  SystemMessage: { module: 'langchain_core.messages.system', type: 'system', defaults: {} },
  ToolMessage: { module: 'langchain_core.messages.tool', type: 'tool', defaults: { artifact: null, status: 'success' } },
};

/** The class a value given as a message stands for; null when it is no message. */
function messageClass(value: Record<string, unknown>, where: string): string | null {
  const label = typeOf(value);
  if (label) {
    if (!label.startsWith('langchain_core.')) return null;
    const name = shortTypeName(label).replace(/Chunk$/, '');
    if (!(name in CLASSES)) throw new UnwritableValue(`${where}: a ${name} cannot be written as Python's LangGraph would write it`);
    return name;
  }
  if (!('content' in value)) return null;
  const role = typeof value.role === 'string' ? value.role : typeof value.type === 'string' ? value.type : null;
  if (role === null) return null;
  const cls = CLASS_OF_ROLE[role];
  if (!cls) throw new UnwritableValue(`${where}: a message of role "${role}" cannot be written as Python's LangGraph would write it`);
  return cls;
}

/** The value as msgpack-ready data: messages as extension 5, everything else plain. */
function prepare(value: unknown, where: string): unknown {
  if (Array.isArray(value)) return value.map((v, i) => prepare(v, `${where}[${i}]`));
  if (typeof value === 'number' && !Number.isFinite(value)) throw new UnwritableValue(`${where}: ${value} is no number JSON holds`);
  if (!isPlainObject(value)) return value;
  const cls = messageClass(value, where);
  if (cls) {
    const spec = CLASSES[cls];
    const given: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === TYPE_KEY || k === 'role' || k === 'type' || k === 'langchain_class') continue;
      given[k] = prepare(v, `${where}.${k}`);
    }
    if (typeof given.content !== 'string' && !Array.isArray(given.content))
      throw new UnwritableValue(`${where}: a message needs a content string or a list of parts`);
    if (cls === 'ToolMessage' && typeof given.tool_call_id !== 'string')
      throw new UnwritableValue(`${where}: a tool message needs the tool_call_id it answers`);
    // model_dump's order: content, additional_kwargs, response_metadata, type, name, id, then the class's own.
    const fields = {
      content: given.content,
      additional_kwargs: given.additional_kwargs ?? {},
      response_metadata: given.response_metadata ?? {},
      type: spec.type,
      name: given.name ?? null,
      id: given.id ?? null,
      ...spec.defaults,
      ...Object.fromEntries(
        Object.entries(given).filter(([k]) => !['content', 'additional_kwargs', 'response_metadata', 'name', 'id'].includes(k)),
      ),
    };
    return new ExtData(EXT.pydanticV2, encode([spec.module, cls, fields, 'model_validate_json']));
  }
  const label = typeOf(value);
  if (label === 'bytes' && typeof value.base64 === 'string') return Uint8Array.from(Buffer.from(value.base64, 'base64'));
  if (label !== null) {
    throw new UnwritableValue(
      `${where}: a value of type ${label} cannot be written back as Python's LangGraph would write it; give it as plain JSON`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, k, { value: prepare(v, `${where}.${k}`), enumerable: true, writable: true, configurable: true });
  return out;
}

/** One channel's new value as the bytes Python's serializer writes for it; `where` names it in a refusal. */
export function encodePythonValue(value: unknown, where: string): Uint8Array {
  return encode(prepare(value, where));
}
