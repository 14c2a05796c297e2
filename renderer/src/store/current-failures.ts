/**
 * Failures a checkpoint shows but its error log may not hold yet: a step that
 * failed records its error on the step, and the log gets an entry only once a
 * runtime or a person writes one. The Errors tab shows both.
 *
 * The log keeps every error of every attempt; one that a later attempt got past
 * is history, not a failure standing now, and is not shown as one.
 */
import type { Checkpoint, RecordedError } from '../../../shared/checkpoint/schema.js';

export interface CurrentFailure {
  step_id: string;
  step_name: string;
  kind: string | null;
  message: string;
  at: string | null;
}

/** The failed steps whose error the log does not already record (same step, same message). */
export function currentFailures(cp: Checkpoint): CurrentFailure[] {
  return cp.plan
    .filter((s) => s.status === 'failed' && s.error)
    .filter((s) => !cp.errors.some((e) => e.step_id === s.id && e.what.includes(s.error!.message)))
    .map((s) => ({
      step_id: s.id,
      step_name: s.name || s.id,
      kind: s.error!.kind ?? null,
      message: s.error!.message,
      at: s.finished_at ?? null,
    }));
}

/**
 * Whether a recorded error is behind the task: a fix was recorded for it, the
 * step it names has since finished, or the whole task is done.
 */
export function isRecovered(cp: Checkpoint, e: RecordedError): boolean {
  if (cp.status === 'done' || e.fix) return true;
  const step = e.step_id ? cp.plan.find((s) => s.id === e.step_id) : undefined;
  return step !== undefined && (step.status === 'done' || step.status === 'skipped');
}

/** Whether anything in the Errors tab stands now: a failed step, or a recorded error no later attempt got past. */
export function hasStandingErrors(cp: Checkpoint): boolean {
  return currentFailures(cp).length > 0 || cp.errors.some((e) => !isRecovered(cp, e));
}
