/**
 * The one API between the renderer and the Waystation host.
 *
 * Declared once here; implemented by the host service (electron/host), served
 * over IPC by the Electron preload and over loopback HTTP + SSE in browser
 * mode. Every input is validated with these zod schemas on the serving side,
 * because a renderer is never trusted to send what its types promise.
 */
import { z } from 'zod';
import type { Checkpoint, HistoryMessage } from '../checkpoint/schema.js';
import { RecoveryMode } from '../checkpoint/schema.js';
import type { Problem } from '../checkpoint/problem.js';
import { TaskSummary } from '../checkpoint/task-summary.js';
import { RecoveryReport } from '../checkpoint/recovery-report.js';
import { VerifyReport } from '../checkpoint/verify-report.js';
import type { RewindPlan } from '../checkpoint/rewind-plan.js';
import type { ChangeSummary, StructuredDiffEntry } from '../diff/semantic-summary.js';
import type { LangGraphChange } from '../diff/langgraph-change.js';
import { ApiError, type ApiErrorBody } from './api-error.js';

/**
 * A task id as it may cross the API. Ids name folders and files under the
 * root, so separators, NUL and dot-segments are refused before any handler
 * touches the disk.
 */
const TaskId = z
  .string()
  .min(1)
  .max(200)
  .refine((id) => !/[/\\\0]/.test(id) && id !== '.' && id !== '..', 'a task id cannot contain "/", "\\" or NUL, nor be "." or ".."');
const Version = z.number().int().positive();
/** New values for a LangGraph thread's channels: channel name -> value. */
const ThreadValues = z
  .record(z.string().min(1).max(200), z.unknown())
  .refine((v) => Object.keys(v).length > 0, 'name at least one channel to set')
  .refine((v) => Object.keys(v).length <= 100, 'at most 100 channels at once');

/** Input schema of each method, by method name. Method names double as IPC channel suffixes and RPC routes. */
export const apiInputs = {
  getDirectory: z.object({}),
  /** A recent folder, opened again; without `readOnly`, in the mode it was last opened in. */
  openDirectory: z.object({ path: z.string().min(1).max(4096), readOnly: z.boolean().optional() }),
  /** Desktop only: shows the folder picker and opens the folder chosen, read-only if asked. Browser mode answers with `null`. */
  chooseDirectory: z.object({ readOnly: z.boolean().default(false) }),
  /** What trusting the open directory would let run: its registered agents and the tasks that would resume. */
  getDirectoryTrust: z.object({}),
  /** Trust the open directory (named, so the trust given is for the folder the prompt showed), and run it. */
  trustDirectory: z.object({ path: z.string().min(1).max(4096) }),
  /**
   * Every task's row, once the whole list is read. With `limit`, a first
   * screen instead: at most that many rows, the most recently updated first,
   * answered as soon as that many are read (or the list is done), chosen among
   * the rows read so far while the host is still reading a large directory.
   * A caller shows it, then asks for the whole list.
   */
  listTasks: z.object({ limit: z.number().int().positive().max(10_000).optional() }),
  getTask: z.object({ taskId: TaskId, version: Version.optional() }),
  getHistory: z.object({
    taskId: TaskId,
    /** The last entry the caller shows: only the versions after it are sent, when it is still the task's. */
    after: z.object({ version: Version, updated_at: z.string().max(100), bytes: z.number().int().nonnegative() }).optional(),
  }),
  getStepResult: z.object({ taskId: TaskId, stepId: z.string().min(1).max(200), version: Version.optional() }),
  getMessages: z.object({
    taskId: TaskId,
    version: Version.optional(),
    /** The history the caller already shows (the head and count of the version it read): only what follows it is sent. */
    after: z.object({ head: z.string().min(1).max(200).nullable(), count: z.number().int().nonnegative() }).optional(),
  }),
  /** The task's event log (what `waystation tail` prints): the events after id `after`, oldest first. */
  getEvents: z.object({ taskId: TaskId, after: z.number().int().nonnegative().default(0) }),
  diffVersions: z.object({ taskId: TaskId, a: Version, b: Version }),
  verifyTask: z.object({ taskId: TaskId }),
  /** Figures across the open directory's tasks: tokens and cost summed, the slowest steps. */
  getOverview: z.object({}),
  listAgents: z.object({}),
  /**
   * Desktop: a system notification from the main process (a task now waits for
   * a person). Browser mode answers `{ shown: false }`: the page uses the
   * browser's own Notification once the person allowed it.
   */
  showNotification: z.object({ title: z.string().min(1).max(200), body: z.string().max(1000).default(''), taskId: TaskId.optional() }),
  startTask: z.object({
    agent: z.string().min(1).max(200),
    options: z.record(z.string(), z.unknown()).default({}),
    mode: RecoveryMode.default('manual'),
    taskId: TaskId.optional(),
  }),
  resumeTask: z.object({ taskId: TaskId }),
  approveResume: z.object({ taskId: TaskId, by: z.string().min(1).max(200).optional() }),
  rejectResume: z.object({
    taskId: TaskId,
    reason: z.string().trim().min(1, 'a reason is required to reject a resume').max(10_000),
    by: z.string().min(1).max(200).optional(),
  }),
  editStepResult: z.object({
    taskId: TaskId,
    stepId: z.string().min(1).max(200),
    value: z.unknown(),
    /** The version the editor opened: the edit is refused when the task has moved on since. */
    expectedVersion: Version.optional(),
    /** The steps after the edited one: rerun (the default: they were computed from the old value), or keep them as they are. */
    later: z.enum(['rerun', 'keep']).optional(),
  }),
  /** Ask the task's runner to stop at its next step or effect; `force` ends its process now (as a second stop does). */
  stopTask: z.object({
    taskId: TaskId,
    reason: z.string().trim().max(10_000).optional(),
    force: z.boolean().optional(),
    by: z.string().min(1).max(200).optional(),
  }),
  /** A new task from the task's state at `version`; the task itself is only read. */
  forkTask: z.object({
    taskId: TaskId,
    version: Version,
    newTaskId: TaskId.optional(),
    reason: z.string().trim().max(10_000).optional(),
    by: z.string().min(1).max(200).optional(),
  }),
  /** What a rerun from `stepId` would do, with `redo` the effects to perform again: nothing is written. */
  previewRewind: z.object({
    taskId: TaskId,
    stepId: z.string().min(1).max(200),
    redo: z.array(z.string().min(1).max(200)).max(1000).default([]),
  }),
  /** Rerun from `stepId`: refused when the task moved past `expectedVersion`, the version the plan was shown for. */
  rewindTask: z.object({
    taskId: TaskId,
    stepId: z.string().min(1).max(200),
    redo: z.array(z.string().min(1).max(200)).max(1000).default([]),
    expectedVersion: Version.optional(),
    reason: z.string().trim().max(10_000).optional(),
    by: z.string().min(1).max(200).optional(),
  }),
  /** What editing a LangGraph thread's state at `version` would write (as LangGraph's updateState): nothing is written. */
  previewThreadEdit: z.object({ taskId: TaskId, version: Version, values: ThreadValues }),
  /**
   * Write it: one new checkpoint on the thread, forked from `version`, whose
   * checkpoint must still be `expectedCheckpointId` (the one the preview showed); no existing row changes.
   */
  editThreadState: z.object({ taskId: TaskId, version: Version, values: ThreadValues, expectedCheckpointId: z.string().min(1).max(100) }),
} as const;

export type ApiMethod = keyof typeof apiInputs;
export type ApiInput<M extends ApiMethod> = z.input<(typeof apiInputs)[M]>;
/** An input after validation, defaults filled: what the serving side's handlers receive. */
export type ApiParsedInput<M extends ApiMethod> = z.output<(typeof apiInputs)[M]>;

export interface DirectoryInfo {
  /** Absolute path of the open checkpoint directory, or null when none is open. */
  root: string | null;
  recent: string[];
  /** `desktop` when served over IPC, `web` over the loopback host. */
  host: 'desktop' | 'web';
  /**
   * The open directory is browsed only: no task is started, resumed, approved,
   * rejected or edited, and no agent module is loaded (a web host started with
   * `--read-only`, or a folder the desktop app opened read-only).
   */
  read_only: boolean;
  /** Those of `recent` last opened read-only: they open read-only again. */
  recent_read_only: string[];
  /**
   * The open directory is not trusted (see getDirectoryTrust): it is browsed
   * read-only until a person trusts it. Absent from hosts that predate trust.
   */
  untrusted?: boolean;
  /**
   * The open database holds LangGraph's checkpointer tables beside Waystation's schema (an earlier build created
   * its schema in a LangGraph database): it is shown as the Waystation store, and LangGraph's threads are not.
   * docs/POSTGRES.md, "A LangGraph database", says how to get them back. Absent from hosts that predate it.
   */
  also_holds_langgraph?: boolean;
}

/**
 * A directory's trust, for the prompt that asks a person to trust it: what
 * would run once trusted, read without importing or running any of it.
 */
export interface DirectoryTrust {
  root: string | null;
  trusted: boolean;
  /** Whether this host can run tasks at all once trusted (a host started read-only cannot). */
  can_trust: boolean;
  /** Trusted before, then its waystation.config.json or a registered module changed. */
  changed: boolean;
  /** The agent modules its waystation.config.json registers: loaded once trusted. */
  agents: { name: string; module: string; export?: string }[];
  /** The command agents it registers (programs run as processes of their own): startable once trusted. The host always sends it. */
  commands?: { name: string; command: string[] }[];
  /** What is wrong with waystation.config.json, if anything. */
  config_problem: string | null;
  /** Interrupted auto- and confirm-mode tasks that the host resumes (or plans) as soon as it is trusted. */
  resumes: string[];
  /** One sentence: the directory's standing and how to trust it. */
  message: string;
}

export interface LeaseInfo {
  held: boolean;
  owner?: string;
  pid?: number;
  since?: string;
}

/**
 * Whether a task's agent can be started again, as the host finds it without
 * running any agent code: a built-in is known or not; a module file exists or
 * not, and its hash matches the one the task recorded or not.
 */
export interface TaskAgentStatus {
  /** The agent's recorded name; null when the task records no agent. */
  name: string | null;
  /**
   * `none`: the task records no agent (an imported task); a resume either
   * hands it to a built-in agent that recognises it or refuses, with the reason
   * (then `problem` says it beforehand: nothing can resume the task).
   * `foreign`: another program wrote the task under an agent Waystation does not
   * have; it can be inspected, not resumed (`problem` says so).
   * `command`: a program registered as a command agent in waystation.config.json.
   */
  origin: 'builtin' | 'module' | 'command' | 'none' | 'foreign';
  /** Whether a resume can find the agent. False for `none`: nothing is recorded to find. */
  available: boolean;
  /** The module as recorded (relative to its project), for module agents. */
  module?: string;
  /**
   * Why the task cannot be resumed, or what a human should know before resuming.
   * For `none`: set only when no built-in agent recognises the task, so a resume would be refused.
   */
  problem?: string;
  /** The module's hash differs from the recorded one: resuming runs code the task has not run before. */
  module_changed?: boolean;
  recorded_sha256?: string;
  current_sha256?: string;
  /**
   * The last resume or approval through this host could not load the module
   * (it throws, exports no agent, hangs), and the file has not changed since.
   * Only a load tells whether a module loads, so this is what that load said.
   */
  load_problem?: string;
}

export interface TaskDetail {
  summary: TaskSummary;
  /** The checkpoint at the requested version (latest by default), or null when unreadable. */
  checkpoint: Checkpoint | null;
  version: number | null;
  latest_version: number | null;
  read_only: boolean;
  problems: Problem[];
  lease: LeaseInfo;
  /** The agent of the task's latest version (what a resume would run); null when no version can be read. */
  agent_status: TaskAgentStatus | null;
}

export interface VersionEntry {
  version: number;
  source: Checkpoint['source'];
  updated_at: string;
  bytes: number;
}

/** One line of a task's event log, `events.jsonl`: ids increase by one per task, from 1. */
export interface TaskEventEntry {
  id: number;
  type: string;
  at: string;
  version?: number;
  step_id?: string;
  data?: Record<string, unknown>;
}

/** A step that took long, for the directory overview. */
export interface SlowStep {
  task_id: string;
  step_id: string;
  step_name: string;
  elapsed_ms: number;
  status: string;
}

/** What getOverview answers: sums over the tasks it could read (`tasks_read` of `tasks_total`). */
export interface DirectoryOverview {
  tasks_read: number;
  tasks_total: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  slowest_steps: SlowStep[];
}

/** The most events one getEvents answer carries: a long log sends its newest. */
export const EVENTS_PAGE = 2000;

export interface DiffResult {
  a: number;
  b: number;
  summary: ChangeSummary;
  entries: StructuredDiffEntry[];
  /** For two checkpoints of a LangGraph thread: the change in its own words (messages, channels, next nodes, interrupts). */
  langgraph?: LangGraphChange;
}

/** What a LangGraph state edit writes (previewThreadEdit), before it is written. */
export interface ThreadEditPlan {
  taskId: string;
  /** The checkpointer: a file, or a database's URL without its password. */
  where: string;
  thread_id: string;
  checkpoint_ns: string;
  parent: { checkpoint_id: string; version: number };
  /** The metadata written: `source: update`, this step. */
  step: number;
  /** The serializer the checkpoint is written with: `json` (JavaScript's) or `msgpack` (Python's). */
  serde: 'json' | 'msgpack';
  /** Each channel set, with its version before and after. */
  channels: { name: string; from: unknown; to: unknown }[];
  /** The values written, as given. */
  values: Record<string, unknown>;
}

export interface AgentInfo {
  name: string;
  description: string;
  /** JSON Schema of the agent's options, for the start form. */
  options_schema: Record<string, unknown>;
  origin: 'builtin' | 'registered';
  /** Set when a registered agent cannot be loaded; it is listed, not startable. */
  problem?: string;
}

export interface ActionResult {
  taskId: string;
  /** The version written by the action, when it wrote one. */
  version: number | null;
  message: string;
}

/**
 * What verifyTask answers: the verify report, and, when a crash or a power cut
 * left something behind in the task folder, the account of what it lost.
 */
export const VerifyResult = VerifyReport.extend({ recovery: RecoveryReport.optional() });
export type VerifyResult = z.infer<typeof VerifyResult>;

/** Result type of each method. */
export interface ApiOutputs {
  getDirectory: DirectoryInfo;
  openDirectory: DirectoryInfo;
  chooseDirectory: DirectoryInfo | null;
  getDirectoryTrust: DirectoryTrust;
  trustDirectory: DirectoryInfo;
  listTasks: TaskSummary[];
  getTask: TaskDetail;
  /** The entries of the versions after `after` (the caller keeps its own up to that version), or all with `after: 0`. */
  getHistory: { after: number; versions: VersionEntry[] };
  getStepResult: { value: unknown; found: boolean };
  /** The messages from index `from` on: after `input.after` when the version's history continues it, else all (from 0). */
  getMessages: { from: number; messages: HistoryMessage[] };
  /**
   * The events after `input.after`, oldest first, at most the newest EVENTS_PAGE of them;
   * `skipped` counts those left out before the first one sent.
   */
  getEvents: { events: TaskEventEntry[]; skipped: number };
  diffVersions: DiffResult;
  verifyTask: VerifyResult;
  getOverview: DirectoryOverview;
  listAgents: AgentInfo[];
  showNotification: { shown: boolean };
  startTask: ActionResult;
  resumeTask: ActionResult;
  approveResume: ActionResult;
  rejectResume: ActionResult;
  editStepResult: ActionResult;
  stopTask: ActionResult;
  /** `taskId` is the new task's. */
  forkTask: ActionResult;
  previewRewind: RewindPlan;
  rewindTask: ActionResult;
  previewThreadEdit: ThreadEditPlan;
  /** `version` is the new checkpoint's version on the thread. */
  editThreadState: ActionResult;
}

/**
 * A live event from the host. `id` increases by one per event across the
 * whole host, so a client that reconnects with the last id it saw gets every
 * later event exactly once; `resync` tells it that events were missed and it
 * should reload.
 */
export const HostEventSchema = z.discriminatedUnion('type', [
  z.object({
    id: z.number().int(),
    type: z.literal('task-changed'),
    taskId: z.string(),
    version: z.number().int().nullable(),
    /**
     * The task's row as listTasks now reports it, when the host has it at hand:
     * a client replaces that one row instead of listing every task again.
     * Absent when the change may add, drop or reorder rows; then reload the list.
     */
    summary: TaskSummary.optional(),
  }),
  z.object({ id: z.number().int(), type: z.literal('task-removed'), taskId: z.string() }),
  z.object({ id: z.number().int(), type: z.literal('directory-changed'), root: z.string().nullable() }),
  /**
   * A message about the open directory itself rather than one task: its
   * watcher stopped, the start-up recovery stopped, it could not be added to
   * the recent folders. No task's feed would show it.
   */
  z.object({ id: z.number().int(), type: z.literal('directory-notice'), root: z.string(), detail: z.string() }),
  z.object({
    id: z.number().int(),
    type: z.literal('runner'),
    taskId: z.string(),
    state: z.enum(['started', 'exited', 'output']),
    detail: z.string(),
  }),
  z.object({
    id: z.number().int(),
    type: z.literal('task-event'),
    taskId: z.string(),
    event: z.object({
      id: z.number().int(),
      type: z.string(),
      at: z.string(),
      step_id: z.string().optional(),
      version: z.number().int().optional(),
    }),
  }),
  z.object({ id: z.number().int(), type: z.literal('resync'), reason: z.string() }),
]);
export type HostEvent = z.infer<typeof HostEventSchema>;
/** An event before the hub numbers it. */
export type HostEventInput = HostEvent extends infer E ? (E extends HostEvent ? Omit<E, 'id'> : never) : never;

export type HostEventListener = (event: HostEvent) => void;

/**
 * The API as the renderer sees it: one method per operation, plus the live
 * event stream. Both the IPC bridge and the HTTP client `satisfies` this.
 */
export type WaystationApi = {
  [M in ApiMethod]: (input: ApiInput<M>) => Promise<ApiOutputs[M]>;
} & {
  /**
   * Subscribe to host events after `lastEventId` (default: only new ones). Returns the unsubscribe function.
   *
   * `onStatus`, when given, hears how the event stream stands: `offline` as
   * soon as it drops (with when the next attempt is), `live` once it is open
   * again. A transport that cannot lose its host (IPC) never calls it.
   */
  subscribe(listener: HostEventListener, lastEventId?: number, onStatus?: (status: StreamStatus) => void): () => void;
};

/** How a live event stream stands, as `subscribe` reports it. */
export type StreamStatus =
  | { state: 'live' }
  | { state: 'offline'; reason: string; retryAt: number }
  /**
   * The host refuses this page's token (HTTP 401): it prints a new one at every start, so a host started again, or
   * a URL with another token, is not reached by retrying. Nothing is tried again; the page says what to open.
   */
  | { state: 'refused'; reason: string };

/** Validate an input for `method`; throws ApiError('invalid-input') with readable issues. */
export function parseApiInput<M extends ApiMethod>(method: M, input: unknown): z.output<(typeof apiInputs)[M]> {
  const schema = apiInputs[method];
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`);
    throw new ApiError('invalid-input', `invalid input for ${method}: ${issues.join('; ')}`, issues);
  }
  return result.data as z.output<(typeof apiInputs)[M]>;
}

/**
 * The serving side of the API: what the host service implements and both
 * transports dispatch to. Inputs arrive already validated, defaults filled.
 */
export type WaystationService = {
  [M in ApiMethod]: (input: ApiParsedInput<M>) => Promise<ApiOutputs[M]>;
} & {
  subscribe(listener: HostEventListener, lastEventId?: number): () => void;
};

/**
 * The IPC channel of a method: `waystation:<method>`.
 *
 * `subscribe` / `unsubscribe` are invoked with `{ subscriptionId, lastEventId? }`
 * and `{ subscriptionId }`; the main process then sends `{ subscriptionId, event }`
 * on the `event` channel.
 */
export const ipcChannel = (method: ApiMethod | 'subscribe' | 'unsubscribe' | 'event') => `waystation:${method}` as const;

/**
 * What an IPC handler answers. Errors travel as values because Electron
 * reduces an exception thrown in the main process to a bare message string.
 */
export type IpcResult<T = unknown> = { ok: true; value: T } | { ok: false; error: ApiErrorBody['error'] };
