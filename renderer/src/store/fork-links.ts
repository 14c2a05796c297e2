/**
 * A task's place among its forks: the task and version it was forked from,
 * and the tasks forked from it, found in the task list (each fork's row names
 * its parent), so History links both ways without opening every task.
 */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';

export interface ForkLink {
  task_id: string;
  version: number;
}

/** The task and version `cp` was forked from, or null when it is not a fork. */
export function forkParent(cp: Pick<Checkpoint, 'forked_from' | 'source'>): ForkLink | null {
  const from = cp.forked_from ?? cp.source.forked_from ?? null;
  return from ? { task_id: from.task_id, version: from.version } : null;
}

/** The tasks forked from `taskId`, oldest parent version first, then by id. */
export function forkChildren(taskId: string, tasks: readonly TaskSummary[]): ForkLink[] {
  return tasks
    .filter((t) => t.forked_from?.task_id === taskId && t.task_id !== taskId)
    .map((t) => ({ task_id: t.task_id, version: t.forked_from!.version }))
    .sort((a, b) => a.version - b.version || (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0));
}
