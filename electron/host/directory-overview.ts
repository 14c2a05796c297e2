/**
 * The figures across a directory's tasks that the inspector shows above its
 * list: tokens and cost summed over the tasks, and the slowest steps. Built
 * from each task's latest checkpoint; a task's figures are kept per version,
 * so a directory of mostly finished tasks is read once.
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { DirectoryOverview, SlowStep } from '../../shared/api/contract.js';

/** One task's share of the overview. */
export interface TaskFigures {
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  steps: SlowStep[];
}

/** The figures of one checkpoint: its run's totals, and each step that took measurable time. */
export function taskFigures(cp: Checkpoint): TaskFigures {
  const steps: SlowStep[] = [];
  for (const s of cp.plan) {
    const took = s.elapsed_ms ?? (s.started_at && s.finished_at ? Math.max(0, Date.parse(s.finished_at) - Date.parse(s.started_at)) : null);
    if (took === null || !Number.isFinite(took) || took <= 0) continue;
    steps.push({ task_id: cp.task_id, step_id: s.id, step_name: s.name || s.id, elapsed_ms: took, status: s.status });
  }
  return { tokens_in: cp.run.tokens_in, tokens_out: cp.run.tokens_out, cost_usd: cp.run.cost_usd, steps };
}

/** Sum the figures of the tasks read; the `slowest` steps across them, slowest first. */
export function combineFigures(figures: readonly TaskFigures[], counted: { read: number; total: number }, slowest = 5): DirectoryOverview {
  const all = figures.flatMap((f) => f.steps).sort((a, b) => b.elapsed_ms - a.elapsed_ms || a.task_id.localeCompare(b.task_id));
  return {
    tasks_read: counted.read,
    tasks_total: counted.total,
    tokens_in: figures.reduce((n, f) => n + f.tokens_in, 0),
    tokens_out: figures.reduce((n, f) => n + f.tokens_out, 0),
    cost_usd: figures.reduce((n, f) => n + f.cost_usd, 0),
    slowest_steps: all.slice(0, slowest),
  };
}
