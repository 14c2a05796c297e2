/**
 * The inert form every decoded LangGraph value takes: plain JSON data, with
 * the type a value had in the program that wrote it kept as a label.
 *
 * A typed value is an object whose `$type` names the original type
 * (`langchain_core.messages.ai.AIMessage`, `datetime.datetime`, `Set`): its
 * fields follow when it had named fields, or its one value sits in `$value`,
 * or its positional arguments in `$args`. Nothing is ever constructed from a
 * label: LangGraph's own loaders import and call what a checkpoint names, so
 * reading a checkpoint here must never do that.
 */

/** The key that carries a value's original type. */
export const TYPE_KEY = '$type';

/** A value that could not be decoded, in place of the value: the rest of the state stays readable. */
export interface UndecodableValue {
  $undecodable: string;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** The label of a typed value, or null for plain data. */
export function typeOf(value: unknown): string | null {
  return isPlainObject(value) && typeof value[TYPE_KEY] === 'string' ? (value[TYPE_KEY] as string) : null;
}

/** The last segment of a dotted label: `langchain_core.messages.ai.AIMessage` -> `AIMessage`. */
export function shortTypeName(label: string): string {
  return label.slice(label.lastIndexOf('.') + 1);
}

/** A typed value with named fields. Own keys only, so a field named `__proto__` stays a field. */
export function typed(label: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { [TYPE_KEY]: label };
  for (const [k, v] of Object.entries(fields)) {
    if (k === TYPE_KEY) out.$field_type = v;
    // Assigning `__proto__` would set the prototype: that one key is defined as an own field instead.
    else if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

/** Bytes as inert data: their length and their content in base64. */
export function bytesValue(bytes: Uint8Array): Record<string, unknown> {
  return {
    [TYPE_KEY]: 'bytes',
    length: bytes.length,
    base64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
  };
}

export function undecodable(reason: string): UndecodableValue {
  return { $undecodable: reason };
}

export function isUndecodable(value: unknown): value is UndecodableValue {
  return isPlainObject(value) && typeof value.$undecodable === 'string';
}
