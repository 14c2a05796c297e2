/**
 * The task list's order, held while a person is in the list (the pointer over it, or moving through it with the
 * keys; components/list-hold.ts says when): with "Recently updated", a running task saving a version every second or
 * a fork being written re-sorts the rows, and a row that moves under the pointer takes the click meant for another.
 *
 * While held, each row keeps its slot and still shows its task as it is now (status, progress, badges). A task that
 * appears is added at the end and counted as new, as mail clients and chat apps say "2 new" rather than push the
 * rows down: it can be reached at once (End) and nothing above it moves. A task that no longer matches the filter
 * keeps its slot, showing its new status, until the hold ends: it is still a task a click may open. A task gone from
 * the directory leaves at once, as there is nothing left to open; that is the one change that can still move rows.
 */
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import type { TaskFilter } from './task-filter.js';

/** The order a hold keeps. Only ever replaced, never changed in place: a render compares it by identity. */
export interface HeldOrder {
  /** The filter it was taken under: another filter is another list, whose order is taken afresh. */
  filter: TaskFilter;
  /** Task ids in the order shown: those listed when the hold began, then those that appeared since. */
  ids: readonly string[];
  /** How many of `ids` were listed when the hold began. */
  listed: number;
}

/** What a held list shows. */
export interface HeldRows {
  rows: TaskSummary[];
  /** Rows at the end for tasks that appeared since the hold began. */
  added: number;
  /** Whether the list's own order differs from the one shown: it applies once the hold ends. */
  differs: boolean;
  /** The order kept from here on: `order` itself unless tasks appeared. */
  order: HeldOrder;
}

/** Hold the order of `shown`, the rows as they are on screen now. */
export function holdOrder(shown: readonly TaskSummary[], filter: TaskFilter): HeldOrder {
  return { filter, ids: shown.map((t) => t.task_id), listed: shown.length };
}

/**
 * The rows of a held list: `order`'s, each as `tasks` (every task listed) has it now, then the tasks of `live` (the
 * list's own filtered, sorted rows) that it does not hold yet.
 */
export function arrangeHeld(order: HeldOrder, live: readonly TaskSummary[], tasks: readonly TaskSummary[]): HeldRows {
  const held = new Set(order.ids);
  const appeared = live.filter((t) => !held.has(t.task_id));
  const next = appeared.length === 0 ? order : { ...order, ids: [...order.ids, ...appeared.map((t) => t.task_id)] };
  const byId = new Map(tasks.map((t) => [t.task_id, t]));
  const rows: TaskSummary[] = [];
  let added = 0;
  next.ids.forEach((id, i) => {
    const task = byId.get(id);
    if (!task) return;
    rows.push(task);
    if (i >= order.listed) added++;
  });
  const differs = rows.length !== live.length || rows.some((t, i) => t.task_id !== live[i].task_id);
  return { rows, added, differs, order: next };
}
