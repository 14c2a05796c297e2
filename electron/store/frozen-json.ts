/**
 * Deeply frozen JSON trees and their memoised encoding.
 *
 * The writer keeps the last version of each task as one deeply frozen tree
 * and builds the next version by replacing only the parts that changed, so
 * unchanged parts stay the very same objects. An object that can never change
 * has one encoding forever: it is computed once, remembered, and a document is
 * serialised by joining remembered fragments. A save then costs what changed
 * plus one copy of the bytes of each changed container, not a walk of the
 * whole document.
 *
 * "Sealed" means frozen by this module, with every object below it frozen and
 * plain JSON. An object someone else froze is not trusted to be either, so the
 * encoder never memoises it.
 */

const sealed = new WeakSet<object>();
const encodings = new WeakMap<object, string>();

/** Deeper than this, a value is treated as not plain (a cycle, most likely), and JSON.stringify decides. */
const MAX_DEPTH = 4096;

/** True when `value` is an object sealed by `sealJson`: deeply frozen, plain JSON. */
export function isSealed(value: unknown): boolean {
  return typeof value === 'object' && value !== null && sealed.has(value);
}

/**
 * Freeze `value` and everything below it, and mark it sealed.
 *
 * Objects already sealed are not visited again, so sealing a new version that
 * shares most of its tree with a sealed one costs only the new parts. The
 * value must be plain JSON (see `isPlainJson`); `toPlainJson` makes it so.
 */
export function sealJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null || sealed.has(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const v of value) sealJson(v);
  } else {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) sealJson(o[k]);
  }
  sealed.add(value);
  return value;
}

/**
 * True when JSON.parse(JSON.stringify(value)) would give back an equal tree.
 *
 * Plain objects and arrays, strings, finite numbers, booleans and null; an
 * object member may also be undefined (JSON leaves it out, and so does the
 * diff). Dates, class instances, toJSON, holes or undefined in arrays, NaN,
 * functions and cycles are not. Sealed subtrees are plain by construction and
 * are not walked.
 */
export function isPlainJson(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null || sealed.has(value)) return true;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v === undefined || !isPlainJson(v, depth + 1)) return false;
    }
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const o = value as Record<string, unknown>;
  if (typeof o.toJSON === 'function') return false;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v !== undefined && !isPlainJson(v, depth + 1)) return false;
  }
  return true;
}

/**
 * `value` itself when it is plain JSON, else its JSON round trip.
 *
 * The round trip throws what JSON.stringify throws (a cycle, a BigInt).
 */
export function toPlainJson<T>(value: T): T {
  return isPlainJson(value) ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * `JSON.stringify(value)`, byte for byte, reusing the remembered encoding of
 * every sealed object in it.
 *
 * Values that are not sealed are handed to JSON.stringify as they are, so the
 * result is always what JSON.stringify gives.
 */
export function encodeJson(value: unknown): string {
  if (typeof value === 'object' && value !== null && sealed.has(value)) return encodeSealed(value);
  return JSON.stringify(value);
}

function encodeSealed(obj: object): string {
  const hit = encodings.get(obj);
  if (hit !== undefined) return hit;
  let out: string;
  if (Array.isArray(obj)) {
    const parts = new Array<string>(obj.length);
    for (let i = 0; i < obj.length; i++) parts[i] = encodeMember(obj[i]) ?? 'null';
    out = `[${parts.join(',')}]`;
  } else {
    const o = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(o)) {
      const e = encodeMember(o[k]);
      if (e !== undefined) parts.push(`${JSON.stringify(k)}:${e}`);
    }
    out = `{${parts.join(',')}}`;
  }
  encodings.set(obj, out);
  return out;
}

/** One member's encoding, or undefined where JSON.stringify leaves the member out. */
function encodeMember(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      // Number-to-string is what JSON.stringify uses for finite numbers (-0 included: "0").
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      if (v === null) return 'null';
      return sealed.has(v) ? encodeSealed(v) : JSON.stringify(v);
    default:
      // undefined, functions and symbols give undefined; a BigInt throws, as it would in JSON.stringify.
      return JSON.stringify(v) as string | undefined;
  }
}
