// @vitest-environment jsdom
/**
 * The task list holds its order while a person is in it (the pointer over it, or moving through it with the keys):
 * a row does not move under a click about to land. Rows still change in place, a task that appears is added at the
 * end and said to be new, a task gone from the directory leaves, and the list's own order applies once the person
 * leaves it. Rendered in jsdom over the in-memory API.
 */
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { CheckpointInput } from '../../shared/checkpoint/schema.js';
import { disposeStores, newStore, layOutElements, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

// jsdom lays nothing out: the virtualised list is given a size, so it renders its rows.
layOutElements(600);
afterEach(() => disposeStores());

const at = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, '0')}:00Z`;

/** t1, t3, t2, newest first: the order "Recently updated" shows them in. */
async function threeTasks() {
  const fake = new FakeApi();
  for (const [id, minute] of [
    ['t1', 3],
    ['t2', 1],
    ['t3', 2],
  ] as const) {
    fake.add(makeCheckpoint(id, { run: { created_at: at(minute), updated_at: at(minute) } }));
  }
  const store = newStore(fake.api);
  renderApp(store);
  await waitFor(() => expect(rows()).toEqual(['t1', 't3', 't2']));
  return { fake, store };
}

const list = () => screen.getByRole('listbox', { name: 'Task list' });
/** The tasks of the rows on screen, top to bottom. */
const rows = () =>
  within(list())
    .queryAllByRole('option')
    .map((r) => r.id.replace(/^task-row-/, ''));
const row = (id: string) => within(list()).getByRole('option', { name: new RegExp(`Task ${id}`) });
/** What the list's footer says: how many tasks, and whether the order shown is held. */
const footer = () => document.querySelector('.task-list-footer')?.textContent ?? '';

/** A new version of `id`, written at `minute`, as the host announces it with its row. */
async function saved(fake: FakeApi, store: ReturnType<typeof newStore>, id: string, minute: number, more: Partial<CheckpointInput> = {}) {
  const version = (fake.tasks.get(id)?.length ?? 0) + 1;
  fake.add(makeCheckpoint(id, { version, run: { created_at: at(0), updated_at: at(minute) }, ...more }));
  act(() => fake.emit({ type: 'task-changed', taskId: id, version, summary: fake.summaryOf(id) }));
  await waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === id)?.version).toBe(version));
}

describe('the task list, while a person points at it', () => {
  it('keeps its rows where they are, updates them in place, adds a new task at the end, and reorders once the pointer leaves', async () => {
    const { fake, store } = await threeTasks();
    fireEvent.pointerEnter(list());

    // t2 is saved again (it would sort first) and a new task appears (it would sort first too).
    await saved(fake, store, 't2', 9, {
      status: 'done',
      plan: makeCheckpoint('t2').plan.map((s) => ({ ...s, status: 'done', error: null })),
    });
    await saved(fake, store, 't4', 10);
    expect(rows()).toEqual(['t1', 't3', 't2', 't4']);
    // The row changed where it is: its status is the new one.
    expect(within(row('t2')).getByText('Done')).toBeTruthy();
    expect(footer()).toBe("4 tasks · order held while you're in the list · 1 new at the end");

    fireEvent.pointerLeave(list());
    expect(rows()).toEqual(['t4', 't2', 't1', 't3']);
    expect(footer()).toBe('4 tasks');
  });

  it('drops a task gone from the directory at once, and keeps one that no longer matches the filter until the pointer leaves', async () => {
    const { fake, store } = await threeTasks();
    fireEvent.change(screen.getByRole('combobox', { name: 'Status filter' }), { target: { value: 'failed' } });
    expect(rows()).toEqual(['t1', 't3', 't2']);
    fireEvent.pointerEnter(list());

    await saved(fake, store, 't3', 9, {
      status: 'done',
      plan: makeCheckpoint('t3').plan.map((s) => ({ ...s, status: 'done', error: null })),
    });
    expect(rows()).toEqual(['t1', 't3', 't2']);
    expect(within(row('t3')).getByText('Done')).toBeTruthy();

    fake.tasks.delete('t1');
    act(() => fake.emit({ type: 'task-removed', taskId: 't1' }));
    await waitFor(() => expect(rows()).toEqual(['t3', 't2']));

    fireEvent.pointerLeave(list());
    expect(rows()).toEqual(['t2']);
  });
});

describe('the task list, while a person moves through it with the keys', () => {
  it('holds its order while it has the focus, moves through the rows as shown, and reorders once the focus leaves', async () => {
    const { fake, store } = await threeTasks();
    const search = screen.getByRole('searchbox', { name: 'Search tasks' });
    fireEvent.keyDown(search, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(list());
    expect(store.getState().selectedTaskId).toBe('t1');

    await saved(fake, store, 't2', 9);
    expect(rows()).toEqual(['t1', 't3', 't2']);
    expect(footer()).toBe("3 tasks · order held while you're in the list");
    // Down goes to the row below on screen, not to the one below in the new order.
    fireEvent.keyDown(list(), { key: 'ArrowDown' });
    expect(store.getState().selectedTaskId).toBe('t3');

    act(() => list().blur());
    expect(rows()).toEqual(['t2', 't1', 't3']);
    expect(footer()).toBe('3 tasks');
  });

  it('lets go when the pointer leaves after a click: the focus a click gives or keeps is not a person moving through it with the keys', async () => {
    const { fake, store } = await threeTasks();
    fireEvent.pointerEnter(list());
    fireEvent.pointerDown(row('t3'));
    act(() => list().focus());
    fireEvent.click(row('t3'));
    expect(store.getState().selectedTaskId).toBe('t3');
    await saved(fake, store, 't2', 9);
    expect(rows()).toEqual(['t1', 't3', 't2']);
    fireEvent.pointerLeave(list());
    expect(document.activeElement).toBe(list());
    expect(rows()).toEqual(['t2', 't1', 't3']);

    // A key pressed in the list holds it again, with the pointer elsewhere.
    fireEvent.keyDown(list(), { key: 'ArrowDown' });
    expect(store.getState().selectedTaskId).toBe('t3');
    await saved(fake, store, 't3', 10);
    expect(rows()).toEqual(['t2', 't1', 't3']);
    // Back to the pointer: a click in the list, and the pointer leaves.
    fireEvent.pointerEnter(list());
    fireEvent.pointerDown(row('t1'));
    fireEvent.click(row('t1'));
    fireEvent.pointerLeave(list());
    expect(rows()).toEqual(['t3', 't2', 't1']);
  });
});
