/**
 * What an array was copied from, and which of its places changed since.
 *
 * A save builds the next checkpoint from the last by copying its long lists
 * (a plan of 10,000 steps, the log of every model call) and replacing a few
 * elements. Comparing the copy with the original, element by element, finds
 * those few, but costs a pass over the whole list, and a save makes several
 * (diff, validation of depth, sealing, encoding, freezing), so late in a long
 * task a save cost what the task weighs rather than what it changed. Whoever
 * makes such a copy knows what it changed: it records that here, and the
 * passes visit only those places.
 *
 * A record says: at every index below both lengths that is not listed, the
 * copy holds the very element the original holds at that index. Past the
 * original's length everything is new, and callers treat the tail as they
 * always did. Records are trusted only once the copy is frozen, so nothing can
 * change it behind its record; whoever records promises that no write it did
 * not list happens before the freeze.
 *
 * A record holds its originals, so it must not hold them for ever: were each
 * copy to keep the one it was made from, and that one its own, every earlier
 * version of a list would stay in memory. (A WeakRef would not help: its
 * target lives until the running job ends, and a runtime whose writes never
 * wait for I/O saves thousands of versions in one job.) So a copy made from a
 * copy takes over its original's record, folded into its own, up to
 * MAX_GENERATIONS back, and the original's record is dropped: only the
 * newest copy of a list answers for the generations before it. The passes of
 * one save all ask about the newest copy, so nothing they need is lost.
 *
 * Pure: no Node, no DOM.
 */

interface Ancestor {
  list: readonly unknown[];
  /** Indices that may differ from this ancestor, ascending, without repeats, each below both lengths. */
  changed: readonly number[];
  /** The shortest length of the lists from the copy back to (not including) this ancestor. */
  shortest: number;
}

/** A copy's ancestors, the nearest first. */
const records = new WeakMap<readonly unknown[], Ancestor[]>();

/** How many generations back a copy answers for. A save asks about at most three (a draft, its copies). */
const MAX_GENERATIONS = 4;

/**
 * Record that `copy` was made from `from` and differs from it only at
 * `changed` (any order, repeats allowed; indices past either length are
 * dropped, as the tail is compared by length). `from`'s own record moves to
 * `copy` (see the module comment).
 */
export function noteLineage(copy: readonly unknown[], from: readonly unknown[], changed: Iterable<number>): void {
  const own = sortedBelow(changed, Math.min(copy.length, from.length));
  const ancestors: Ancestor[] = [{ list: from, changed: own, shortest: copy.length }];
  for (const older of records.get(from) ?? []) {
    if (ancestors.length >= MAX_GENERATIONS) break;
    const shortest = Math.min(copy.length, from.length, older.shortest);
    // Past the shortest list between them, a place may have been dropped and filled again: count it as changed.
    const common = Math.min(copy.length, older.list.length);
    const union = new Set(older.changed);
    for (const i of own) union.add(i);
    for (let i = shortest; i < common; i++) union.add(i);
    ancestors.push({ list: older.list, changed: sortedBelow(union, common), shortest });
  }
  records.delete(from);
  records.set(copy, ancestors);
}

/**
 * The indices below both lengths at which `array` may differ from `from`,
 * ascending, when `array` is a frozen copy (or a copy of copies) of it whose
 * changes were recorded; null when that is not known, and the caller must
 * compare element by element.
 */
export function changedSince(array: readonly unknown[], from: readonly unknown[]): readonly number[] | null {
  if (array === from) return [];
  if (!Object.isFrozen(array)) return null;
  const ancestors = records.get(array);
  if (ancestors === undefined) return null;
  for (const a of ancestors) if (a.list === from) return a.changed;
  return null;
}

/**
 * Every place of `array` that may hold something `from` does not: the places
 * changedSince lists, then each index past `from`'s end. What a pass that
 * visits only new elements (sealing, the depth check, the scrub, freezing)
 * walks; null when that is not known.
 */
export function placesSince(array: readonly unknown[], from: readonly unknown[]): readonly number[] | null {
  const changed = changedSince(array, from);
  if (changed === null || array.length <= from.length) return changed;
  const places = [...changed];
  for (let i = from.length; i < array.length; i++) places.push(i);
  return places;
}

/**
 * What a frozen array was recorded as a copy of (its nearest original), and
 * where it changed; null when nothing was recorded.
 */
export function copiedFrom(array: readonly unknown[]): { from: readonly unknown[]; changed: readonly number[] } | null {
  if (!Object.isFrozen(array)) return null;
  const nearest = records.get(array)?.[0];
  return nearest === undefined ? null : { from: nearest.list, changed: nearest.changed };
}

function sortedBelow(indices: Iterable<number>, end: number): number[] {
  const kept = new Set<number>();
  for (const i of indices) if (i < end) kept.add(i);
  return [...kept].sort((x, y) => x - y);
}
