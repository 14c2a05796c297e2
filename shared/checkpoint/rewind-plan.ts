/**
 * What a rewind (rerun from a step) would do, shown to a person before
 * anything is written: the steps that rerun, the artifacts they write again,
 * and each effect those steps recorded with its choice (docs/RUNTIME.md,
 * "Time travel").
 */
import { z } from 'zod';
import { EffectStatus } from './schema.js';

export const RewindEffect = z.object({
  id: z.string(),
  type: z.string(),
  idempotency_key: z.string(),
  step_id: z.string(),
  status: EffectStatus,
  /** keep: not performed again, its key still held; redo: performed again under a new key. */
  choice: z.enum(['keep', 'redo']),
});
export type RewindEffect = z.infer<typeof RewindEffect>;

export const RewindPlan = z.object({
  task_id: z.string(),
  /** The version the plan was made on: the rewind is refused if the task moved on since. */
  version: z.number().int().positive(),
  step_id: z.string(),
  /** The steps set back to pending, in plan order, with the status each had. */
  rerun: z.array(z.object({ id: z.string(), name: z.string(), status: z.string() })),
  /** Paths of the artifacts those steps recorded: the rerun writes them again. */
  artifacts: z.array(z.string()),
  effects: z.array(RewindEffect),
});
export type RewindPlan = z.infer<typeof RewindPlan>;
