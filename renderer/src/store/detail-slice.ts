import type { DetailSlice, DiffState, Slice } from './store-types.js';
import { errorText } from './error-text.js';

const NO_DIFF: DiffState = { a: null, b: null, state: 'idle', result: null, error: null };

/** The open task: its detail, history, step results, verification and the version diff. */
export const createDetailSlice: Slice<DetailSlice> = (set, get) => {
  // Answers for a task the user has since left are dropped, so a slow
  // response can never paint the wrong task.
  let detailSeq = 0;
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
    selectedTaskId: null,
    detail: null,
    detailState: 'idle',
    detailError: null,
    history: [],
    historyState: 'idle',
    stepResults: {},
    verifyReport: null,
    verifyState: 'idle',
    verifyError: null,
    diff: NO_DIFF,

    selectTask(taskId) {
      if (taskId === get().selectedTaskId) return;
      diffSeq++;
      set({
        selectedTaskId: taskId,
        detail: null,
        detailState: taskId ? 'loading' : 'idle',
        detailError: null,
        history: [],
        historyState: 'idle',
        stepResults: {},
        verifyReport: null,
        verifyState: 'idle',
        verifyError: null,
        diff: NO_DIFF,
      });
      if (taskId) void get().refreshSelected();
    },

    async refreshSelected() {
      const taskId = get().selectedTaskId;
      if (!taskId) return;
      const mine = ++detailSeq;
      const api = get().api;
      const [detail, history] = await Promise.allSettled([api.getTask({ taskId }), api.getHistory({ taskId })]);
      if (mine !== detailSeq || get().selectedTaskId !== taskId) return;
      if (detail.status === 'fulfilled') {
        set({ detail: detail.value, detailState: 'ready', detailError: null });
      } else {
        set({ detailState: 'error', detailError: errorText(detail.reason) });
      }
      if (history.status === 'fulfilled') set({ history: history.value, historyState: 'ready' });
      else set({ historyState: 'error' });

      // A newly written version moves an open "latest vs previous" diff along with it.
      const { diff } = get();
      if (history.status === 'fulfilled' && diff.a !== null && diff.b !== null) void loadDiff(diff.a, diff.b);
    },

    async loadStepResult(stepId, version) {
      const taskId = get().selectedTaskId;
      if (!taskId) return;
      const key = `${version}:${stepId}`;
      const existing = get().stepResults[key];
      if (existing && existing.state !== 'error') return;
      set({ stepResults: { ...get().stepResults, [key]: { state: 'loading' } } });
      try {
        const { value, found } = await get().api.getStepResult({ taskId, stepId, version });
        if (get().selectedTaskId !== taskId) return;
        set({ stepResults: { ...get().stepResults, [key]: { state: 'ready', value, found } } });
      } catch (err) {
        if (get().selectedTaskId !== taskId) return;
        set({ stepResults: { ...get().stepResults, [key]: { state: 'error', error: errorText(err) } } });
      }
    },

    async verify() {
      const taskId = get().selectedTaskId;
      if (!taskId) return;
      set({ verifyState: 'loading', verifyError: null });
      try {
        const report = await get().api.verifyTask({ taskId });
        if (get().selectedTaskId === taskId) set({ verifyReport: report, verifyState: 'ready' });
      } catch (err) {
        if (get().selectedTaskId === taskId) set({ verifyState: 'error', verifyError: errorText(err) });
      }
    },

    setDiffPair(a, b) {
      if (a === null || b === null || a === b) {
        diffSeq++;
        set({ diff: { ...NO_DIFF, a, b } });
        return;
      }
      // Always diff older → newer, whichever order the versions were picked in.
      void loadDiff(Math.min(a, b), Math.max(a, b));
    },
  };
};
