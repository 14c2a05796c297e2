/**
 * The figures across a directory's tasks that the inspector shows above its
 * list: tokens and cost summed over the tasks, and the slowest steps. Built
 * from each task's latest checkpoint as the kept list read it (kept-task-list.ts),
 * or, where a row does not hold them, from the task read whole.
 */
import type { DirectoryOverview, SlowStep } from '../../shared/api/contract.js';
import { parseTimestamp } from '../../shared/checkpoint/timestamp.js';

/** One task's share of the overview. */
export interface TaskFigures {
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  /** Its slowest steps, at most SLOWEST_STEPS, slowest first. */
  steps: SlowStep[];
}

/** How many of the slowest steps the overview shows. */
export const SLOWEST_STEPS = 5;

/** What the figures read of a checkpoint: a whole one, or what a listing read of one (CheckpointHead). */
type FiguresSource = {
  task_id: string;
  plan: readonly object[];
  run: object;
};

const amount = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The figures of one checkpoint: its run's totals, and its slowest steps
 * (of those that took measurable time); null when it does not hold the
 * totals, as a database row's summary written before it carried them does
 * not (the task is then read whole). Only the slowest few steps are kept:
 * the overview shows the slowest of all tasks, which are among each task's
 * slowest, and the kept list holds the figures of every task of a directory.
 *
 * Read as a listing reads a checkpoint, without validating it whole: what is
 * not a number where a number belongs counts as absent. It runs for every row
 * the kept list builds, so timestamps are read with the listing's own
 * parseTimestamp rather than Date.parse.
 */
export function taskFigures(cp: FiguresSource): TaskFigures | null {
  const run = cp.run as Record<string, unknown>;
  const tokensIn = amount(run.tokens_in);
  const tokensOut = amount(run.tokens_out);
  const cost = amount(run.cost_usd);
  if (tokensIn === null || tokensOut === null || cost === null) return null;
  const steps: SlowStep[] = [];
  for (const step of cp.plan) {
    const s = step as Record<string, unknown>;
    const started = text(s.started_at);
    const finished = text(s.finished_at);
    const took = amount(s.elapsed_ms) ?? (started && finished ? Math.max(0, parseTimestamp(finished) - parseTimestamp(started)) : null);
    if (took === null || !Number.isFinite(took) || took <= 0) continue;
    const id = text(s.id) ?? '';
    steps.push({ task_id: cp.task_id, step_id: id, step_name: text(s.name) || id, elapsed_ms: took, status: text(s.status) ?? '' });
  }
  // A stable sort: of steps that took as long, the earlier in the plan is kept, as combineFigures orders them.
  steps.sort((a, b) => b.elapsed_ms - a.elapsed_ms);
  return { tokens_in: tokensIn, tokens_out: tokensOut, cost_usd: cost, steps: steps.slice(0, SLOWEST_STEPS) };
}

/** Sum the figures of the tasks read; the `slowest` steps across them (at most SLOWEST_STEPS), slowest first. */
export function combineFigures(
  figures: readonly TaskFigures[],
  counted: { read: number; total: number },
  slowest = SLOWEST_STEPS,
): DirectoryOverview {
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
