/**
 * Which tasks the list shows: derived from the server's summaries and the
 * filter, never stored, so the list can't drift from the data.
 */
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import { newestFirst } from '../../../shared/checkpoint/task-order.js';
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';

export type StatusFilter = 'all' | 'attention' | DisplayStatus;

/** The list's order: most recently updated first, by status (most urgent first), or by name. */
export type TaskOrder = 'updated' | 'status' | 'name';

export interface TaskFilter {
  status: StatusFilter;
  query: string;
  /** Absent: most recently updated first (the attention view: most urgent first). */
  order?: TaskOrder;
}

/** Statuses that need a human: something failed, is blocked on a person, or no longer matches the disk. */
const ATTENTION: ReadonlySet<DisplayStatus> = new Set<DisplayStatus>([
  'failed',
  'interrupted',
  'waiting_approval',
  'waiting_human',
  'drifted',
  'unreadable',
]);

/** True when a task needs a human look: by its status, or because its files have error-level problems. */
export function needsAttention(task: TaskSummary): boolean {
  if (ATTENTION.has(task.display_status)) return true;
  for (const p of task.problems) if (p.severity === 'error') return true;
  return false;
}

// Most urgent first, so the "needs attention" view reads as a to-do list.
const URGENCY: Record<DisplayStatus, number> = {
  waiting_approval: 0,
  waiting_human: 1,
  failed: 2,
  drifted: 3,
  unreadable: 4,
  interrupted: 5,
  running: 6,
  halted: 7,
  done: 8,
};

/**
 * Filter and order tasks for the list.
 *
 * The query matches id, name, phase, agent and location, case-insensitively;
 * several words must all match. Tasks are ordered as `filter.order` says:
 * newest update first by default (the attention view: by urgency before
 * time), by urgency, or by name (which stays put while tasks run).
 */
export function filterTasks(tasks: readonly TaskSummary[], filter: TaskFilter): TaskSummary[] {
  const words = filter.query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const out = tasks.filter((t) => {
    if (filter.status === 'attention' ? !needsAttention(t) : filter.status !== 'all' && t.display_status !== filter.status) {
      return false;
    }
    if (words.length === 0) return true;
    const hay = `${t.task_id} ${t.task_name ?? ''} ${t.phase ?? ''} ${t.agent_name ?? ''} ${t.location} ${t.display_status}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
  const byUrgency = (a: TaskSummary, b: TaskSummary) => URGENCY[a.display_status] - URGENCY[b.display_status] || newestFirst(a, b);
  const label = (t: TaskSummary) => (t.task_name && t.task_name !== t.agent_name ? t.task_name : t.task_id).toLowerCase();
  const byName = (a: TaskSummary, b: TaskSummary) => label(a).localeCompare(label(b)) || a.task_id.localeCompare(b.task_id);
  const order = filter.order ?? (filter.status === 'attention' ? 'status' : 'updated');
  return out.sort(order === 'name' ? byName : order === 'status' ? byUrgency : newestFirst);
}

/** How many tasks each status filter would show, for the filter chips. */
export function countByFilter(tasks: readonly TaskSummary[]): Record<StatusFilter, number> {
  const counts = { all: tasks.length, attention: 0 } as Record<StatusFilter, number>;
  for (const t of tasks) {
    counts[t.display_status] = (counts[t.display_status] ?? 0) + 1;
    if (needsAttention(t)) counts.attention += 1;
  }
  return counts;
}
