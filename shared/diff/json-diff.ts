/**
 * Structured diff of JSON values.
 *
 * Used by the store for version deltas and by the UI and CLI to show what
 * changed between two checkpoints. Arrays are compared index by index: the
 * checkpoints Waystation diffs grow at the end and change in place (plan
 * steps, effects, llm calls), which index diffs describe in the fewest ops.
 *
 * Pure: no Node, no DOM.
 */
import { ServiceError } from '../api/error-codes.js';
import { changedSince, noteLineage } from './array-lineage.js';
import { copyArray, walkable } from './frozen-arrays.js';

/** A path into a JSON value: object keys and array indices. */
export type DiffPath = (string | number)[];

/** One change. `old` holds the value before a remove or replace, so a UI can show both sides. */
export interface DiffOp {
  op: 'add' | 'remove' | 'replace';
  path: DiffPath;
  value?: unknown;
  old?: unknown;
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Compute the ops that turn `a` into `b`.
 *
 * Ops are applied in order. Array shrinks are emitted as removals from the
 * highest index down, so each removal leaves the indices of the next one
 * valid. The ops reference sub-values of `a` and `b` rather than copies:
 * serialise them or treat them as immutable.
 *
 * Identity means unchanged, at every level: a sub-value of `b` that is the
 * very object at the same place in `a` is skipped without being read. So
 * when `b` was built from `a` by immutable updates (copying only the path to
 * each change), diffing a 10,000-entry plan with one entry changed costs
 * 10,000 pointer comparisons and a walk of that entry.
 */
export function computeDiff(a: unknown, b: unknown): DiffOp[] {
  const ops: DiffOp[] = [];
  diffInto(a, b, [], ops);
  return ops;
}

// `path` is a shared stack, copied only when an op is emitted: most nodes of a
// large checkpoint are unchanged and never need a path of their own.
function diffInto(a: unknown, b: unknown, path: DiffPath, ops: DiffOp[]): void {
  if (a === b) return;
  if (Array.isArray(a) && Array.isArray(b)) {
    const common = Math.min(a.length, b.length);
    // A copy of `a` that recorded its changes (array-lineage.ts) is compared at those places only.
    const changed = changedSince(b, a);
    if (changed !== null) {
      for (const i of changed) {
        if (a[i] !== b[i]) {
          path.push(i);
          diffInto(a[i], b[i], path, ops);
          path.pop();
        }
      }
    } else {
      const xs = walkable(a);
      const ys = walkable(b);
      for (let i = 0; i < common; i++) {
        const x = xs[i];
        const y = ys[i];
        if (x !== y) {
          path.push(i);
          diffInto(x, y, path, ops);
          path.pop();
        }
      }
    }
    for (let i = a.length - 1; i >= b.length; i--) ops.push({ op: 'remove', path: [...path, i], old: a[i] });
    for (let i = a.length; i < b.length; i++) ops.push({ op: 'add', path: [...path, i], value: b[i] });
    return;
  }
  if (isObject(a) && isObject(b)) {
    // A member whose value is undefined has no JSON form: it counts as absent, as JSON.stringify has it.
    let shared = 0;
    for (const key of Object.keys(a)) {
      const x = a[key];
      if (x === undefined) continue;
      const y = hasOwn.call(b, key) ? b[key] : undefined;
      if (y === undefined) {
        ops.push({ op: 'remove', path: [...path, key], old: x });
        continue;
      }
      shared++;
      if (x !== y) {
        path.push(key);
        diffInto(x, y, path, ops);
        path.pop();
      }
    }
    const keysB = Object.keys(b);
    // Every key of b was already matched: nothing was added (the common case for large unchanged objects).
    if (keysB.length === shared) return;
    for (const key of keysB) {
      const y = b[key];
      if (y !== undefined && (!hasOwn.call(a, key) || a[key] === undefined)) ops.push({ op: 'add', path: [...path, key], value: y });
    }
    return;
  }
  // Different kinds (object vs array vs primitive) or different primitives.
  ops.push({ op: 'replace', path: path.slice(), value: b, old: a });
}

/** Raised when ops do not fit the value they are applied to (a wrong base version). */
export class DiffApplyError extends ServiceError {
  /** The version the ops were meant for cannot be rebuilt: a read failure. */
  readonly code = 'read';
  constructor(
    readonly op: DiffOp,
    reason: string,
  ) {
    super(`cannot apply ${op.op} at /${op.path.join('/')}: ${reason}`);
  }
}

/**
 * Apply ops to `a` and return the result; `a` is never modified.
 *
 * Containers on the path of an op are copied once per call; everything else
 * is shared with `a` (and with the op values), so treat the result as
 * immutable or clone it before mutating. Throws DiffApplyError when an op
 * does not fit, which means the ops were computed against another base.
 *
 * With `recordLineage`, each array copied is recorded as a copy of the array
 * of `a` it was made from, changed at the places the ops wrote
 * (array-lineage.ts), so that diffing, sealing and encoding the result visit
 * only those. Only for a caller that freezes the result before anything else
 * can write to it.
 */
export function applyDiff(a: unknown, ops: readonly DiffOp[], recordLineage = false): unknown {
  let root = a;
  // Containers created by this call, safe to mutate without copying again; for arrays, what each was copied
  // from and where it was written (null once an insertion or a removal short of the end shifted its elements).
  const fresh = new WeakSet<object>();
  const copies = new Map<unknown[], { from: unknown[]; written: number[] | null }>();
  const own = <T extends object>(v: T): T => {
    if (fresh.has(v)) return v;
    const copy = (Array.isArray(v) ? copyArray(v) : copyObject(v as JsonObject)) as T;
    fresh.add(copy);
    if (recordLineage && Array.isArray(v)) copies.set(copy as unknown[], { from: v, written: [] });
    return copy;
  };
  const wrote = (array: unknown[], index: number, shifts: boolean) => {
    const entry = copies.get(array);
    if (entry === undefined || entry.written === null) return;
    if (shifts) entry.written = null;
    else entry.written.push(index);
  };

  for (const op of ops) {
    if (op.path.length === 0) {
      if (op.op === 'remove') throw new DiffApplyError(op, 'the root cannot be removed');
      root = op.value;
      continue;
    }
    if (typeof root !== 'object' || root === null) throw new DiffApplyError(op, 'the value is not a container');
    root = own(root);
    let parent = root as JsonObject | unknown[];
    for (let i = 0; i < op.path.length - 1; i++) {
      const key = op.path[i];
      const child = getChild(parent, key);
      if (typeof child !== 'object' || child === null) throw new DiffApplyError(op, `no container at segment ${i}`);
      const copy = own(child);
      setChild(parent, key, copy);
      if (Array.isArray(parent)) wrote(parent, key as number, false);
      parent = copy as JsonObject | unknown[];
    }
    const last = op.path[op.path.length - 1];
    if (Array.isArray(parent)) {
      if (typeof last !== 'number' || !Number.isInteger(last) || last < 0) throw new DiffApplyError(op, 'array index expected');
      if (op.op === 'add') {
        if (last > parent.length) throw new DiffApplyError(op, `index ${last} past the end (${parent.length})`);
        // Appending leaves every earlier place as it was; an insertion before the end moves them all.
        wrote(parent, last, last < parent.length);
        parent.splice(last, 0, op.value);
      } else if (op.op === 'remove') {
        if (last >= parent.length) throw new DiffApplyError(op, `index ${last} past the end (${parent.length})`);
        wrote(parent, last, last < parent.length - 1);
        parent.splice(last, 1);
      } else {
        if (last >= parent.length) throw new DiffApplyError(op, `index ${last} past the end (${parent.length})`);
        wrote(parent, last, false);
        parent[last] = op.value;
      }
    } else {
      const key = String(last);
      if (op.op === 'remove') {
        if (!hasOwn.call(parent, key)) throw new DiffApplyError(op, `no key ${JSON.stringify(key)}`);
        delete parent[key];
      } else {
        setChild(parent, key, op.value);
      }
    }
  }
  for (const [copy, { from, written }] of copies) if (written !== null) noteLineage(copy, from, written);
  return root;
}

function getChild(parent: JsonObject | unknown[], key: string | number): unknown {
  if (Array.isArray(parent)) return typeof key === 'number' ? parent[key] : undefined;
  return hasOwn.call(parent, key) ? parent[key as string] : undefined;
}

function setChild(parent: JsonObject | unknown[], key: string | number, value: unknown): void {
  if (Array.isArray(parent)) {
    parent[key as number] = value;
  } else if (key === '__proto__') {
    // JSON.parse makes "__proto__" an own key; plain assignment would set the prototype instead.
    Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    parent[key] = value;
  }
}

function copyObject(v: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(v)) setChild(out, key, v[key]);
  return out;
}
