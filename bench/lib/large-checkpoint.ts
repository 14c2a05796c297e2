/**
 * A long-running task's checkpoint of a given size, and the next version of
 * it: what the inspector diffs when a user compares two versions of a task
 * that has run for hours (thousands of plan steps, tens of thousands of LLM
 * calls in its run record).
 */
import type { CheckpointInput } from '../../shared/checkpoint/schema.js';
import { freshCheckpoint } from './fresh-checkpoint.js';
import { randomText, seededRandom } from './seeded-random.js';
import { workloadStepId, workloadTimestamp } from './agent-workload.js';

/** Bytes of JSON per plan step and per LLM call, roughly; used to size the checkpoint. */
const STEP_BYTES = 420;
const CALL_BYTES = 150;

/**
 * Version 1 of a task whose checkpoint serialises to about `bytes` bytes:
 * a plan with small inline results, and an LLM call log, in equal shares.
 * Every step but the last 50 is done.
 */
export function largeCheckpoint(taskId: string, bytes: number, seed = 1): CheckpointInput {
  const rng = seededRandom(seed);
  const steps = Math.max(60, Math.round(bytes / 2 / STEP_BYTES));
  const calls = Math.max(1, Math.round(bytes / 2 / CALL_BYTES));
  const done = steps - 50;
  const plan = Array.from({ length: steps }, (_, i) => {
    const id = workloadStepId(i + 1);
    if (i >= done) return { id, name: `step ${i + 1}`, status: 'pending' as const, attempts: 0 };
    return {
      id,
      name: `step ${i + 1}`,
      status: 'done' as const,
      attempts: 1,
      started_at: workloadTimestamp(2 * i),
      finished_at: workloadTimestamp(2 * i + 1),
      elapsed_ms: 1000,
      tokens_in: 300,
      tokens_out: 80,
      result: { ok: true, summary: randomText(rng, 200) },
    };
  });
  const llm_calls = Array.from({ length: calls }, (_, i) => ({
    step_id: workloadStepId(1 + (i % done)),
    model: 'bench-model-large',
    tokens_in: 200 + (i % 800),
    tokens_out: 50 + (i % 300),
    latency_ms: 400 + (i % 1000),
    retries: 0,
    retry_reasons: [],
  }));
  const fresh = freshCheckpoint({
    taskId,
    taskName: 'a long-running task',
    goal: 'process a large backlog, one item per step',
    steps,
    stepId: workloadStepId,
    at: workloadTimestamp(0),
    phase: `step ${done + 1}`,
  });
  return {
    ...fresh,
    plan,
    current_step: done,
    run: {
      created_at: workloadTimestamp(0),
      updated_at: workloadTimestamp(2 * done),
      tokens_in: done * 300,
      tokens_out: done * 80,
      cost_usd: 0,
      elapsed_ms: done * 1000,
      llm_calls,
    },
    agent: { name: 'bench-agent', options: {} },
  };
}

/** The next version: the next `finished` steps done, one LLM call each, the run totals updated. */
export function largeCheckpointAfter(cp: CheckpointInput, finished: number): CheckpointInput {
  const plan = cp.plan.slice();
  const start = cp.current_step;
  const calls = (cp.run.llm_calls ?? []).slice();
  for (let i = start; i < Math.min(plan.length, start + finished); i++) {
    plan[i] = {
      ...plan[i],
      status: 'done',
      attempts: 1,
      started_at: workloadTimestamp(2 * i),
      finished_at: workloadTimestamp(2 * i + 1),
      result: { ok: true, summary: `step ${i + 1} finished` },
    };
    calls.push({
      step_id: plan[i].id,
      model: 'bench-model-large',
      tokens_in: 300,
      tokens_out: 80,
      latency_ms: 500,
      retries: 0,
      retry_reasons: [],
    });
  }
  const current = Math.min(plan.length, start + finished);
  return {
    ...cp,
    version: cp.version + 1,
    plan,
    current_step: current,
    phase: `step ${current + 1}`,
    run: {
      ...cp.run,
      updated_at: workloadTimestamp(2 * current),
      tokens_in: current * 300,
      tokens_out: current * 80,
      elapsed_ms: current * 1000,
      llm_calls: calls,
    },
  };
}
