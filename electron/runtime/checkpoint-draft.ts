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
import { copyArray } from '../../shared/diff/frozen-arrays.js';

type Json = Record<string, unknown>;

/**
 * A copy of `cp` that a save may change: the top level, every top-level list
 * and object (`plan`, `run`, `recovery`, ...), and the lists inside those
 * objects (`run.llm_calls`, `recovery.decisions`) are the draft's own; the
 * elements of the lists and anything deeper are shared with `cp` and frozen
 * when `cp` is. Copying a list copies pointers, not its elements.
 */
export function draftOf(cp: Checkpoint): Checkpoint {
  const draft: Json = { ...(cp as unknown as Json) };
  for (const key of Object.keys(draft)) {
    const value = draft[key];
    if (Array.isArray(value)) {
      draft[key] = copyArray(value);
    } else if (typeof value === 'object' && value !== null) {
      const inner: Json = { ...(value as Json) };
      for (const k of Object.keys(inner)) if (Array.isArray(inner[k])) inner[k] = copyArray(inner[k] as unknown[]);
      draft[key] = inner;
    }
  }
  return draft as unknown as Checkpoint;
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
 * Freeze what a draft made new, stopping at what is frozen already (the
 * saved version's parts), so the engine's state between saves is as
 * read-only as a saved version.
 */
export function freezeDraft<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    // A draft's list is its own copy of a saved list: its elements are the saved version's (frozen) but for the
    // few a change made, so each is looked at in place, without a call or a copy of the list.
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i];
      if (typeof member === 'object' && member !== null && !Object.isFrozen(member)) freezeDraft(member);
    }
  } else {
    for (const member of Object.values(value as Json)) freezeDraft(member);
  }
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
    return JSON.parse(JSON.stringify(value)) as T;
  } catch {
    return value;
  }
}

/**
 * A mutable deep copy of part of the state, for handing to an agent (a stored
 * result, an effect's outcome, the task's options): what it changes is its own.
 */
export function copyForAgent<T>(value: T): T {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}
