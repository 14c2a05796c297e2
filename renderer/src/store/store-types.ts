/**
 * The renderer's one store, declared as the union of its slices.
 *
 * Server data (tasks, details, history, diffs) is replaced when the host
 * answers (a changed task's row by a new row object), never mutated in place; what the UI derives from it (the
 * filtered list, counts) is computed in selectors.
 */
import type { StateCreator } from 'zustand';
import type {
  AgentInfo,
  ApiInput,
  DiffResult,
  DirectoryInfo,
  DirectoryOverview,
  HostEvent,
  StreamStatus,
  TaskDetail,
  TaskEventEntry,
  VersionEntry,
  WaystationApi,
} from '../../../shared/api/contract.js';
import type { HistoryMessage } from '../../../shared/checkpoint/schema.js';
import type { RewindPlan } from '../../../shared/checkpoint/rewind-plan.js';
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import type { VerifyReport } from '../../../shared/checkpoint/verify-report.js';
import type { TaskFilter } from './task-filter.js';

export type LoadState = 'idle' | 'loading' | 'ready' | 'error';
/** The open task's detail: `waiting` while the task is not in the directory yet (just started, first version not written). */
export type DetailLoadState = LoadState | 'waiting';

export interface ConnectionSlice {
  api: WaystationApi;
  /** `live` once the first listing arrived and events flow; `offline` when the host stopped answering. */
  /** `refused`: the host refuses this page's token (StreamStatus): nothing is tried again. */
  connection: 'connecting' | 'live' | 'offline' | 'refused';
  /** While offline: why, and when the next attempt to reconnect is (epoch ms). */
  connectionProblem: { reason: string; retryAt: number } | null;
  /** The event stream's status, as the API reports it. */
  handleStreamStatus(status: StreamStatus): void;
  lastEventId: number | undefined;
  /**
   * Load the directory, tasks and agents, and subscribe to live events. A
   * second call before `dispose` returns the first one's promise: the page
   * starts it before its first render, and the app's mount asks again.
   */
  init(): Promise<void>;
  /** Stop listening to the host. */
  dispose(): void;
  handleEvent(event: HostEvent): void;
}

export interface DirectorySlice {
  directory: DirectoryInfo | null;
  agents: AgentInfo[];
  /** Ask the host for its agents again: a registered module may have been edited since the last answer. */
  refreshAgents(): Promise<void>;
  /** Ask the host which directory is open again (it announced a change, or the stream came back). */
  reloadDirectory(): Promise<void>;
  /** Open a folder from the recent list (desktop; the web host serves one directory). */
  openDirectory(path: string): Promise<void>;
  /** Desktop: show the folder picker and open the folder chosen; nothing happens when it is cancelled. */
  chooseDirectory(opts?: { readOnly?: boolean }): Promise<void>;
  /** Trust the open directory, as the trust prompt asked, so its tasks run; false when the host refused. */
  trustDirectory(): Promise<boolean>;
}

export interface TasksSlice {
  tasks: TaskSummary[];
  tasksState: LoadState;
  tasksError: string | null;
  filter: TaskFilter;
  setFilter(filter: Partial<TaskFilter>): void;
  /**
   * Read the task list. A first load (nothing listed yet) shows a screenful
   * of the most recent rows as soon as the host has them (`firstScreen`, when
   * that request was made already: see `firstScreenRows`), then the whole list.
   */
  loadTasks(firstScreen?: Promise<TaskSummary[]>): Promise<void>;
  /**
   * Replace the rows of these tasks with summaries the host sent along with a
   * change, adding any not listed yet: one row changes, not the whole list.
   */
  patchTasks(summaries: readonly TaskSummary[]): void;
  /** Figures across the directory's tasks (getOverview), for the root they were read in. */
  overview: { root: string; figures: DirectoryOverview } | null;
  overviewError: string | null;
  /** Ask the host for the directory's figures again. */
  loadOverview(): Promise<void>;
}

export interface StepResultState {
  state: LoadState;
  value?: unknown;
  found?: boolean;
  error?: string;
}

export interface DiffState {
  a: number | null;
  b: number | null;
  /** Picked as "the latest with the previous": a new version moves the pair along with it. */
  latest?: boolean;
  state: LoadState;
  result: DiffResult | null;
  error: string | null;
}

/** The conversation history of the task at the version shown. */
export interface MessagesState {
  state: LoadState;
  /** Which task and version `items` belong to, and the head of that version's history. */
  taskId: string | null;
  version: number | null;
  head: string | null;
  items: HistoryMessage[];
  error: string | null;
  /**
   * A later version of the same task whose messages are being fetched as a
   * continuation of `items`: until they arrive, `items` stay on screen.
   */
  following: number | null;
}

/** The open task's event log, as far as it has been read. */
export interface EventsState {
  state: LoadState;
  taskId: string | null;
  items: TaskEventEntry[];
  /** Older events the host left out of its first answer. */
  skipped: number;
  error: string | null;
}

export interface DetailSlice {
  selectedTaskId: string | null;
  /** The version the task view shows; null follows the latest as new versions arrive. */
  viewedVersion: number | null;
  detail: TaskDetail | null;
  detailState: DetailLoadState;
  detailError: string | null;
  history: VersionEntry[];
  historyState: LoadState;
  /** Keyed by `${version}:${stepId}`, since a result belongs to one version. */
  stepResults: Record<string, StepResultState>;
  verifyReport: VerifyReport | null;
  verifyState: LoadState;
  verifyError: string | null;
  /** Open a task; `expectNew` when it was just started and may not have written its first version yet. */
  selectTask(taskId: string | null, opts?: { expectNew?: boolean }): void;
  /** Show the whole task at an older version (read-only), or the latest again with null. */
  viewVersion(version: number | null): void;
  /** Reload the selected task's detail and history (after an event or an action). */
  refreshSelected(): Promise<void>;
  loadStepResult(stepId: string, version: number): Promise<void>;
  verify(): Promise<void>;
}

export interface TaskFeedSlice {
  messages: MessagesState;
  events: EventsState;
  /** Load the messages of the version shown, unless they are already loaded. */
  loadMessages(): Promise<void>;
  /** Read the open task's events: all on first call, then those after the last one held. */
  loadEvents(): Promise<void>;
  /** Forget the messages shown (another version is opened); an answer still in flight is dropped. */
  clearMessages(): void;
  /** Forget the messages and events shown (another task is opened); answers still in flight are dropped. */
  clearFeeds(): void;
}

export interface VersionDiffSlice {
  diff: DiffState;
  /** Pick two versions to diff; `latest` when the pair is the newest two, to be moved along as versions arrive. */
  setDiffPair(a: number | null, b: number | null, opts?: { latest?: boolean }): void;
  /** Compute the picked pair's diff again (a new version arrived); nothing when no pair is picked. */
  reloadDiff(): void;
  /** Forget the pair picked (another task is opened). */
  clearDiff(): void;
}

export interface Notice {
  id: number;
  kind: 'info' | 'success' | 'error';
  text: string;
  /** The task the notice is about: its success and info notices go once the task's runner exits. */
  taskId?: string;
}

export interface ActivityEntry {
  /**
   * What the entry is, so it is listed once however it arrives: `version:N` for a version (the host's change and
   * the task's own log both report it), `event:ID:AT` for a line of the task's log, and the host's event id for a
   * runner's, within one run of the host (its numbering starts again when it does; see activity-log.ts).
   */
  key: string;
  /** When it happened: the time the task's log or checkpoint records, else when the page heard of it. */
  at: string;
  text: string;
  kind: 'runner' | 'event' | 'version';
}

export interface EditOutcome {
  ok: boolean;
  errors: string[];
  version?: number | null;
}

export interface OperationsSlice {
  /** Long operations in flight, by key (`resume:<task>`), with a label for the progress indicator. */
  busy: Record<string, string>;
  notices: Notice[];
  /** Live runner output and task events, per task, newest last, bounded. */
  activity: Record<string, ActivityEntry[]>;
  /** Tasks a runner of this host is driving now (between its started and exited events). */
  runners: Record<string, true>;
  resume(taskId: string): Promise<boolean>;
  approve(taskId: string): Promise<boolean>;
  reject(taskId: string, reason: string): Promise<boolean>;
  /**
   * `expectedVersion`: the version the editor opened; the host refuses the edit when the task has moved on since.
   * `later`: whether the steps after it that ran stay as they are (keep) or are set back to pending (rerun, the host's default).
   */
  editStep(taskId: string, stepId: string, value: unknown, expectedVersion?: number, later?: 'keep' | 'rerun'): Promise<EditOutcome>;
  /** Start a task; the new task's id, or why it could not start (shown where the start was asked for, not as a notice). */
  startTask(input: ApiInput<'startTask'>): Promise<{ taskId: string } | { error: string }>;
  notify(kind: Notice['kind'], text: string, taskId?: string): void;
  dismissNotice(id: number): void;
}

/** A stop this window asked for, while the task's run has not ended yet. */
export interface StopRequest {
  at: string;
  /** The runner's process was ended (Force stop), rather than asked to stop at its next step or effect. */
  forced: boolean;
}

/** The rerun a person is looking at before anything is written: the host's plan and the effects chosen to redo. */
export interface RewindDraft {
  taskId: string;
  stepId: string;
  state: LoadState;
  /** The host's plan (previewRewind), for the version it names; null until it answers. */
  plan: RewindPlan | null;
  /** Ids of the plan's effects to perform again under a new key; every other effect is kept. */
  redo: string[];
  /** Why the preview or the rerun was refused, as the host said it. */
  error: string | null;
}

export interface TimeTravelSlice {
  /** Stops asked for by task id, until the task's run ends or it is resumed. */
  stopRequests: Record<string, StopRequest>;
  /** Ask the task's runner to stop at its next step or effect; with `force`, end its process now. */
  stopTask(taskId: string, opts?: { force?: boolean }): Promise<boolean>;
  /** The task's run ended (or a new one began): a stop asked of it is over. */
  forgetStop(taskId: string): void;
  /** Fork a version into a new task and open it; why not, when the host refused (shown in the dialog). */
  forkTask(input: {
    taskId: string;
    version: number;
    newTaskId?: string;
    reason?: string;
  }): Promise<{ taskId: string } | { error: string }>;
  /** The rerun being previewed, or null when none is. */
  rewind: RewindDraft | null;
  /** Ask the host what a rerun from `stepId` would do; nothing is written. */
  previewRewind(taskId: string, stepId: string): Promise<void>;
  /** Keep (the default) or redo one effect of the plan shown. */
  chooseRedo(effectId: string, redo: boolean): void;
  /** Close the preview; nothing was written. */
  cancelRewind(): void;
  /** Write the rerun shown, at the version it was shown for, then (with `resume`) resume the task. */
  confirmRewind(opts?: { resume?: boolean; reason?: string }): Promise<boolean>;
}

export type Theme = 'system' | 'light' | 'dark';
export type TabId = 'plan' | 'artifacts' | 'effects' | 'errors' | 'run' | 'messages' | 'history' | 'events';

export interface UiSlice {
  theme: Theme;
  tab: TabId;
  startDialogOpen: boolean;
  /** A step to bring into view and focus once its task's plan shows it (a link named it); null when none. */
  stepFocus: { taskId: string; stepId: string } | null;
  setTheme(theme: Theme): void;
  setTab(tab: TabId): void;
  setStartDialogOpen(open: boolean): void;
  /** Open a task at one of its steps: its Plan tab, with that step in view and focused. */
  openStep(taskId: string, stepId: string): void;
  /** The step asked for is in view: forget it, so a later render does not take the focus again. */
  clearStepFocus(): void;
}

export type Store = ConnectionSlice &
  DirectorySlice &
  TasksSlice &
  DetailSlice &
  TaskFeedSlice &
  VersionDiffSlice &
  OperationsSlice &
  TimeTravelSlice &
  UiSlice;

/** A slice creator over the whole store. */
export type Slice<T> = StateCreator<Store, [], [], T>;
