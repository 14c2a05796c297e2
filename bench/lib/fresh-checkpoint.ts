/**
 * Version 1 of a task that has not started yet, the common start of the
 * benchmarks' workloads and the store tests' checkpoints.
 */
import { CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../shared/checkpoint/schema.js';

export interface FreshCheckpointSpec {
  taskId: string;
  taskName: string;
  goal: string;
  /** How many plan steps, all pending. */
  steps: number;
  /** The id of step `n` (1-based). Default `s<n>`. */
  stepId?: (n: number) => string;
  /** Both `run.created_at` and `run.updated_at`. */
  at: string;
  /** Default `step 1`. */
  phase?: string;
}

/**
 * A running task's version 1: every step pending, nothing spent, produced or done yet.
 *
 * Callers vary it by spreading and overriding fields; an overridden field
 * keeps its place in the key order, so the JSON written for it does not
 * depend on how a caller built it.
 */
export function freshCheckpoint(spec: FreshCheckpointSpec): CheckpointInput {
  const stepId = spec.stepId ?? ((n: number) => `s${n}`);
  return {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: spec.taskId,
    task_name: spec.taskName,
    version: 1,
    status: 'running',
    phase: spec.phase ?? 'step 1',
    goal: spec.goal,
    plan: Array.from({ length: spec.steps }, (_, i) => ({
      id: stepId(i + 1),
      name: `step ${i + 1}`,
      status: 'pending' as const,
      attempts: 0,
    })),
    current_step: 0,
    total_steps: spec.steps,
    artifacts: [],
    side_effects: [],
    resume_hint: '',
    recovery: { mode: 'manual', decisions: [], auto_attempts: 0 },
    errors: [],
    run: { created_at: spec.at, updated_at: spec.at, tokens_in: 0, tokens_out: 0, cost_usd: 0, elapsed_ms: 0, llm_calls: [] },
    source: { kind: 'runtime' },
  };
}
