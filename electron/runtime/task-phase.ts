/**
 * The phases the runtime itself sets: `start` when a task is created, `done`
 * when it finishes, and the phase of a task whose steps are set back to
 * pending to run again (a rewind, an edit that reruns the steps after it, a
 * resume that reruns the steps of drifted artifacts); the agent names the
 * others (`ctx.phase`).
 *
 * Set back, a finished task is no longer `done`: it stands where the first of
 * the rerun steps ran, so it takes the phase of the version that recorded that
 * step done (a step's result is saved with its end, before the agent names
 * the next phase). The version is found by what it holds, not by its time: a
 * step, its save and the next phase's save can share a millisecond. An agent
 * that never names a phase is in `start` until it is done, and so is a task
 * whose history does not reach back to that run of the step (a fork's steps
 * ran in its parent).
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
 * A few versions read, however long the history (halving it); a version that
 * cannot be read is not a reason to refuse the operation, and leaves `start`.
 */
export async function rerunPhase(store: CheckpointStore, cp: Checkpoint, fromIndex: number): Promise<string> {
  // The first of the rerun steps to have started: the rerun takes the task back to where it ran.
  let first = -1;
  let firstAt = Infinity;
  for (let i = fromIndex; i < cp.plan.length; i++) {
    const started = cp.plan[i].started_at;
    const t = started ? parseTimestamp(started) : NaN;
    if (t < firstAt) [first, firstAt] = [i, t];
  }
  if (first < 0) return START_PHASE;
  const step = cp.plan[first];
  // Not done (failed, or cut off while running): the task is still in the phase that step stopped in.
  if (step.status !== 'done') return asRerun(cp.phase);
  // This run of the step, done: from the version that recorded it on, every version holds it so.
  const holdsItDone = (v: Checkpoint) => v.plan[first]?.status === 'done' && v.plan[first].started_at === step.started_at;
  try {
    let low = 1;
    let high = cp.version;
    let found: Checkpoint = cp;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      const v = await store.readVersion(cp.task_id, mid);
      if (holdsItDone(v)) {
        high = mid;
        found = v;
      } else low = mid + 1;
    }
    // The task's first version holding it done: the step ran before this task began (a fork's, in its parent).
    if (low === 1) return START_PHASE;
    return asRerun(found.version === low ? found.phase : (await store.readVersion(cp.task_id, low)).phase);
  } catch (err) {
    if (err instanceof TaskReadError) return START_PHASE;
    throw err;
  }
}

/** A step rerun after the task was done (by a build that left the phase at done) ran in no phase of its agent's. */
function asRerun(phase: string): string {
  return phase === DONE_PHASE ? START_PHASE : phase;
}
