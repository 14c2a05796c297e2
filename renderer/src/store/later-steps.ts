/**
 * What going back from a step touches, as the plan shows it before anything
 * is sent: which steps an edit of a result sets back to pending when the
 * person chooses to rerun the steps after it, and whether a rerun from a step
 * has anything to rerun. The runtime applies the same rules when it writes
 * (editStepResult, planRewind) and refuses what they refuse.
 */
import type { Checkpoint, PlanStep } from '../../../shared/checkpoint/schema.js';

/** The steps after `stepId` that an edit with "rerun the later steps" sets back to pending: those that ran. */
export function stepsAnEditReruns(cp: Pick<Checkpoint, 'plan'>, stepId: string): PlanStep[] {
  const index = cp.plan.findIndex((s) => s.id === stepId);
  if (index < 0) return [];
  return cp.plan.slice(index + 1).filter((s) => s.status === 'done' || s.status === 'failed' || s.status === 'running');
}

/** Whether a rerun from `stepId` has something to rerun: the step, or one after it, has run. */
export function canRerunFrom(cp: Pick<Checkpoint, 'plan' | 'status'>, stepId: string): boolean {
  if (cp.status === 'halted') return false;
  const index = cp.plan.findIndex((s) => s.id === stepId);
  return index >= 0 && cp.plan.slice(index).some((s) => s.status !== 'pending');
}
