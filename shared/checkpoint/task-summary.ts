/**
 * The one-line view of a task: what the app's task list shows, and (with the
 * plan's steps added, see TaskListing) what `waystation ls --json` prints and
 * `GET /api/tasks` returns, field for field.
 *
 * Every task in a directory gets a summary, readable or not; the fields that
 * come from the checkpoint are null when there is none, and `problems` says why.
 */
import { z } from 'zod';
import { plainProblem, Problem } from './problem.js';
import { RecoveryMode, StepStatus, TaskStatus } from './schema.js';
import type { CheckpointHead } from './checkpoint-head.js';
import { DisplayStatus, deriveDisplayStatus } from './task-state.js';
import { isUntouchedFork } from './untouched-fork.js';

/** Where a task's checkpoints came from on disk (mirrors the store's TaskFormat). */
export const TaskFormat = z.enum(['waystation', 'article-task-json', 'article-checkpoint-json', 'langgraph']);
export type TaskFormat = z.infer<typeof TaskFormat>;

/**
 * Whether a task of `format` may be driven by a process right now, so that its lease (CheckpointSource.readLease)
 * is worth asking: Waystation's own tasks, and LangGraph threads, whose newest checkpoint's age stands in for a
 * lease. A file in an article's format is never driven in place.
 */
export function mayBeDriven(format: TaskFormat): boolean {
  return format === 'waystation' || format === 'langgraph';
}

/**
 * How many plan steps are in each status. A list row shows progress, not the
 * steps: sending each task's whole plan made most of the list's bytes.
 */
const Count = z.number().int().nonnegative();
export const StepCounts = z.object({ pending: Count, running: Count, done: Count, failed: Count, skipped: Count });
export type StepCounts = z.infer<typeof StepCounts>;

/** Count a plan's steps by status. */
export function countSteps(plan: readonly { status: StepStatus }[]): StepCounts {
  const counts: StepCounts = { pending: 0, running: 0, done: 0, failed: 0, skipped: 0 };
  for (const step of plan) counts[step.status]++;
  return counts;
}

export const TaskSummary = z.object({
  task_id: z.string(),
  task_name: z.string().nullable(),
  version: z.number().int().positive().nullable(),
  /** What the checkpoint says. */
  status: TaskStatus.nullable(),
  /** What the task is shown as, after the lease, drift and readability are taken into account. */
  display_status: DisplayStatus,
  phase: z.string().nullable(),
  step_counts: StepCounts,
  current_step: z.number().int().nonnegative().nullable(),
  total_steps: z.number().int().nonnegative().nullable(),
  mode: RecoveryMode.nullable(),
  agent_name: z.string().nullable(),
  updated_at: z.string().nullable(),
  format: TaskFormat,
  read_only: z.boolean(),
  /** Folder or file of the task, relative to the root, forward slashes. */
  location: z.string(),
  /** Empty when the task is healthy. */
  problems: z.array(Problem),
  /** Set for a fork: the task and version it started from, so a list finds a task's forks without opening them. */
  forked_from: z.object({ task_id: z.string(), version: z.number().int().positive() }).optional(),
});
export type TaskSummary = z.infer<typeof TaskSummary>;

export const TaskSummaryStep = z.object({ id: z.string(), name: z.string(), status: StepStatus });
export type TaskSummaryStep = z.infer<typeof TaskSummaryStep>;

/**
 * A summary with the plan's steps (id, name, status): what `waystation ls
 * --json` prints and `GET /api/tasks` returns for each task, for scripts that
 * look at the steps. The app's own list (the API's `listTasks`) leaves the
 * plan out: a list row needs only the counts, and 10,000 plans are most of
 * the bytes.
 */
export const TaskListing = TaskSummary.extend({ plan: z.array(TaskSummaryStep) });
export type TaskListing = z.infer<typeof TaskListing>;

/** A summary with the steps of the checkpoint it was made from (none for an unreadable task). */
export function withPlan(summary: TaskSummary, checkpoint: Pick<CheckpointHead, 'plan'> | null): TaskListing {
  return { ...summary, plan: (checkpoint?.plan ?? []).map((s) => ({ id: s.id, name: s.name, status: s.status })) };
}

/** The parts of a store's task entry a summary is built from (structurally the store's ListedTask, or a TaskEntry). */
export interface TaskSummarySource {
  task_id: string;
  location: string;
  format: TaskFormat;
  /** What a listing reads of the checkpoint; a whole checkpoint is one too. */
  checkpoint: CheckpointHead | null;
  read_only: boolean;
  problems: readonly Problem[];
}

export interface TaskSummaryExtra {
  /** A live process holds the lease. Default false. */
  leaseHeld?: boolean;
  /** Verification found artifact drift. Default false. */
  drift?: boolean;
  /** Problems found beyond the entry's own (invariants, verification); duplicates are dropped. */
  problems?: readonly Problem[];
}

/**
 * Build the summary of one task.
 *
 * A task is `unreadable` when it has no checkpoint; problems alone (a legacy
 * format warning, a broken invariant) leave it displayed by its status, with
 * the problems listed beside it.
 */
export function toTaskSummary(entry: TaskSummarySource, extra: TaskSummaryExtra = {}): TaskSummary {
  const cp = entry.checkpoint;
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const p of [...entry.problems, ...(extra.problems ?? [])]) {
    const key = `${p.file}\u0000${p.reason}\u0000${p.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(plainProblem(p));
  }
  return {
    task_id: entry.task_id,
    task_name: cp?.task_name ?? null,
    version: cp?.version ?? null,
    status: cp?.status ?? null,
    display_status: deriveDisplayStatus(cp, {
      leaseHeld: extra.leaseHeld ?? false,
      drift: extra.drift ?? false,
      unreadable: cp === null,
    }),
    phase: cp?.phase ?? null,
    step_counts: countSteps(cp?.plan ?? []),
    current_step: cp?.current_step ?? null,
    total_steps: cp?.total_steps ?? null,
    mode: cp?.recovery?.mode ?? null,
    agent_name: cp?.agent?.name ?? null,
    updated_at: cp?.run?.updated_at ?? null,
    format: entry.format,
    read_only: entry.read_only,
    location: entry.location,
    problems,
    ...forkedFrom(cp),
  };
}

/** The parent a fork records, when it records a well-formed one (a listing reads the head unchecked there). */
function forkedFrom(cp: CheckpointHead | null): Pick<TaskSummary, 'forked_from'> {
  const f = cp?.forked_from;
  if (!f || typeof f.task_id !== 'string' || !f.task_id || !Number.isSafeInteger(f.version) || (f.version as number) < 1) return {};
  return { forked_from: { task_id: f.task_id, version: f.version as number } };
}

/** True when any problem is an error (warnings such as legacy-format leave a task usable). */
export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/**
 * Might the runner have this task to pick up when its directory is opened:
 * an auto or confirm-mode task of Waystation's own format that was running
 * (interrupted) or failed, and not a fork nothing has run yet? A cheap first
 * look at a list row; the runner reads the whole checkpoint and its lease
 * before it resumes anything.
 */
export function mayNeedRecovery(
  task: Pick<TaskSummary, 'status' | 'mode' | 'format' | 'read_only' | 'agent_name' | 'version'> & { forked_from?: unknown },
): boolean {
  if (task.read_only || task.format !== 'waystation' || !task.agent_name || isUntouchedFork(task)) return false;
  if (task.status !== 'running' && task.status !== 'failed') return false;
  return task.mode === 'auto' || task.mode === 'confirm';
}
