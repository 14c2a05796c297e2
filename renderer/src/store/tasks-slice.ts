import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import type { WaystationApi } from '../../../shared/api/contract.js';
import type { Slice, TasksSlice } from './store-types.js';
import { errorText } from './error-text.js';

/** How many rows the first answer of a first load holds: more than a tall window shows. */
const FIRST_SCREEN_ROWS = 100;

/** The request for a first screen of rows (see TasksSlice.loadTasks). */
export function firstScreenRows(api: WaystationApi): Promise<TaskSummary[]> {
  return api.listTasks({ limit: FIRST_SCREEN_ROWS });
}

/** The task list as the host reports it, and the filter the user set on it. */
export const createTasksSlice: Slice<TasksSlice> = (set, get) => {
  let seq = 0;
  let overviewSeq = 0;
  // Rows patched while a listing is in flight: the listing may have been read before them, so they are applied again on top.
  let patchedDuringLoad: TaskSummary[] | null = null;
  const withRows = (tasks: readonly TaskSummary[], rows: readonly TaskSummary[]): TaskSummary[] => {
    const byId = new Map(rows.map((r) => [r.task_id, r]));
    const next = tasks.map((t) => {
      const row = byId.get(t.task_id);
      if (row) byId.delete(t.task_id);
      return row ?? t;
    });
    return byId.size ? [...next, ...byId.values()] : next;
  };
  return {
    tasks: [],
    overview: null,
    overviewError: null,
    tasksState: 'idle',
    tasksError: null,
    filter: { status: 'all', query: '' },

    setFilter(filter) {
      set({ filter: { ...get().filter, ...filter } });
    },

    async loadTasks(firstScreen) {
      const mine = ++seq;
      // Keep showing the current list while a refresh is in flight: no flicker on live updates.
      const first = get().tasksState !== 'ready';
      if (first) set({ tasksState: 'loading' });
      patchedDuringLoad = [];
      if (first) {
        // A screenful first: on a directory of thousands of tasks the host answers it while it still reads the rest.
        void (firstScreen ?? firstScreenRows(get().api)).then(
          (rows) => {
            if (mine === seq && get().tasksState === 'loading') set({ tasks: withRows(rows, patchedDuringLoad ?? []) });
          },
          // The whole list's answer says what went wrong.
          () => {},
        );
      }
      try {
        const tasks = await get().api.listTasks({});
        if (mine === seq) set({ tasks: withRows(tasks, patchedDuringLoad ?? []), tasksState: 'ready', tasksError: null });
      } catch (err) {
        if (mine === seq) set({ tasksState: 'error', tasksError: errorText(err) });
      } finally {
        if (mine === seq) patchedDuringLoad = null;
      }
    },

    async loadOverview() {
      const root = get().directory?.root ?? null;
      if (!root) return;
      const mine = ++overviewSeq;
      try {
        const figures = await get().api.getOverview({});
        if (mine === overviewSeq && get().directory?.root === root) set({ overview: { root, figures }, overviewError: null });
      } catch (err) {
        if (mine === overviewSeq) set({ overviewError: errorText(err) });
      }
    },

    patchTasks(summaries) {
      if (summaries.length === 0) return;
      patchedDuringLoad?.push(...summaries);
      set({ tasks: withRows(get().tasks, summaries) });
    },
  };
};
