/**
 * Deeply frozen JSON trees and their memoised encoding.
 *
 * The writer keeps the last version of each task as one deeply frozen tree
 * and builds the next version by replacing only the parts that changed, so
 * unchanged parts stay the very same objects. An object that can never change
 * has one encoding forever: it is computed once and remembered, and a
 * document is serialised from remembered fragments. A save then costs what
 * changed plus one copy of the bytes of each container holding a change, not
 * a walk of the whole document.
 *
 * Long arrays (a plan of 10,000 steps) and whatever holds them are kept as
 * UTF-8 bytes with the offset of each element, and an array that differs from
 * its predecessor (the array of the previous version it was copied from) in a
 * few elements is encoded by splicing the predecessor's bytes: a pointer
 * comparison per element and a memcpy, never a lookup or a string copy per
 * element. (Bytes rather than strings because the file needs bytes anyway, and
 * V8 copies and transcodes megabyte strings several times slower than memcpy.)
 *
 * "Sealed" means frozen by this module, with every object below it frozen and
 * plain JSON. An object someone else froze is not trusted to be either, so the
 * encoder never memoises it.
 */
import { changedSince, placesSince } from '../../shared/diff/array-lineage.js';
import { walkable } from '../../shared/diff/frozen-arrays.js';

const sealed = new WeakSet<object>();

/**
 * A sealed object's encoding: JSON text when small; UTF-8 bytes when it is,
 * or holds, a long array. Bytes are views into the buffer of the document
 * they were encoded in, so a document costs one allocation, not one per level.
 */
type Encoding =
  | { text: string; bytes: null; starts: null }
  | {
      text: null;
      bytes: Buffer;
      /**
       * For long arrays: the byte offset of each element, plus one entry
       * (bytes.length) past the last, so element i spans
       * [starts[i], starts[i + 1] - 1) (the byte before the next start is a
       * comma, or the closing bracket).
       */
      starts: Int32Array | null;
    };

const encodings = new WeakMap<object, Encoding>();
/**
 * A sealed array -> the sealed array of the previous version it was derived
 * from, until it is encoded. Were links kept after that, each version would
 * keep the one before it alive, and with it that version's encoding.
 */
const predecessors = new WeakMap<object, unknown[]>();

/** Arrays at least this long are kept as bytes with element offsets, so a successor can splice them. */
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
    // A copy of the previous version's array that recorded its changes (array-lineage.ts) has new members only
    // there and past the previous one's end; the lineage is trusted once the array is frozen, so freeze first.
    const places = Array.isArray(prev) ? placesSince(Object.freeze(value), prev) : null;
    if (places !== null) {
      const p = prev as unknown[];
      for (const i of places) sealJson(value[i], p[i]);
    } else {
      const p = Array.isArray(prev) ? walkable(prev as unknown[]) : null;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (p !== null && i < p.length && v === p[i]) continue;
        sealJson(v, p?.[i]);
      }
    }
    if (Array.isArray(prev)) predecessors.set(value, prev as unknown[]);
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
 * The UTF-8 bytes of `JSON.stringify(value)`, reusing the remembered encoding
 * of every sealed object in it.
 *
 * Values that are not sealed are handed to JSON.stringify as they are, so the
 * result is always what JSON.stringify gives. Throws a TypeError for a value
 * JSON cannot represent at the top (undefined, a function).
 *
 * With an `arena`, a large document is written into one of the arena's two
 * buffers instead of a new one: the result is valid until the arena is used
 * twice more.
 */
export function encodeJson(value: unknown, arena?: EncodeArena): Buffer {
  if (typeof value !== 'object' || value === null || !sealed.has(value)) {
    const text = JSON.stringify(value) as string | undefined;
    if (text === undefined) throw new TypeError(`${typeof value} has no JSON encoding`);
    return utf8(text);
  }
  const text = smallText(value);
  if (text !== null) return utf8(text);
  const out = new Emitter();
  emit(value, out);
  return out.finish(arena);
}

/**
 * Two buffers that one writer encodes its documents into, in turn.
 *
 * A save encodes the next version from the bytes of the previous one, which
 * sit in the other buffer; allocating a fresh multi-megabyte buffer per save
 * instead would make V8 run a full garbage collection every few dozen saves
 * (it counts external memory), costing more than the encoding. Encodings that
 * point into a buffer are forgotten when the buffer is reused.
 */
export class EncodeArena {
  private readonly slots: { buf: Buffer | null; owners: object[] }[] = [
    { buf: null, owners: [] },
    { buf: null, owners: [] },
  ];
  private turn = 0;

  /** Documents smaller than this get a buffer of their own: for them an arena would only hold memory. */
  static readonly MIN_BYTES = 64 * 1024;

  /**
   * A buffer of at least `size` bytes, or null below MIN_BYTES; `owners` collects whose encodings point into it.
   *
   * `sources` are the bytes the document is about to be copied from. One of them may lie in the buffer this
   * turn would reuse: an object that the document before last held, the last one did not, and this one holds
   * again still has its encoding there. Writing over it would copy the buffer onto itself, so the turn then
   * gets a fresh buffer, and the old one lives on as long as something still points into it.
   */
  take(size: number, sources: readonly Buffer[] = []): { buf: Buffer; owners: object[] } | null {
    if (size < EncodeArena.MIN_BYTES) return null;
    const slot = this.slots[this.turn];
    this.turn ^= 1;
    for (const o of slot.owners) encodings.delete(o);
    slot.owners = [];
    const reused = slot.buf?.buffer;
    const readFrom = reused !== undefined && sources.some((b) => b.buffer === reused);
    // Headroom, so a growing document does not reallocate on every save.
    if (!slot.buf || slot.buf.length < size || readFrom) slot.buf = Buffer.allocUnsafe(Math.ceil(size * 1.25));
    return slot as { buf: Buffer; owners: object[] };
  }
}

/**
 * Collects a document as byte pieces (views of remembered encodings) and
 * text, then copies them into one buffer; containers encoded on the way get
 * views of it as their remembered encoding.
 */
class Emitter {
  private readonly pieces: Buffer[] = [];
  private pending: string[] = [];
  private pendingBytes = 0;
  private at = 0;
  private readonly views: { obj: object; from: number; to: number; starts: Int32Array | null }[] = [];

  /** Byte offset of the next byte. */
  get position(): number {
    return this.at + this.pendingBytes;
  }

  text(s: string): void {
    this.pending.push(s);
    this.pendingBytes += Buffer.byteLength(s);
  }

  bytes(b: Buffer): void {
    this.flush();
    this.pieces.push(b);
    this.at += b.length;
  }

  /** Remember `obj`'s encoding as bytes [from, position) of the finished buffer. */
  view(obj: object, from: number, starts: Int32Array | null): void {
    this.views.push({ obj, from, to: this.position, starts });
  }

  finish(arena?: EncodeArena): Buffer {
    this.flush();
    const slot = arena?.take(this.at, this.pieces) ?? null;
    const buf = slot ? slot.buf.subarray(0, this.at) : Buffer.allocUnsafe(this.at);
    let at = 0;
    for (const p of this.pieces) {
      buf.set(p, at);
      at += p.length;
    }
    for (const v of this.views) {
      encodings.set(v.obj, { text: null, bytes: buf.subarray(v.from, v.to), starts: v.starts });
      slot?.owners.push(v.obj);
    }
    return buf;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const b = utf8(this.pending.join(''));
    this.pieces.push(b);
    this.at += b.length;
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/**
 * The JSON text of a sealed object that holds no long array (remembered), or
 * null for one that does, which is emitted as bytes instead.
 */
function smallText(obj: object): string | null {
  const hit = encodings.get(obj);
  if (hit !== undefined) return hit.text;
  if (Array.isArray(obj) && obj.length >= SPLICE_MIN) return null;
  const parts: string[] = [];
  if (Array.isArray(obj)) {
    for (const v of obj) {
      const e = memberText(v);
      if (e === null) return null;
      parts.push(e ?? 'null');
    }
  } else {
    const o = obj as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const e = memberText(o[k]);
      if (e === null) return null;
      if (e !== undefined) parts.push(`${JSON.stringify(k)}:${e}`);
    }
  }
  const text = Array.isArray(obj) ? `[${parts.join(',')}]` : `{${parts.join(',')}}`;
  encodings.set(obj, { text, bytes: null, starts: null });
  return text;
}

/** A member's JSON text; undefined where JSON.stringify leaves it out; null for a member emitted as bytes. */
function memberText(v: unknown): string | null | undefined {
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
      return sealed.has(v) ? smallText(v) : JSON.stringify(v);
    default:
      // undefined, functions and symbols give undefined; a BigInt throws, as it would in JSON.stringify.
      return JSON.stringify(v) as string | undefined;
  }
}

/** Emit one member: its text, or (for a sealed object holding a long array) its bytes. */
function emitMember(v: unknown, out: Emitter, inArray: boolean): void {
  const t = memberText(v);
  if (t === null) emit(v as object, out);
  else out.text(t ?? (inArray ? 'null' : ''));
}

/** Emit a sealed object that holds a long array (or is one), remembering its bytes. */
function emit(obj: object, out: Emitter): void {
  const hit = encodings.get(obj);
  const from = out.position;
  if (hit !== undefined) {
    if (hit.text !== null) {
      out.text(hit.text);
    } else {
      out.bytes(hit.bytes);
      // From now on the object's bytes are the copy in the new document, whose buffer outlives the old one.
      out.view(obj, from, hit.starts);
    }
    return;
  }
  if (Array.isArray(obj) && obj.length >= SPLICE_MIN) {
    const pred = predecessors.get(obj);
    // Once encoded, the array no longer needs its predecessor: dropping the link keeps old versions collectable.
    if (pred !== undefined) predecessors.delete(obj);
    const predEnc = pred === undefined ? undefined : encodings.get(pred);
    const starts = pred !== undefined && predEnc?.starts ? spliceArray(obj, pred, predEnc.bytes, predEnc.starts, out) : emitArray(obj, out);
    out.view(obj, from, starts);
    return;
  }
  if (Array.isArray(obj)) {
    out.text('[');
    obj.forEach((v, i) => {
      if (i > 0) out.text(',');
      emitMember(v, out, true);
    });
    out.text(']');
  } else {
    const o = obj as Record<string, unknown>;
    out.text('{');
    let first = true;
    for (const k of Object.keys(o)) {
      const v = o[k];
      // Members JSON leaves out (undefined, functions, symbols) are skipped with their key.
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      out.text(`${first ? '' : ','}${JSON.stringify(k)}:`);
      first = false;
      emitMember(v, out, false);
    }
    out.text('}');
  }
  out.view(obj, from, null);
}

/** Emit a long array element by element; returns its element offsets. */
function emitArray(array: readonly unknown[], out: Emitter): Int32Array {
  const arr = walkable(array);
  const from = out.position;
  const starts = new Int32Array(arr.length + 1);
  out.text('[');
  for (let i = 0; i < arr.length; i++) {
    if (i > 0) out.text(',');
    starts[i] = out.position - from;
    emitMember(arr[i], out, true);
  }
  out.text(']');
  starts[arr.length] = out.position - from;
  return starts;
}

/**
 * Emit `arr` from the bytes of its predecessor `pred`: runs of elements
 * identical to the predecessor's are copied from its bytes, and only the
 * elements that differ are encoded. Returns the element offsets.
 */
function spliceArray(
  array: readonly unknown[],
  predecessor: readonly unknown[],
  old: Buffer,
  oldStarts: Int32Array,
  out: Emitter,
): Int32Array {
  // A copy that recorded its changes (array-lineage.ts) is the predecessor but at those places: the runs between
  // them are found without comparing every element.
  const changed = changedSince(array, predecessor);
  const arr = changed === null ? walkable(array) : array;
  const pred = changed === null ? walkable(predecessor) : predecessor;
  const from = out.position;
  const n = arr.length;
  const common = Math.min(n, pred.length);
  const starts = new Int32Array(n + 1);
  // Where the run of unchanged elements starting at i ends (exclusive).
  let next = 0;
  const runEnd =
    changed === null
      ? (i: number) => {
          let j = i + 1;
          while (j < common && arr[j] === pred[j]) j++;
          return j;
        }
      : (i: number) => {
          while (next < changed.length && changed[next] <= i) next++;
          return next < changed.length ? changed[next] : common;
        };
  out.text('[');
  let i = 0;
  while (i < n) {
    if (i > 0) out.text(',');
    const at = out.position - from;
    if (i < common && arr[i] === pred[i]) {
      // A run of unchanged elements, copied with the commas between them.
      const j = runEnd(i);
      const shift = at - oldStarts[i];
      for (let k = i; k < j; k++) starts[k] = oldStarts[k] + shift;
      out.bytes(old.subarray(oldStarts[i], oldStarts[j] - 1));
      i = j;
    } else {
      starts[i] = at;
      emitMember(arr[i], out, true);
      i++;
    }
  }
  out.text(']');
  starts[n] = out.position - from;
  return starts;
}

/** UTF-8 bytes of a string; ASCII (every byte count equal to the length) takes the fast one-byte copy. */
function utf8(text: string): Buffer {
  return Buffer.byteLength(text) === text.length ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
}
