import type { DetailSlice, DiffState, EventsState, MessagesState, Slice } from './store-types.js';
import { errorText } from './error-text.js';
import { toApiError } from '../../../shared/api/contract.js';

/** How long a just-started task is waited for before "not found" is believed. */
const WAIT_FOR_NEW_MS = 60_000;

const NO_DIFF: DiffState = { a: null, b: null, state: 'idle', result: null, error: null };
const NO_EVENTS: EventsState = { state: 'idle', taskId: null, items: [], skipped: 0, error: null };
const NO_MESSAGES: MessagesState = { state: 'idle', taskId: null, version: null, head: null, items: [], error: null, following: null };

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
  diff: NO_DIFF,
  messages: NO_MESSAGES,
  events: NO_EVENTS,
} satisfies Partial<DetailSlice>;

/** The open task: its detail, history, step results, verification and the version diff. */
export const createDetailSlice: Slice<DetailSlice> = (set, get) => {
  // Answers for a task the user has since left are dropped, so a slow
  // response can never paint the wrong task.
  let detailSeq = 0;
  let diffSeq = 0;
  let messagesSeq = 0;
  let eventsSeq = 0;
  // A task just started, looked for until it appears or the time is up.
  let waitingFor: { taskId: string; until: number; delay: number } | null = null;
  let waitTimer: ReturnType<typeof setTimeout> | null = null;
  // One read at a time: a burst of live events becomes one more read after the current one.
  let eventsInFlight: Promise<void> | null = null;
  let eventsAgain = false;

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
    ...NOTHING_LOADED,

    selectTask(taskId, opts = {}) {
      if (taskId === get().selectedTaskId) return;
      diffSeq++;
      messagesSeq++;
      eventsSeq++;
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
      messagesSeq++;
      set({ viewedVersion: next, detailState: 'loading', messages: NO_MESSAGES });
      void get().refreshSelected();
    },

    async loadMessages() {
      const taskId = get().selectedTaskId;
      const detail = get().detail;
      const version = detail?.version ?? null;
      if (!taskId || version === null) return;
      const current = get().messages;
      if (current.taskId === taskId && (current.version === version || current.following === version) && current.state !== 'error') return;
      const head = detail?.checkpoint?.history?.head ?? null;
      // A task running on: the messages shown stay on screen, and only those appended since are fetched.
      const continues = current.state === 'ready' && current.taskId === taskId && current.version !== null && version > current.version;
      const mine = ++messagesSeq;
      if (continues) set({ messages: { ...current, following: version } });
      else set({ messages: { state: 'loading', taskId, version, head, items: [], error: null, following: null } });
      try {
        const answer = await get().api.getMessages(
          continues ? { taskId, version, after: { head: current.head, count: current.items.length } } : { taskId, version },
        );
        if (mine !== messagesSeq) return;
        // The host answers from the caller's count when the new history continues the one shown, else from 0.
        const items =
          answer.from > 0 && answer.from <= current.items.length
            ? [...current.items.slice(0, answer.from), ...answer.messages]
            : answer.messages;
        set({ messages: { state: 'ready', taskId, version, head, items, error: null, following: null } });
      } catch (err) {
        if (mine === messagesSeq)
          set({ messages: { state: 'error', taskId, version, head, items: [], error: errorText(err), following: null } });
      }
    },

    async loadEvents() {
      if (eventsInFlight) {
        eventsAgain = true;
        return eventsInFlight;
      }
      const run = async () => {
        const taskId = get().selectedTaskId;
        if (!taskId) return;
        const current = get().events;
        const held = current.taskId === taskId && current.state === 'ready' ? current : null;
        const after = held?.items.at(-1)?.id ?? 0;
        const mine = ++eventsSeq;
        if (!held) set({ events: { ...NO_EVENTS, state: 'loading', taskId } });
        try {
          const answer = await get().api.getEvents({ taskId, after });
          if (mine !== eventsSeq || get().selectedTaskId !== taskId) return;
          // A log that starts over (a task folder made anew) has ids at or below the last one held: read it whole.
          if (held && answer.events.length > 0 && answer.events[0].id <= after) {
            set({ events: { ...NO_EVENTS, taskId } });
            eventsAgain = true;
            return;
          }
          const items = held ? [...held.items, ...answer.events] : answer.events;
          set({ events: { state: 'ready', taskId, items, skipped: (held?.skipped ?? 0) + answer.skipped, error: null } });
        } catch (err) {
          if (mine === eventsSeq && get().selectedTaskId === taskId)
            set({ events: { ...NO_EVENTS, state: 'error', taskId, error: errorText(err) } });
        }
      };
      eventsInFlight = (async () => {
        do {
          eventsAgain = false;
          await run();
        } while (eventsAgain);
      })().finally(() => {
        eventsInFlight = null;
      });
      return eventsInFlight;
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
