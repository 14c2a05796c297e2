/**
 * The phases the runtime itself sets: `start` when a task is created, `done`
 * when it finishes, and the phase of a task whose steps are set back to
 * pending to run again (a rewind, an edit that reruns the steps after it, a
 * resume that reruns the steps of drifted artifacts); the agent names the
 * others (`ctx.phase`).
 *
 * Set back, a finished task is no longer `done`: it stands where the first of
 * the rerun steps started, so it takes the phase it was in then, which its
 * history holds (that of the newest version saved no later than that start).
 * An agent that never names a phase is in `start` until it is done, and so is
 * a task whose history does not reach back that far (a fork's steps ran in its
 * parent).
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { parseTimestamp } from '../../shared/checkpoint/timestamp.js';
import { TaskReadError, type CheckpointStore } from '../store/store-types.js';

/** The phase a task is created in, before its agent names one. */
export const START_PHASE = 'start';
/** The phase a task is in once every step is done or skipped. */
export const DONE_PHASE = 'done';

/**
 * The phase task `cp` stands in once its steps from `fromIndex` on are set back to pending.
 *
 * Read from the task's history list and one earlier version; a version that
 * cannot be read is not a reason to refuse the operation, and leaves `start`.
 */
export async function rerunPhase(store: CheckpointStore, cp: Checkpoint, fromIndex: number): Promise<string> {
  const starts = cp.plan
    .slice(fromIndex)
    .map((s) => (s.started_at ? parseTimestamp(s.started_at) : NaN))
    .filter((t) => Number.isFinite(t));
  if (starts.length === 0) return START_PHASE;
  // The first of them to start: the rerun takes the task back to before it.
  let startedAt = starts[0];
  for (const t of starts) if (t < startedAt) startedAt = t;
  try {
    let before = 0;
    for (const v of await store.history(cp.task_id)) {
      if (v.version <= cp.version && v.version > before && parseTimestamp(v.updated_at) <= startedAt) before = v.version;
    }
    if (before === 0) return START_PHASE;
    const phase = before === cp.version ? cp.phase : (await store.readVersion(cp.task_id, before)).phase;
    // A step rerun after the task was done (by a build that left the phase at done) ran in no phase of its agent's.
    return phase === DONE_PHASE ? START_PHASE : phase;
  } catch (err) {
    if (err instanceof TaskReadError) return START_PHASE;
    throw err;
  }
}
