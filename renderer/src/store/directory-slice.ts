/**
 * Which checkpoint directory is open, the agents it offers, and switching to
 * another one (desktop): what was open belonged to the old folder, so the
 * task view is closed and the list read anew.
 */
import type { DirectorySlice, Slice } from './store-types.js';
import { errorText } from './error-text.js';

/** The open directory, its agents, and opening another. */
export const createDirectorySlice: Slice<DirectorySlice> = (set, get) => {
  /** After the host opened another folder: nothing of the old one stays on screen. */
  const switchedTo = async (directory: NonNullable<DirectorySlice['directory']>) => {
    get().selectTask(null);
    // The old folder's rows go at once: the new list loads as a first load does, a screenful first.
    set({ directory, tasks: [], tasksState: 'idle' });
    await get().loadTasks();
    await get().loadOverview();
  };

  return {
    directory: null,
    agents: [],

    async refreshAgents() {
      try {
        set({ agents: await get().api.listAgents({}) });
      } catch {
        // No agents only disables "New task"; the inspector itself still works.
      }
    },

    async reloadDirectory() {
      try {
        set({ directory: await get().api.getDirectory({}) });
      } catch {
        // The connection's status already says the host is not answering; the directory shown stays.
      }
    },

    async openDirectory(path: string) {
      try {
        await switchedTo(await get().api.openDirectory({ path }));
      } catch (err) {
        get().notify('error', errorText(err));
      }
    },

    async trustDirectory() {
      const root = get().directory?.root;
      if (!root) return false;
      try {
        set({ directory: await get().api.trustDirectory({ path: root }) });
        await get().loadTasks();
        return true;
      } catch (err) {
        get().notify('error', errorText(err));
        return false;
      }
    },

    async chooseDirectory(opts = {}) {
      // The picker is modal in the main process; the busy mark keeps the button from stacking dialogs.
      set({ busy: { ...get().busy, 'choose-directory': 'Choosing a folder…' } });
      try {
        const directory = await get().api.chooseDirectory({ readOnly: opts.readOnly ?? false });
        // null: the picker was cancelled (or this host has none); nothing changes.
        if (directory) await switchedTo(directory);
      } catch (err) {
        get().notify('error', errorText(err));
      } finally {
        const { 'choose-directory': _done, ...rest } = get().busy;
        set({ busy: rest });
      }
    },
  };
};
