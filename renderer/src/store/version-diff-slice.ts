/**
 * The two versions of the open task picked for comparison, and their diff:
 * computed by the host, always older → newer, and moved along when a new
 * version of the task arrives.
 */
import type { DiffState, Slice, VersionDiffSlice } from './store-types.js';
import { errorText } from './error-text.js';

const NO_DIFF: DiffState = { a: null, b: null, state: 'idle', result: null, error: null };

/** The version pair picked in History and the host's diff of it. */
export const createVersionDiffSlice: Slice<VersionDiffSlice> = (set, get) => {
  // An answer for a pair (or a task) the user has since left is dropped.
  let diffSeq = 0;

  const loadDiff = async (a: number, b: number, latest = false) => {
    const taskId = get().selectedTaskId;
    if (!taskId) return;
    const mine = ++diffSeq;
    set({ diff: { a, b, latest, state: 'loading', result: get().diff.result, error: null } });
    try {
      const result = await get().api.diffVersions({ taskId, a, b });
      if (mine === diffSeq) set({ diff: { a, b, latest, state: 'ready', result, error: null } });
    } catch (err) {
      if (mine === diffSeq) set({ diff: { a, b, latest, state: 'error', result: null, error: errorText(err) } });
    }
  };

  return {
    diff: NO_DIFF,

    setDiffPair(a, b, opts = {}) {
      if (a === null || b === null || a === b) {
        diffSeq++;
        set({ diff: { ...NO_DIFF, a, b } });
        return;
      }
      // Always diff older → newer, whichever order the versions were picked in.
      void loadDiff(Math.min(a, b), Math.max(a, b), opts.latest === true);
    },

    reloadDiff() {
      const { diff, history } = get();
      if (diff.a === null || diff.b === null) return;
      // The newest two, picked as such, are the newest two of the history as it now stands.
      const [previous, newest] = diff.latest ? history.slice(-2).map((v) => v.version) : [diff.a, diff.b];
      if (previous !== undefined && newest !== undefined) void loadDiff(previous, newest, diff.latest === true);
    },

    clearDiff() {
      diffSeq++;
      set({ diff: NO_DIFF });
    },
  };
};
