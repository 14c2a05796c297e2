import type { Slice, TasksSlice } from './store-types.js';
import { errorText } from './error-text.js';

/** The task list as the host reports it, and the filter the user set on it. */
export const createTasksSlice: Slice<TasksSlice> = (set, get) => {
  let seq = 0;
  return {
    tasks: [],
    tasksState: 'idle',
    tasksError: null,
    filter: { status: 'all', query: '' },

    setFilter(filter) {
      set({ filter: { ...get().filter, ...filter } });
    },

    async loadTasks() {
      const mine = ++seq;
      // Keep showing the current list while a refresh is in flight: no flicker on live updates.
      if (get().tasksState !== 'ready') set({ tasksState: 'loading' });
      try {
        const tasks = await get().api.listTasks({});
        if (mine === seq) set({ tasks, tasksState: 'ready', tasksError: null });
      } catch (err) {
        if (mine === seq) set({ tasksState: 'error', tasksError: errorText(err) });
      }
    },
  };
};
