import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { combineFigures, SLOWEST_STEPS, taskFigures } from '../../../electron/host/directory-overview.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';

/** A checkpoint with only what the overview reads. */
function checkpointOf(taskId: string, elapsed: readonly (number | null)[]): Checkpoint {
  return {
    task_id: taskId,
    run: { tokens_in: 1, tokens_out: 2, cost_usd: 0.5 },
    plan: elapsed.map((ms, i) => ({ id: `s${i}`, name: `step ${i}`, status: 'done', elapsed_ms: ms })),
  } as unknown as Checkpoint;
}

describe('the directory overview', () => {
  it("reads a row as a listing reads it: none without the run's totals, and a number that is not one counts as absent", () => {
    // A database's list row holds a summary of the checkpoint, without the run's totals: the task is read whole instead.
    const summaryOnly = { task_id: 's', run: { created_at: 'x', updated_at: 'x' }, plan: [] };
    expect(taskFigures(summaryOnly)).toBeNull();
    expect(taskFigures({ task_id: 's', run: { tokens_in: 1, tokens_out: -1, cost_usd: 0 }, plan: [] })).toBeNull();
    const figures = taskFigures({
      task_id: 't',
      run: { tokens_in: 3, tokens_out: 4, cost_usd: 0.25 },
      plan: [
        {
          id: 'a',
          name: 'A',
          status: 'done',
          elapsed_ms: 'slow',
          started_at: '2026-01-01T00:00:00.000Z',
          finished_at: '2026-01-01T00:00:02.000Z',
        },
        { id: 'b', name: '', status: 'done', elapsed_ms: 500 },
        { id: 'c', name: 'C', status: 'pending', elapsed_ms: 0 },
      ],
    });
    expect(figures).toEqual({
      tokens_in: 3,
      tokens_out: 4,
      cost_usd: 0.25,
      steps: [
        { task_id: 't', step_id: 'a', step_name: 'A', elapsed_ms: 2000, status: 'done' },
        { task_id: 't', step_id: 'b', step_name: 'b', elapsed_ms: 500, status: 'done' },
      ],
    });
  });

  it("keeps a task's slowest steps only, and gives the same slowest steps of a directory as every step would", () => {
    const tasks = fc.array(fc.array(fc.option(fc.integer({ min: 0, max: 20 }), { nil: null }), { maxLength: 12 }), { maxLength: 8 });
    fc.assert(
      fc.property(tasks, (plans) => {
        const cps = plans.map((elapsed, i) => checkpointOf(`t${i}`, elapsed));
        const figures = cps.map((cp) => taskFigures(cp)!);
        for (const f of figures) expect(f.steps.length).toBeLessThanOrEqual(SLOWEST_STEPS);
        // Every measured step of every task, in the order combineFigures sorts them.
        const every = cps
          .flatMap((cp) =>
            cp.plan.filter((s) => (s.elapsed_ms ?? 0) > 0).map((s) => ({ task_id: cp.task_id, step_id: s.id, elapsed_ms: s.elapsed_ms! })),
          )
          .sort((a, b) => b.elapsed_ms - a.elapsed_ms || a.task_id.localeCompare(b.task_id));
        const shown = combineFigures(figures, { read: cps.length, total: cps.length });
        expect(shown.slowest_steps.map((s) => [s.task_id, s.step_id, s.elapsed_ms])).toEqual(
          every.slice(0, SLOWEST_STEPS).map((s) => [s.task_id, s.step_id, s.elapsed_ms]),
        );
        expect(shown.tokens_in).toBe(cps.length);
      }),
      { numRuns: 300 },
    );
  });
});
