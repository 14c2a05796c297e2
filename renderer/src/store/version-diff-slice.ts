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

  const loadDiff = async (a: number, b: number) => {
    const taskId = get().selectedTaskId;
    if (!taskId) return;
    const mine = ++diffSeq;
    set({ diff: { a, b, state: 'loading', result: get().diff.result, error: null } });
    try {
      const result = await get().api.diffVersions({ taskId, a, b });
      if (mine === diffSeq) set({ diff: { a, b, state: 'ready', result, error: null } });
    } catch (err) {
      if (mine === diffSeq) set({ diff: { a, b, state: 'error', result: null, error: errorText(err) } });
    }
  };

  return {
    diff: NO_DIFF,

    setDiffPair(a, b) {
      if (a === null || b === null || a === b) {
        diffSeq++;
        set({ diff: { ...NO_DIFF, a, b } });
        return;
      }
      // Always diff older → newer, whichever order the versions were picked in.
      void loadDiff(Math.min(a, b), Math.max(a, b));
    },

    reloadDiff() {
      const { diff } = get();
      if (diff.a !== null && diff.b !== null) void loadDiff(diff.a, diff.b);
    },

    clearDiff() {
      diffSeq++;
      set({ diff: NO_DIFF });
    },
  };
};
