/**
 * Failures a checkpoint shows but its error log may not hold yet: a step that
 * failed records its error on the step, and the log gets an entry only once a
 * runtime or a person writes one. The Errors tab shows both.
 */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';

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
