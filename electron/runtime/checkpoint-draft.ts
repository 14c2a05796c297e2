/**
 * The engine's next state, built by copying only what a save can change.
 *
 * The store hands back each saved version deeply frozen and diffs the next
 * one against it by identity (store-types.ts, SaveResult): a part that is the
 * very same object is unchanged, and costs nothing to diff, validate or
 * serialise. So a save must not copy the whole checkpoint (a 10,000-step plan
 * is megabytes): it copies the top level and its containers, which a save
 * changes in place, and replaces an element of a list only when it changes
 * (`own`). Everything else stays the saved version's frozen objects, which
 * throw when written to, so a save that forgets `own` fails loudly instead of
 * changing a saved version.
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { copiedFrom, noteLineage, placesSince } from '../../shared/diff/array-lineage.js';
import { copyArray } from '../../shared/diff/frozen-arrays.js';

type Json = Record<string, unknown>;

/**
 * A draft's list while the draft is open: its own copy of a saved list, and
 * the places written to it. The draft hands out a proxy of the copy, so every
 * write is seen whatever makes it (`own`, an index assigned, `push`,
 * `splice`, a shorter `length`); closing the draft records those places
 * (array-lineage.ts), and the store then visits only them.
 */
interface OpenList {
  copy: unknown[];
  from: readonly unknown[];
  written: Set<number>;
  /** Every place from here on was dropped by a shorter `length`; Infinity when none was. */
  cutAt: number;
}

/** The open lists of drafts, by the proxy handed out. */
const openLists = new WeakMap<object, OpenList>();

/** What a write with `key` (and, for `length`, the new length) tells about the list's places. */
function noteWrite(list: OpenList, key: string | symbol, newLength: number | null): void {
  if (typeof key !== 'string') return;
  if (key === 'length') {
    if (newLength !== null && newLength < list.copy.length) list.cutAt = Math.min(list.cutAt, newLength);
    return;
  }
  const index = Number(key);
  if (Number.isInteger(index) && index >= 0 && String(index) === key) list.written.add(index);
}

/** A list of the draft: a proxy of a copy of `from` that sees every write. */
function openList(from: readonly unknown[]): unknown[] {
  const copy = copyArray(from);
  const list: OpenList = { copy, from, written: new Set(), cutAt: Infinity };
  const proxy = new Proxy(copy, {
    set(target, key, value) {
      noteWrite(list, key, key === 'length' ? Number(value) : null);
      return Reflect.set(target, key, value);
    },
    deleteProperty(target, key) {
      noteWrite(list, key, null);
      return Reflect.deleteProperty(target, key);
    },
    defineProperty(target, key, descriptor) {
      noteWrite(list, key, key === 'length' && typeof descriptor.value === 'number' ? descriptor.value : null);
      return Reflect.defineProperty(target, key, descriptor);
    },
  });
  openLists.set(proxy, list);
  return proxy;
}

/** The copy behind a draft's list, its changes recorded and the list frozen; any other value as it is. */
function closeList(value: unknown): unknown {
  const list = typeof value === 'object' && value !== null ? openLists.get(value) : undefined;
  if (list === undefined) return value;
  // The open record holds the original strongly: kept, each version's lists would keep the one before alive.
  openLists.delete(value as object);
  const changed = [...list.written];
  for (let i = list.cutAt; i < list.from.length; i++) changed.push(i);
  noteLineage(list.copy, list.from, changed);
  return Object.freeze(list.copy);
}

/**
 * A copy of `cp` that a save may change: the top level, every top-level list
 * and object (`plan`, `run`, `recovery`, ...), and the lists inside those
 * objects (`run.llm_calls`, `recovery.decisions`) are the draft's own; the
 * elements of the lists and anything deeper are shared with `cp` and frozen
 * when `cp` is. Copying a list copies pointers, not its elements. The lists
 * note where they are written until `closeDraft`, which every draft goes
 * through before it leaves the engine.
 */
export function draftOf(cp: Checkpoint): Checkpoint {
  const draft: Json = { ...(cp as unknown as Json) };
  for (const key of Object.keys(draft)) {
    const value = draft[key];
    if (Array.isArray(value)) {
      draft[key] = openList(value);
    } else if (typeof value === 'object' && value !== null) {
      const inner: Json = { ...(value as Json) };
      for (const k of Object.keys(inner)) if (Array.isArray(inner[k])) inner[k] = openList(inner[k] as unknown[]);
      draft[key] = inner;
    }
  }
  return draft as unknown as Checkpoint;
}

/**
 * End a draft's changes to its lists: each is replaced by the copy behind it,
 * frozen, with the places written to it recorded (array-lineage.ts), so the
 * store diffs, checks and encodes a long list at those places only. The
 * draft's other parts may still be set (the engine derives its counters after
 * this). Returns the draft.
 */
export function closeDraft<T>(draft: T): T {
  if (typeof draft !== 'object' || draft === null || Object.isFrozen(draft)) return draft;
  const top = draft as Json;
  for (const key of Object.keys(top)) {
    const value = top[key];
    if (Array.isArray(value)) top[key] = closeList(value);
    else if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
      const inner = value as Json;
      for (const k of Object.keys(inner)) if (Array.isArray(inner[k])) inner[k] = closeList(inner[k]);
    }
  }
  return draft;
}

/**
 * Element `index` of a draft's list, made the draft's own: replaced by a
 * shallow copy that may be changed, and returned. Its members below the top
 * stay shared (replace them, do not change them in place).
 */
export function own<T extends object>(list: T[], index: number): T {
  const element = list[index];
  if (element === undefined) throw new RangeError(`no element ${index} in a list of ${list.length}`);
  if (!Object.isFrozen(element)) return element;
  const copy = { ...element };
  list[index] = copy;
  return copy;
}

/** The element of a draft's list that `match` finds, made the draft's own (see `own`); undefined when none matches. */
export function ownWhere<T extends object>(list: T[], match: (element: T) => boolean): T | undefined {
  const index = list.findIndex(match);
  return index < 0 ? undefined : own(list, index);
}

/**
 * Close the draft (`closeDraft`), then freeze what it made new, stopping at
 * what is frozen already (the saved version's parts), so the engine's state
 * between saves is as read-only as a saved version.
 */
export function freezeDraft<T>(value: T): T {
  return freezeNew(closeDraft(value));
}

function freezeNew<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    // A closed list is frozen already, and new only where it was written or past the end of the list it copied.
    const from = copiedFrom(value)?.from;
    const places = from === undefined ? null : placesSince(value, from);
    if (places !== null) {
      for (const i of places) freezeNew(value[i] as unknown);
      return value;
    }
    if (Object.isFrozen(value)) return value;
    // Any other list of a draft is new: its elements are the saved version's (frozen) but for the few a change made,
    // so each is looked at in place, without a call.
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i];
      if (typeof member === 'object' && member !== null && !Object.isFrozen(member)) freezeNew(member);
    }
    return Object.freeze(value);
  }
  if (Object.isFrozen(value)) return value;
  for (const member of Object.values(value as Json)) freezeNew(member);
  return Object.freeze(value);
}

/**
 * A JSON copy of a value an agent hands over (an effect's request or outcome,
 * a probe's answer), so the state never holds the agent's own objects and the
 * agent never holds the state's. A value JSON cannot hold (a cycle, a BigInt)
 * is passed on as it is, for the store to refuse with its reason.
 */
export function detached<T>(value: T): T {
  if (value === undefined) return value;
  try {
    return jsonCopy(value);
  } catch {
    return value;
  }
}

/** A JSON copy of `value`; a TypeError where JSON cannot hold it (a cycle, a BigInt, a function). */
export function jsonCopy<T>(value: T): T {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError(`a ${typeof value} is not JSON`);
  return JSON.parse(text) as T;
}

/**
 * A mutable deep copy of part of the state, for handing to an agent (a stored
 * result, an effect's outcome, the task's options): what it changes is its own.
 */
export function copyForAgent<T>(value: T): T {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}
