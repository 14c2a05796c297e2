/**
 * The order a held task list keeps (renderer/src/store/held-order.ts), apart from the list that shows it: each row
 * keeps its slot, tasks that appear keep theirs at the end in the order they appeared, and the order kept is the
 * same object while nothing appeared (a render compares it by identity to know it is up to date).
 */
import { describe, expect, it } from 'vitest';
import { toTaskSummary, type TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { arrangeHeld, holdOrder } from '../../renderer/src/store/held-order.js';
import { filterTasks, type TaskFilter } from '../../renderer/src/store/task-filter.js';
import { makeCheckpoint } from './fake-api.js';

const filter: TaskFilter = { status: 'all', query: '' };

function summary(id: string, minute: number): TaskSummary {
  const at = `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z`;
  const checkpoint = makeCheckpoint(id, { run: { created_at: at, updated_at: at } });
  return toTaskSummary({ task_id: id, location: id, format: 'waystation', checkpoint, read_only: false, problems: [] });
}

/** Every task listed, and the list's own rows: newest first. */
const listed = (...tasks: TaskSummary[]) => ({ tasks, live: filterTasks(tasks, filter) });
const ids = (rows: readonly TaskSummary[]) => rows.map((t) => t.task_id);

describe('a held order', () => {
  it('keeps the tasks that appeared in the order they appeared, however they are updated after', () => {
    const first = listed(summary('a', 2), summary('b', 1));
    const order = holdOrder(first.live, filter);
    expect(arrangeHeld(order, first.live, first.tasks).order).toBe(order);

    const c = listed(summary('a', 2), summary('b', 1), summary('c', 3));
    const withC = arrangeHeld(order, c.live, c.tasks);
    expect(ids(withC.rows)).toEqual(['a', 'b', 'c']);
    expect(withC).toMatchObject({ added: 1, differs: true });

    // d appears after c, then c is saved again: c stays above d, where it appeared.
    const d = listed(summary('a', 2), summary('b', 1), summary('c', 5), summary('d', 4));
    const withD = arrangeHeld(withC.order, d.live, d.tasks);
    expect(ids(d.live)).toEqual(['c', 'd', 'a', 'b']);
    expect(ids(withD.rows)).toEqual(['a', 'b', 'c', 'd']);
    expect(withD.added).toBe(2);
    expect(arrangeHeld(withD.order, d.live, d.tasks).order).toBe(withD.order);
  });

  it('shows each row as its task is now, and differs from the list only when the order does', () => {
    const before = listed(summary('a', 2), summary('b', 1));
    const order = holdOrder(before.live, filter);
    const newer = summary('b', 1);
    const same = arrangeHeld(order, filterTasks([before.tasks[0], newer], filter), [before.tasks[0], newer]);
    expect(same.rows[1]).toBe(newer);
    expect(same.differs).toBe(false);
  });
});
