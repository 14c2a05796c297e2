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
 * A long array that differs from its predecessor (the array of the previous
 * version it was copied from) in a few elements is encoded by splicing the
 * predecessor's encoding: a pointer comparison per element and a string
 * operation per change, never a lookup per element.
 *
 * "Sealed" means frozen by this module, with every object below it frozen and
 * plain JSON. An object someone else froze is not trusted to be either, so the
 * encoder never memoises it.
 */

const sealed = new WeakSet<object>();

interface Encoding {
  text: string;
  /**
   * For long arrays: where each element's encoding starts in `text`, plus one
   * entry (text.length) past the last, so element i spans
   * [starts[i], starts[i + 1] - 1).
   */
  starts: Int32Array | null;
}

const encodings = new WeakMap<object, Encoding>();
/**
 * A sealed array -> the sealed array of the previous version it was derived
 * from, until it is encoded. Were links kept after that, each version would
 * keep the one before it alive, and with it that version's encoding.
 */
const predecessors = new WeakMap<object, unknown[]>();

/** Arrays at least this long remember where their elements start, so a successor can splice. */
const SPLICE_MIN = 32;

/** Deeper than this, a value is treated as not plain (a cycle, most likely), and JSON.stringify decides. */
const MAX_DEPTH = 4096;

/** True when `value` is an object sealed by `sealJson`: deeply frozen, plain JSON. */
export function isSealed(value: unknown): boolean {
  return typeof value === 'object' && value !== null && sealed.has(value);
}

/**
 * Freeze `value` and everything below it, and mark it sealed.
 *
 * Objects already sealed are not visited again. `previous`, a sealed earlier
 * version of the same document, makes sealing a new version cost only its
 * new parts: a member identical to the previous version's at the same place
 * is sealed already and is skipped by a pointer comparison, and each new
 * array remembers the previous version's array as its predecessor for the
 * encoder. The value must be plain JSON (see `isPlainJson`); `toPlainJson`
 * makes it so.
 */
export function sealJson<T>(value: T, previous?: unknown): T {
  if (typeof value !== 'object' || value === null || sealed.has(value)) return value;
  const prev = typeof previous === 'object' && previous !== null && sealed.has(previous) ? previous : null;
  if (Array.isArray(value)) {
    const p = Array.isArray(prev) ? (prev as unknown[]) : null;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (p !== null && i < p.length && v === p[i]) continue;
      sealJson(v, p?.[i]);
    }
    if (p !== null) predecessors.set(value, p);
  } else {
    const o = value as Record<string, unknown>;
    const p = prev !== null && !Array.isArray(prev) ? (prev as Record<string, unknown>) : null;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (p !== null && v === p[k]) continue;
      sealJson(v, p?.[k]);
    }
  }
  Object.freeze(value);
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
  if (hit !== undefined) return hit.text;
  let enc: Encoding;
  if (Array.isArray(obj)) {
    const pred = predecessors.get(obj);
    // Once encoded, the array no longer needs its predecessor: dropping the link keeps old versions collectable.
    if (pred !== undefined) predecessors.delete(obj);
    const predEnc = pred === undefined ? undefined : encodings.get(pred);
    enc = pred !== undefined && predEnc?.starts ? spliceArray(obj, pred, predEnc.text, predEnc.starts) : encodeArray(obj);
  } else {
    const o = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(o)) {
      const e = encodeMember(o[k]);
      if (e !== undefined) parts.push(`${JSON.stringify(k)}:${e}`);
    }
    enc = { text: `{${parts.join(',')}}`, starts: null };
  }
  encodings.set(obj, enc);
  return enc.text;
}

function encodeArray(arr: readonly unknown[]): Encoding {
  const parts = new Array<string>(arr.length);
  for (let i = 0; i < arr.length; i++) parts[i] = encodeMember(arr[i]) ?? 'null';
  const text = `[${parts.join(',')}]`;
  if (arr.length < SPLICE_MIN) return { text, starts: null };
  const starts = new Int32Array(arr.length + 1);
  let at = 1;
  for (let i = 0; i < arr.length; i++) {
    starts[i] = at;
    at += parts[i].length + 1;
  }
  starts[arr.length] = text.length;
  return { text, starts };
}

/**
 * Encode `arr` from the encoding of its predecessor `pred`: runs of elements
 * identical to the predecessor's are sliced out of its text, and only the
 * elements that differ are encoded.
 */
function spliceArray(arr: readonly unknown[], pred: readonly unknown[], old: string, oldStarts: Int32Array): Encoding {
  const n = arr.length;
  const common = Math.min(n, pred.length);
  const starts = new Int32Array(n + 1);
  const parts: string[] = [];
  let at = 1;
  let i = 0;
  while (i < n) {
    if (i < common && arr[i] === pred[i]) {
      // A run of unchanged elements, sliced out with the commas between them.
      let j = i + 1;
      while (j < common && arr[j] === pred[j]) j++;
      const shift = at - oldStarts[i];
      for (let k = i; k < j; k++) starts[k] = oldStarts[k] + shift;
      const run = old.slice(oldStarts[i], oldStarts[j] - 1);
      parts.push(run);
      at += run.length + 1;
      i = j;
    } else {
      const e = encodeMember(arr[i]) ?? 'null';
      starts[i] = at;
      parts.push(e);
      at += e.length + 1;
      i++;
    }
  }
  const text = `[${parts.join(',')}]`;
  starts[n] = text.length;
  return { text, starts };
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
