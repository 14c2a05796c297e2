/**
 * The host connection: the first load, the live event stream and its status,
 * and how each event refreshes the store (coalesced, so a burst of versions
 * is one reload). Which directory is open is directory-slice's.
 */
import type { HostEvent, StreamStatus } from '../../../shared/api/contract.js';
import type { ActivityEntry, ConnectionSlice, Slice } from './store-types.js';
import type { WaystationApi } from '../../../shared/api/contract.js';
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import { errorText } from './error-text.js';
import { describeTaskEvent } from './activity-text.js';
import { withActivity } from './activity-log.js';
import { firstScreenRows } from './tasks-slice.js';

// Bursts of events (a runner writing versions, a watcher replaying a folder)
// collapse into one update of the list and one reload of the open task.
const COALESCE_MS = 120;
/** Quiet time after the last change before the directory's figures are asked for again. */
const OVERVIEW_SETTLE_MS = 1500;

/** The host connection: initial load, live events, and how each event refreshes the store. */
export function createConnectionSlice(api: WaystationApi): Slice<ConnectionSlice> {
  let unsubscribe: (() => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let overviewTimer: ReturnType<typeof setTimeout> | null = null;
  let listDirty = false;
  let detailDirty = false;
  // Rows the host sent with task-changed, by task id: the last one of a burst wins.
  let rows = new Map<string, TaskSummary>();
  // The first load under way, until dispose: init is asked for twice (see ConnectionSlice.init).
  let starting: Promise<void> | null = null;
  // Counts the host's numberings of its events: a host started again numbers from 1 again (it says resync), and
  // a runner's line under an id already seen is a new line, not a replay.
  let numbering = 0;

  return (set, get) => {
    const flush = () => {
      timer = null;
      const { loadTasks, patchTasks, refreshSelected } = get();
      // A full listing already holds every changed row; without one, only the changed rows are replaced.
      if (listDirty) void loadTasks();
      else patchTasks([...rows.values()]);
      if (detailDirty) void refreshSelected();
      listDirty = detailDirty = false;
      rows = new Map();
      // The directory's figures follow once changes settle: a running task changes them several times a second.
      if (overviewTimer) clearTimeout(overviewTimer);
      overviewTimer = setTimeout(() => {
        overviewTimer = null;
        void get().loadOverview();
      }, OVERVIEW_SETTLE_MS);
    };
    const schedule = (list: boolean, detail: boolean, row?: TaskSummary) => {
      listDirty ||= list;
      detailDirty ||= detail;
      if (row) rows.set(row.task_id, row);
      if (!timer) timer = setTimeout(flush, COALESCE_MS);
    };
    const addActivity = (taskId: string, entry: ActivityEntry) => {
      const current = get().activity[taskId] ?? [];
      const next = withActivity(current, entry);
      if (next !== current) set({ activity: { ...get().activity, [taskId]: [...next] } });
    };
    // A version is listed once, whether the host's change or the task's log told of it first.
    const versionEntry = (version: number, at: string): ActivityEntry => ({
      key: `version:${version}`,
      at,
      kind: 'version',
      text: `version ${version} written`,
    });

    const start = async () => {
      unsubscribe?.();
      unsubscribe = api.subscribe(
        (event) => get().handleEvent(event),
        get().lastEventId,
        (status) => get().handleStreamStatus(status),
      );
      // The first screen of rows is asked for beside the directory, not after it: on a directory of thousands of
      // tasks those rows are what the page waits for. With no directory open the host refuses it, and it is dropped.
      const firstScreen = firstScreenRows(api);
      firstScreen.catch(() => {});
      try {
        const directory = await api.getDirectory({});
        set({ directory });
        // With no directory open there is nothing to list; the list says how to open one.
        if (directory.root !== null) await get().loadTasks(firstScreen);
        // The stream may have dropped meanwhile; then it, not this answer, says when the host is back.
        if (get().connection === 'connecting') set({ connection: 'live' });
      } catch (err) {
        // A token the host refuses is said by the connection itself (handleStreamStatus), once, not as a toast.
        if (get().connection === 'refused') return;
        set({ connection: 'offline' });
        get().notify('error', errorText(err));
      }
      await get().refreshAgents();
      // Last: the figures read every task's latest version, and the list is already usable without them.
      await get().loadOverview();
    };

    return {
      api,
      connection: 'connecting',
      connectionProblem: null,
      lastEventId: undefined,

      init() {
        starting ??= start();
        return starting;
      },

      dispose() {
        starting = null;
        unsubscribe?.();
        unsubscribe = null;
        if (timer) clearTimeout(timer);
        timer = null;
        if (overviewTimer) clearTimeout(overviewTimer);
        overviewTimer = null;
      },

      handleStreamStatus(status: StreamStatus) {
        if (status.state === 'refused') {
          set({ connection: 'refused', connectionProblem: { reason: status.reason, retryAt: 0 } });
          return;
        }
        if (get().connection === 'refused') return;
        if (status.state === 'offline') {
          set({ connection: 'offline', connectionProblem: { reason: status.reason, retryAt: status.retryAt } });
          return;
        }
        const wasOffline = get().connection === 'offline';
        set({ connection: 'live', connectionProblem: null });
        // Back after a gap: whatever happened meanwhile is read again rather than trusted to the replay.
        if (wasOffline) {
          void get().reloadDirectory();
          schedule(true, true);
        }
      },

      handleEvent(event: HostEvent) {
        set({
          lastEventId: event.id,
          ...(get().connection === 'offline' || get().connection === 'refused' ? {} : { connection: 'live' as const }),
        });
        const selected = get().selectedTaskId;
        const at = new Date().toISOString();
        switch (event.type) {
          case 'task-changed':
          case 'task-removed':
            // The newest version of the watcher's batch (the task's log tells of each one, with its time). The row
            // sent along, when it is of that version, says when it was written.
            if (event.type === 'task-changed' && event.version !== null) {
              const written = event.summary?.version === event.version ? event.summary.updated_at : null;
              addActivity(event.taskId, versionEntry(event.version, written ?? at));
            }
            // A row sent with the change replaces that row; a task removed, or a change without one, relists.
            if (event.type === 'task-changed' && event.summary) schedule(false, event.taskId === selected, event.summary);
            else schedule(true, event.taskId === selected);
            break;
          case 'directory-changed':
            // Another folder: what was open belonged to the old one.
            if (event.root !== (get().directory?.root ?? null)) get().selectTask(null);
            // The same folder is announced again when its waystation.config.json changes: its agents may differ either way.
            void get().refreshAgents();
            void get().reloadDirectory();
            schedule(true, true);
            break;
          case 'resync':
            // The ids after it are another numbering (a host started again): they say nothing of the ones before.
            numbering++;
            void get().reloadDirectory();
            schedule(true, true);
            break;
          case 'directory-notice':
            // A message about the directory rather than a task (its watcher failed, recovery stopped): no task's feed would show it.
            get().notify('error', event.detail);
            break;
          case 'runner':
            if (event.state === 'output' && !event.detail.trim()) break;
            addActivity(event.taskId, {
              key: `runner:${numbering}:${event.id}`,
              at,
              kind: 'runner',
              text: event.state === 'output' ? event.detail : `Runner ${event.state}${event.detail ? `: ${event.detail}` : ''}`,
            });
            if (event.state === 'started') set({ runners: { ...get().runners, [event.taskId]: true } });
            if (event.state === 'exited') {
              get().forgetStop(event.taskId);
              const { [event.taskId]: _gone, ...rest } = get().runners;
              // What was said about the run (started, approved, resumed) is over once its runner is.
              set({
                runners: rest,
                notices: get().notices.filter((n) => n.taskId !== event.taskId || n.kind === 'error'),
              });
            }
            if (event.state !== 'output') schedule(true, event.taskId === selected);
            break;
          case 'task-event': {
            const e = event.event;
            if (event.taskId === selected && get().events.taskId === selected) void get().loadEvents();
            // Runners are reported as runner events, with their output; listing them twice is noise.
            if (e.type === 'runner') break;
            // Every version the log records, with the time it was written: a watcher batch that passed over some
            // announces only its newest as task-changed.
            if (e.type === 'version') {
              if (e.version !== undefined) addActivity(event.taskId, versionEntry(e.version, e.at || at));
              break;
            }
            addActivity(event.taskId, { key: `event:${e.id}:${e.at}`, at: e.at || at, kind: 'event', text: describeTaskEvent(e) });
            break;
          }
        }
      },
    } satisfies ConnectionSlice;
  };
}
