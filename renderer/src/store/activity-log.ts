/**
 * A task's live activity as a timeline: each entry once, in the order things
 * happened, however they arrived.
 *
 * The entries come by different roads: a runner's output the moment it is
 * printed, the task's own event log once the watcher has seen it (a moment
 * later, several saves in one batch, each line with the time it was written),
 * and the host's word of a new version (once a batch, for its newest version
 * only). Appended as they arrived, a step's log line written before the
 * runner's output listed under it, with an earlier time, and the versions a
 * batch passed over were never listed at all.
 */
import type { ActivityEntry } from './store-types.js';

/** How many entries a task keeps: the newest. */
export const ACTIVITY_LIMIT = 200;

const timeOf = (at: string): number => {
  const t = Date.parse(at);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
};

/**
 * `entries` with `entry` in its place by time (after every entry of the same
 * time or earlier, so what came together keeps its order), or `entries`
 * itself when an entry of the same key is there already.
 */
export function withActivity(entries: readonly ActivityEntry[], entry: ActivityEntry): readonly ActivityEntry[] {
  if (entries.some((e) => e.key === entry.key)) return entries;
  const at = timeOf(entry.at);
  let i = entries.length;
  while (i > 0 && timeOf(entries[i - 1].at) > at) i--;
  const next = [...entries.slice(0, i), entry, ...entries.slice(i)];
  return next.length > ACTIVITY_LIMIT ? next.slice(-ACTIVITY_LIMIT) : next;
}
