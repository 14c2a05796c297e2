/**
 * The contract of a checkpoint store: what the runtime, the CLI and the host
 * may ask of it, whatever keeps the tasks (a checkpoint directory,
 * docs/FORMAT.md; a PostgreSQL database, docs/POSTGRES.md). Every
 * implementation passes the conformance suite in
 * test/electron/store/conformance/.
 */
import type { Checkpoint, CheckpointInput, HistoryMessage, VersionSource } from '../../shared/checkpoint/schema.js';
import type { Problem } from '../../shared/checkpoint/problem.js';
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { ServiceError } from '../../shared/api/error-codes.js';
import type { LeaseInfo } from '../../shared/api/contract.js';
import type { RecoveryReport } from '../../shared/checkpoint/recovery-report.js';
import type { LeaseEntry, LeaseLostError, LeaseOptions } from './lease-rules.js';
import type { StopRequest } from './stop-request.js';

/** Where a task's checkpoints came from on disk. */
export type TaskFormat = 'waystation' | 'article-task-json' | 'article-checkpoint-json' | 'langgraph';

/**
 * One task as the directory shows it: readable or not, it is always listed.
 *
 * `C` is how much of the checkpoint was validated: all of it (opening a
 * task), or what a listing reads (`ListedTask`).
 */
export interface TaskEntry<C extends CheckpointHead = Checkpoint> {
  task_id: string;
  /** Folder or file of the task, relative to the root, forward slashes. */
  location: string;
  format: TaskFormat;
  /** The latest readable checkpoint (legacy formats converted in memory), or null when none could be read. */
  checkpoint: C | null;
  /** Read-only: a legacy format or a future schema. Resuming a legacy task imports it first. */
  read_only: boolean;
  problems: Problem[];
}

/**
 * A task as the listing shows it. Its checkpoint is checked for what a
 * summary shows (CheckpointHead), not validated whole: a checkpoint that
 * fails that check is listed with the problem and no checkpoint, and one
 * that passes may still show further problems when the task is opened
 * (getTask). A TaskEntry is a ListedTask.
 */
export interface ListedTask extends TaskEntry<CheckpointHead> {
  /**
   * Whether the task folder has a `lease/` folder, when the listing looked
   * (the one readdir of the folder tells). Without one no runner ever held
   * the task, so its lease need not be read.
   */
  has_lease?: boolean;
  /**
   * The lease entry, when the store read it with the listing (a database
   * reads every row's in the listing's one query): summarizing the task then
   * reads no lease of its own. Null when there is none or it does not parse.
   */
  lease?: LeaseEntry | null;
}

/** What fileProblems needs of a listed task: where it is, and the version the listing shows it at. */
export type ListedFiles = Pick<TaskEntry<CheckpointHead>, 'task_id' | 'location' | 'format' | 'problems'> & {
  checkpoint: Pick<CheckpointHead, 'version'> | null;
};

export interface VersionInfo {
  version: number;
  source: VersionSource;
  /** `run.updated_at` of that version. */
  updated_at: string;
  /** Bytes of the version's record on disk (a delta or a full snapshot, with the blobs it carries). */
  bytes: number;
}

/** The last entry of a history list a caller holds: its version, and what that entry said. */
export type VersionMark = Pick<VersionInfo, 'version' | 'updated_at' | 'bytes'>;

/** History entries of the versions after `after` (0: the whole list). */
export interface VersionsAfter {
  after: number;
  versions: VersionInfo[];
}

/** What a writer hands to `save`: the next checkpoint, with large payloads given separately. */
export interface SaveRequest {
  /** The version this save must follow; the store refuses (ConflictError) when another writer got there first. */
  expectedVersion: number;
  /** The new state; `version` is filled in by the store as expectedVersion + 1. */
  checkpoint: Omit<CheckpointInput, 'version'>;
  /** Step results to store as blobs: step id -> value. The store sets plan[i].result_ref. */
  results?: Record<string, unknown>;
  /** Messages appended to the history chain; the store updates checkpoint.history. */
  appendHistory?: HistoryMessage[];
  /**
   * The task's lease, when the caller holds it: only then may the store
   * append the version to the file of an earlier one (docs/FORMAT.md,
   * "Segments"). Call `settle` when letting the lease go.
   */
  lease?: SaveLease;
  /**
   * When the version's `version` event says it was written: now, unless the
   * version is another store's, copied (copy-tasks.ts), whose event keeps
   * the time the source's log gives it.
   */
  eventAt?: string;
}

/** A task's lease as a save sees it (docs/FORMAT.md, "The lease"). */
export interface SaveLease {
  readonly taskId: string;
  /** True while it is held: not lost to a takeover, not being released. */
  readonly held: boolean;
  /**
   * Which holding of the task's lease this is: each acquisition raises it. A
   * store refuses a save under a lease whose generation was superseded (a
   * takeover), with LeaseLostError and nothing written: the fence.
   */
  readonly generation: number;
}

/**
 * A held lease on a task: only its holder runs steps and writes versions.
 * A store hands it out (`acquireLease`) and fences saves made under it.
 */
export interface TaskLease extends SaveLease {
  /** Set once another runner took the lease over; the holder must stop. */
  readonly lost: LeaseLostError | null;
  /** Throw the LeaseLostError if the lease is gone; called before every write. */
  assertHeld(): void;
  /** Refresh the heartbeat, or notice that someone took the lease over (then `lost` is set). */
  heartbeat(): Promise<void>;
  /** Let the lease go; another runner may take it at once. */
  release(): Promise<void>;
  /**
   * A person's request that this holding stop (`requestStop`), or null:
   * checked at each safe boundary. A check that cannot reach the storage
   * answers null: the save that follows reports the fault.
   */
  stopRequest(): Promise<StopRequest | null>;
}

/** The lease of a task as a reader sees it: its entry, and whether it stands for a live holder. */
export interface LeaseRead {
  /** The latest entry, or null when no runner ever held the task (or it cannot be read). */
  entry: LeaseEntry | null;
  /** What a reader shows: held by a live holder or not (the runtime's liveness rule). */
  info: LeaseInfo;
  /**
   * Which holding the entry is (TaskLease.generation): every acquisition and
   * every release raises it, so a caller that saw it change knows the holder
   * let go or was taken over. Absent when never leased, or for a source
   * nobody writes to.
   */
  generation?: number;
}

/** A stop request as stored for a holding of a task's lease: what was asked, of which holding, held by whom. */
export interface StopAsked {
  request: StopRequest;
  /** The holding it is for (TaskLease.generation): a later holding never sees it. */
  generation: number;
  holder: LeaseEntry;
}

/** A change in a store, as a subscription delivers it: which task, and the events appended to it. */
export interface StoreChange {
  task_id: string;
  /** The task's events appended since the last change delivered for it, oldest first (may be empty: something else changed). */
  events: TaskEvent[];
}

/** A running subscription to a store's changes; `close` ends it. */
export interface StoreSubscription {
  close(): Promise<void>;
}

export interface SaveResult {
  /**
   * The saved version, deeply frozen and shared with the store: it is the base
   * the next save is diffed against. Build the next state by immutable updates
   * that reuse what did not change, e.g.
   * `{ ...cp, plan: cp.plan.map((s, i) => (i === k ? { ...s, status: 'done' } : s)) }`:
   * the store then diffs, validates and serialises only what changed (identity
   * means unchanged). Assigning to it throws a TypeError; a caller that wants
   * a mutable copy takes one (structuredClone), at the cost of a full diff on
   * its next save. Values handed to `save` become part of the saved version and
   * are frozen with it.
   */
  checkpoint: Checkpoint;
  /** Bytes written for this version (version file + new blobs), for benchmarks and the UI. */
  bytesWritten: number;
  /**
   * Trouble after the version was committed (the hot snapshot or the event log
   * could not be updated): the version is saved; the next save repairs the rest.
   */
  warnings?: Problem[];
}

/** An entry in a task's append-only event log. */
export interface TaskEvent {
  /** Monotonically increasing per task, starting at 1. */
  id: number;
  task_id: string;
  type: 'version' | 'step-start' | 'step-finish' | 'effect' | 'runner' | 'log';
  at: string;
  version?: number;
  step_id?: string;
  data?: Record<string, unknown>;
}

/** Raised when a save lost the race for its version number; nothing was written. */
export class ConflictError extends ServiceError {
  readonly code = 'conflict';
  constructor(
    readonly taskId: string,
    readonly version: number,
  ) {
    super(`version ${version} of task ${taskId} was already written by another writer; nothing was written`);
  }
}

/** Raised when a save is refused because the task may only be read: a future schema or a legacy file. */
export class ReadOnlyError extends ServiceError {
  readonly code = 'read-only';
  constructor(
    readonly taskId: string,
    reason: string,
  ) {
    super(`task ${taskId} is read-only: ${reason}; nothing was written`);
  }
}

/** Raised when a save failed before its version was committed: nothing was written and the previous version is intact. */
export class StoreWriteError extends ServiceError {
  readonly code = 'io';
  constructor(
    readonly taskId: string,
    readonly problems: Problem[],
  ) {
    super(problems.map((p) => `${p.file}: ${p.message}`).join('; ') || `a save of task ${taskId} failed; nothing was written`);
  }
}

/** Raised by reads of a task or version that cannot be loaded; carries the problems found. */
export class TaskReadError extends ServiceError {
  readonly code = 'read';
  constructor(
    readonly taskId: string,
    readonly problems: Problem[],
  ) {
    super(problems.map((p) => `${p.file}: ${p.message}`).join('; ') || `task ${taskId} cannot be read`);
  }
}

/** Where a reader's copy of a task's history ends: the head chunk of the version it read, and that version's message count. */
export interface HistoryMark {
  head: string | null;
  count: number;
}

/** Messages of a history from index `from` on (0: all of them). */
export interface HistoryTail {
  from: number;
  messages: HistoryMessage[];
}

/**
 * What a caller keeps of each listed task: by default the entry itself. A
 * listing hands each slice of entries over as soon as it is read, so a caller
 * that keeps less (the host keeps a summary row) lets the parsed checkpoints
 * go while they are young: 10,000 of them held until the end of the listing
 * are 60 MB that the garbage collector copies out of the young generation and
 * then marks, a sixth of a cold listing's time.
 */
export type KeepListed<T> = (entries: ListedTask[]) => T[] | Promise<T[]>;

/**
 * What the inspector and the CLI read: any place tasks can be browsed from,
 * writable or not (a checkpoint directory, a database, another framework's
 * checkpoints). A source is opened read-only unless it is also a
 * CheckpointStore.
 *
 * Reads never throw on bad data (they report problems) and never modify what
 * they read.
 */
export interface CheckpointSource {
  /** Where the tasks are: a directory's path, or a locator with no secret in it (a URL without its password). */
  readonly root: string;
  /**
   * The folder relative artifact paths resolve against when a checkpoint
   * names no project root of its own (verify-task.ts, artifactBaseDir): the
   * directory itself, or for a database the folder it was opened from.
   */
  readonly artifactRoot: string;
  /**
   * Every task, including legacy-format files and unreadable ones, each
   * checked for what its summary shows (see ListedTask), in task id order.
   * With `keep`, what it makes of each entry instead: it is called on the
   * entries as they are read, a slice at a time, so a caller that keeps less
   * than the parsed checkpoint never holds them all at once.
   */
  listTasks(): Promise<ListedTask[]>;
  listTasks<T>(keep: KeepListed<T>): Promise<T[]>;
  /** One task by id; null when there is no such task. */
  getTask(taskId: string): Promise<TaskEntry | null>;
  /**
   * A version, reconstructed whole and validated: for a native task, from its
   * version files alone (the nearest full snapshot at or below it, then the
   * deltas), since a version once written never changes.
   */
  readVersion(taskId: string, version: number): Promise<Checkpoint>;
  /**
   * Several versions, in the order asked, as readVersion gives each; the
   * versions of a native task are rebuilt in one pass, oldest first, so two
   * versions over the same full snapshot read it once (what a diff needs).
   */
  readVersions(taskId: string, versions: readonly number[]): Promise<Checkpoint[]>;
  /** Every version of the task, oldest first, with gaps reported as problems on the task. */
  history(taskId: string): Promise<VersionInfo[]>;
  /**
   * The history list after the entry a caller holds (`after`, its last one):
   * only the versions written since, when that entry is still the task's;
   * otherwise (or without `after`) the whole list, with `after: 0`.
   */
  historyAfter(taskId: string, after?: VersionMark): Promise<VersionsAfter>;
  /** A stored step result or any blob, by reference. */
  readBlob(taskId: string, ref: string): Promise<unknown>;
  /** The message history as of a version (default: latest). */
  readHistory(taskId: string, version?: number): Promise<HistoryMessage[]>;
  /**
   * The messages of a version (default: latest) after those a reader already
   * holds (`after`: the head and count of the version it read). Only the
   * chunks written since are read when that history is the start of this
   * one, as when a task ran on; otherwise (or without `after`) every message,
   * from 0.
   */
  readHistoryAfter(taskId: string, version?: number, after?: HistoryMark): Promise<HistoryTail>;
  /**
   * Events with id > afterId (default 0), oldest first; with `last`, only the
   * newest `last` of them. A store reads its log in bounded memory (a
   * directory: only what was appended since its last read, and at most the
   * newest MAX_EVENT_LOG_BYTES of a huge log).
   */
  readEvents(taskId: string, afterId?: number, opts?: { last?: number }): Promise<TaskEvent[]>;
  /** The task's lease as readers see it; never writes. A source nobody writes to answers "not held". */
  readLease(taskId: string, opts?: { ttlMs?: number; now?: number }): Promise<LeaseRead>;
  /**
   * Be told of changes to any task: new versions and events. Each change
   * carries the events appended since the last one delivered for that task,
   * read from the log, so nothing is delivered twice or skipped while the
   * subscription runs. A directory is watched (chokidar); a database
   * listens (LISTEN/NOTIFY). Resolves once the subscription is in place.
   */
  subscribe(onChange: (change: StoreChange) => void, onError?: (err: Error) => void): Promise<StoreSubscription>;
  /**
   * What an interruption left behind in the task's own storage, in words, for
   * the verifier: a directory can hold torn temp files and a hot snapshot
   * left behind; a database commits whole transactions, and says so. Null
   * for a task that is not in the store's native format.
   */
  recoveryReport(entry: Pick<TaskEntry, 'task_id' | 'location' | 'format'>): Promise<RecoveryReport | null>;
  /**
   * What a listing does not read for, about the files of the tasks it listed:
   * a directory's version files whose envelope holds another version than
   * the file's name (copied or renamed into `versions/`), which only the
   * first bytes of each file tell. One list per entry, in order; empty for a
   * source whose tasks are not files. `ls` and the inspector's list add
   * these to what the listing found, so that a task it would show as healthy
   * is not.
   */
  fileProblems(entries: readonly ListedFiles[]): Promise<Problem[][]>;
  /** Let go of what the source holds open (connections, watchers, file handles). Reads after it fail. */
  close(): Promise<void>;
}

/**
 * A source that can also be written: a checkpoint directory, a database.
 *
 * Writes are atomic and durable: a version is committed whole or not at all,
 * and of two writers racing for one version exactly one wins (the other gets
 * ConflictError and leaves nothing). See docs/FORMAT.md and docs/POSTGRES.md.
 */
export interface CheckpointStore extends CheckpointSource {
  /**
   * Take the task's lease, or fail with LeaseHeldError naming the live
   * holder. A lease whose holder is gone (released, its process dead, its
   * heartbeat older than the time-to-live where its process cannot be
   * checked) is taken over, raising the generation: saves under the old one
   * are refused from then on.
   */
  acquireLease(taskId: string, opts: LeaseOptions): Promise<TaskLease>;
  /**
   * Make the store ready to be written: a directory's root created, a
   * database's schema created or migrated (when the store allows it). Fails
   * with a clear error when it cannot be, or may not be, written.
   */
  prepareForWrites(): Promise<void>;
  /** Create a task: writes version 1. Fails with ConflictError if the task already exists. */
  create(checkpoint: Omit<CheckpointInput, 'version'>, opts?: Omit<SaveRequest, 'expectedVersion' | 'checkpoint'>): Promise<SaveResult>;
  /** Write the next version. */
  save(taskId: string, request: SaveRequest): Promise<SaveResult>;
  /**
   * Before the lease of a task is let go: end the file its saves were
   * appended to, so checkpoint.json names the last version again. Returns
   * what could not be done, as warnings (the versions are saved either way).
   */
  settle(taskId: string): Promise<Problem[]>;
  /**
   * Import a legacy-format task as version 1 of a native task (`source.kind = 'import'`),
   * leaving the original file untouched. A root `<id>.json` or root `checkpoint.json`
   * imports into folder `<id>/`; a legacy folder `F/` into `F-imported/`. The listing
   * then shows the native task instead of the legacy one. Returns version 1.
   */
  importTask(taskId: string): Promise<SaveResult>;
  /**
   * Ask the run that holds the task's lease to stop at its next safe
   * boundary: the request is stored for that holding only (a directory
   * writes `lease/<n>.stop.json`, a database a column of the lease row), and
   * asking again raises its count. Null, with nothing written, when no live
   * runner holds the lease.
   */
  requestStop(taskId: string, request: { by: string; reason?: string }): Promise<StopAsked | null>;
  /**
   * The stop asked of the task's current holding (its newest lease entry,
   * live or not), or null: what a supervisor checks after a run ended, so a
   * run a person stopped is not retried even when its process was ended.
   */
  readStopRequest(taskId: string): Promise<StopRequest | null>;
  /** Append an event; returns it with its id. */
  appendEvent(taskId: string, event: Omit<TaskEvent, 'id' | 'task_id' | 'at'> & { at?: string }): Promise<TaskEvent>;
}

/** Whether a source can also be written (a store), as opposed to a read-only one such as a LangGraph checkpointer. */
export function isCheckpointStore(source: CheckpointSource): source is CheckpointStore {
  return typeof (source as Partial<CheckpointStore>).acquireLease === 'function';
}
