/**
 * A step's result as a command reads it: from its blob (native tasks), from
 * the plan itself (legacy tasks keep small results inline), or nothing yet.
 * A blob that cannot be read is reported, never taken for "no result".
 */
import type { Checkpoint, PlanStep } from '../../shared/checkpoint/schema.js';
import { TaskReadError, type CheckpointSource } from '../store/store-types.js';

/** What a step holds as its result. */
export type StepResult = { state: 'none' } | { state: 'value'; value: unknown } | { state: 'unreadable'; message: string };

/** Read one step's result. */
export async function readStepResult(source: CheckpointSource, taskId: string, step: PlanStep): Promise<StepResult> {
  if (step.result_ref) {
    try {
      return { state: 'value', value: await source.readBlob(taskId, step.result_ref) };
    } catch (err) {
      if (err instanceof TaskReadError) return { state: 'unreadable', message: err.message };
      throw err;
    }
  }
  if (step.result !== undefined) return { state: 'value', value: step.result };
  return { state: 'none' };
}

/** Blob reads in flight at once for a whole plan: enough to overlap the disk, few enough for any file-descriptor limit. */
const READS_AT_ONCE = 16;

/** Every step's result of a checkpoint, by step id, read a few at a time. */
export async function readPlanResults(source: CheckpointSource, cp: Checkpoint): Promise<Map<string, StepResult>> {
  const out = new Map<string, StepResult>();
  let next = 0;
  const worker = async () => {
    while (next < cp.plan.length) {
      const step = cp.plan[next++];
      out.set(step.id, await readStepResult(source, cp.task_id, step));
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, cp.plan.length) }, worker));
  return out;
}
