/**
 * When the task list holds its order (store/held-order.ts says how): while the pointer is over it, or while a
 * person moves through it with the keys (the focus came by Tab or the search box's Down, or a key was pressed in it,
 * and no click since). The focus a click leaves on the list is not the keys: a person who clicked a row and went on
 * to read the task lets the list re-sort behind them, and holds it again by pointing at it or pressing a key in it.
 * Nothing is held while a first load is still adding rows: those are the list arriving, not new tasks.
 */
import { useMemo, useState } from 'react';
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import { arrangeHeld, holdOrder, type HeldOrder } from '../store/held-order.js';
import type { TaskFilter } from '../store/task-filter.js';

export interface ListHold {
  /** The rows to show: the list's own, or the held ones. */
  rows: TaskSummary[];
  /** Set while the order shown is not the list's own: how many tasks were added at its end meanwhile. */
  held: { added: number } | null;
  /** For the list's element: where the pointer and the focus are. */
  handlers: {
    onPointerEnter(): void;
    onPointerLeave(): void;
    onPointerDown(): void;
    onFocus(): void;
    onBlur(): void;
  };
  /** A key was pressed in the list: the person is moving through it with the keys. */
  keyPressed(): void;
}

/**
 * The rows of the task list, held while a person is in it.
 *
 * `live` is the list's own rows (filtered and sorted), `tasks` every task listed, `ready` whether the whole list
 * has been read.
 */
export function useListHold(live: TaskSummary[], tasks: readonly TaskSummary[], filter: TaskFilter, ready: boolean): ListHold {
  const [pointer, setPointer] = useState(false);
  const [keys, setKeys] = useState(false);
  const [order, setOrder] = useState<HeldOrder | null>(null);
  const holding = ready && (pointer || keys);
  // The order is kept from one render to the next and updated in the render that finds it out of date (React's
  // "storing information from previous renders"): an effect would show the list's own order for a frame first.
  let current = order;
  if (!holding) current = null;
  else if (current === null || current.filter !== filter) current = holdOrder(live, filter);
  const view = useMemo(() => (current ? arrangeHeld(current, live, tasks) : null), [current, live, tasks]);
  const kept = view?.order ?? null;
  if (kept !== order) setOrder(kept);

  return {
    rows: view?.rows ?? live,
    held: view?.differs ? { added: view.added } : null,
    handlers: {
      onPointerEnter: () => setPointer(true),
      onPointerLeave: () => setPointer(false),
      // Back to the pointer: the keys hold the list again once one is pressed in it.
      onPointerDown: () => setKeys(false),
      // With the pointer over the list, the focus came with a click.
      onFocus: () => {
        if (!pointer) setKeys(true);
      },
      onBlur: () => setKeys(false),
    },
    keyPressed: () => setKeys(true),
  };
}
