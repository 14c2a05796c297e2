/**
 * The open task: which one, which version, its detail and history, step
 * results read on demand, and its verification. Its messages, events and the
 * version diff are slices of their own (task-feed-slice, version-diff-slice),
 * cleared here when the task or version changes.
 */
import type { DetailSlice, Slice } from './store-types.js';
import { errorText } from './error-text.js';
import { toApiError } from '../../../shared/api/api-error.js';

/** How long a just-started task is waited for before "not found" is believed. */
const WAIT_FOR_NEW_MS = 60_000;

/** What the task view holds before anything of a task is loaded: at start, and on every change of task. */
const NOTHING_LOADED = {
  viewedVersion: null,
  detail: null,
  detailState: 'idle',
  detailError: null,
  history: [],
  historyState: 'idle',
  stepResults: {},
  verifyReport: null,
  verifyState: 'idle',
  verifyError: null,
} satisfies Partial<DetailSlice>;

/** The open task: its detail, history, step results and verification. */
export const createDetailSlice: Slice<DetailSlice> = (set, get) => {
  // Answers for a task the user has since left are dropped, so a slow
  // response can never paint the wrong task.
  let detailSeq = 0;
  // A task just started, looked for until it appears or the time is up.
  let waitingFor: { taskId: string; until: number; delay: number } | null = null;
  let waitTimer: ReturnType<typeof setTimeout> | null = null;
  return {
    selectedTaskId: null,
    ...NOTHING_LOADED,

    selectTask(taskId, opts = {}) {
      if (taskId === get().selectedTaskId) return;
      get().clearDiff();
      get().clearFeeds();
      // A step a link asked to show belongs to the task it named (openStep names it again after this).
      get().clearStepFocus();
      if (waitTimer) clearTimeout(waitTimer);
      waitTimer = null;
      waitingFor = opts.expectNew && taskId ? { taskId, until: Date.now() + WAIT_FOR_NEW_MS, delay: 250 } : null;
      set({ selectedTaskId: taskId, ...NOTHING_LOADED, detailState: !taskId ? 'idle' : waitingFor ? 'waiting' : 'loading' });
      if (!taskId) return;
      void get()
        .refreshSelected()
        .then(() => {
          // Opening a task checks its artifacts in full (sha256): a listing only stats them, so a same-size
          // rewrite shows here first, and the host then tells every list that the task drifted.
          const cp = get().detail?.checkpoint;
          if (get().selectedTaskId === taskId && cp && cp.artifacts.length > 0 && !get().detail?.read_only) void get().verify();
        });
    },

    viewVersion(version) {
      const detail = get().detail;
      const latest = detail?.latest_version ?? null;
      // Asking for the latest is following the latest: new versions keep arriving in the view.
      const next = version === null || version === latest ? null : version;
      if (next === get().viewedVersion) return;
      get().clearMessages();
      set({ viewedVersion: next, detailState: 'loading' });
      void get().refreshSelected();
    },

    async refreshSelected() {
      const taskId = get().selectedTaskId;
      if (!taskId) return;
      const mine = ++detailSeq;
      const api = get().api;
      const version = get().viewedVersion;
      // The versions already listed stay: the host sends the ones after the last, when that one is still the task's.
      const held = get().historyState === 'ready' ? get().history : [];
      const last = held.at(-1);
      const [detail, history] = await Promise.allSettled([
        api.getTask(version === null ? { taskId } : { taskId, version }),
        api.getHistory(last ? { taskId, after: { version: last.version, updated_at: last.updated_at, bytes: last.bytes } } : { taskId }),
      ]);
      if (mine !== detailSeq || get().selectedTaskId !== taskId || get().viewedVersion !== version) return;
      if (detail.status === 'fulfilled') {
        if (waitingFor?.taskId === taskId) waitingFor = null;
        set({ detail: detail.value, detailState: 'ready', detailError: null });
      } else if (
        waitingFor?.taskId === taskId &&
        toApiError(detail.reason).code === 'not-found' &&
        Date.now() < waitingFor.until &&
        !get().detail
      ) {
        // A task just started is not there until its first version is: wait for it (its first event
        // refreshes this view; the retry covers a missed one) instead of saying it does not exist.
        const wait = waitingFor;
        set({ detailState: 'waiting', detailError: null });
        waitTimer = setTimeout(() => {
          waitTimer = null;
          if (get().selectedTaskId === taskId && get().detailState === 'waiting') void get().refreshSelected();
        }, wait.delay);
        wait.delay = Math.min(wait.delay * 2, 2000);
        return;
      } else if (toApiError(detail.reason).code === 'not-found') {
        // The task is gone from the directory (removed while shown): what was shown of it goes too, and the view says
        // so, rather than go on offering Fork and Edit for a task that no longer exists.
        set({ detail: null, detailState: 'error', detailError: errorText(detail.reason), history: [], historyState: 'idle' });
        return;
      } else {
        set({ detailState: 'error', detailError: errorText(detail.reason) });
      }
      if (history.status === 'fulfilled') {
        const { after, versions } = history.value;
        set({ history: after > 0 ? [...held.filter((v) => v.version <= after), ...versions] : versions, historyState: 'ready' });
      } else {
        set({ historyState: 'error' });
      }

      // A newly written version moves an open "latest vs previous" diff along with it.
      if (history.status === 'fulfilled') get().reloadDiff();
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
  };
};
