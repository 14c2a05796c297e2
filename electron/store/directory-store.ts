/**
 * The versioned directory store: `openStore(root)` implements CheckpointStore
 * over a checkpoint directory laid out as docs/FORMAT.md describes.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promises as fsp } from 'node:fs';
import { holdsSecret, redactJson, secretsOf } from './redact.js';
import path from 'node:path';
import type { Checkpoint, HistoryMessage } from '../../shared/checkpoint/schema.js';
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { VersionSource } from '../../shared/checkpoint/schema.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { applyDiff } from '../../shared/diff/json-diff.js';
import {
  StoreWriteError,
  TaskReadError,
  ReadOnlyError,
  type CheckpointStore,
  type HistoryMark,
  type HistoryTail,
  type KeepListed,
  type ListedTask,
  type SaveRequest,
  type SaveResult,
  type TaskEntry,
  type TaskEvent,
  type VersionInfo,
  type VersionMark,
  type VersionsAfter,
} from './store-types.js';
import { nodeFs, errorCode, settledReads, syncReadsOf, type StoreFs } from './store-fs.js';
import { sequentialReads, type ReadContext } from './file-reader.js';
import { readBlobValue, readHistoryChain } from './blob-store.js';
import { appendEventLine, eventsPath, MAX_EVENT_LOG_BYTES, readEventTail } from './event-log.js';
import { EventCursor } from './event-cursor.js';
import { folderNotMade } from './disk-errors.js';
import { readVersionFile, rebuildVersion, VERSIONS_DIR, versionWalk } from './version-file.js';
import {
  HISTORY,
  DETAIL,
  keptHistoryHead,
  listedFileProblems,
  listVersionNumbers,
  loadVersion,
  loadVersions,
  type ReadDepth,
} from './task-reader.js';
import { TaskWriter } from './task-writer.js';
import { VersionHeads } from './version-heads.js';
import { KeptCheckpoints } from './kept-checkpoints.js';
import { KeptIndexes } from './kept-indexes.js';
import {
  isSafeTaskId,
  mapLimit,
  readFolder,
  readRootEntry,
  readRootFile,
  ROOT_LEGACY_FILE,
  scanRoot,
  type FoundTask,
} from './directory-scan.js';
import { acquireLease, LEASE_DIR } from './file-lease.js';
import { highestEntry } from './lease-record.js';
import { leaseInfoOf, leaseIsLive, type LeaseEntry, type LeaseOptions } from './lease-rules.js';
import { readStopRequest, writeStopRequest, type StopRequest } from './stop-request.js';
import { recoveryReport } from './recovery-report.js';
import { subscribeDirectory } from './directory-subscription.js';
import type { LeaseRead, ListedFiles, StopAsked, StoreChange, StoreSubscription, TaskLease } from './store-types.js';
import type { RecoveryReport } from '../../shared/checkpoint/recovery-report.js';
import { FileCheckThread } from './file-check-thread.js';
import { KeyedSerial } from './keyed-serial.js';

export interface StoreOptions {
  /** The file system to use; tests inject failures here. Default: node:fs/promises. */
  fs?: StoreFs;
  /** Files larger than this are reported `too-large` and not loaded. Default 64 MiB. */
  maxFileBytes?: number;
  /** The most of an event log one read goes through (default MAX_EVENT_LOG_BYTES); the newest part is read. */
  maxEventLogBytes?: number;
  /** How many tasks listTasks reads at once. Default 32. */
  concurrency?: number;
  /**
   * Whether fileProblems of many tasks runs on a thread of its own
   * (file-check-thread.ts). Default: yes, on the real file system; a store
   * given another `fs` checks on its own thread.
   */
  fileCheckThread?: boolean;
}

/** Fewer tasks than this are checked on the store's own thread: starting one costs more than checking them. */
const FILE_CHECK_THREAD_MIN = 100;

export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Open the store over a checkpoint directory.
 *
 * Nothing is read or created until a method is called; a root that does not
 * exist lists no tasks, and `create` makes it.
 */
export function openStore(root: string, opts: StoreOptions = {}): CheckpointStore {
  return new DirectoryStore(path.resolve(root), opts);
}

class DirectoryStore implements CheckpointStore {
  private readonly fs: StoreFs;
  private readonly maxFileBytes: number;
  private readonly maxEventLogBytes: number;
  private readonly concurrency: number;
  private ctxPromise: Promise<ReadContext> | null = null;
  private readonly writers = new Map<string, TaskWriter>();
  private readonly locks = new KeyedSerial();
  /** Per task: the last event id, and the log's size and mtime when this store last wrote it. */
  private readonly eventState = new Map<string, { lastId: number; torn: boolean; size: number; mtimeMs: number }>();

  private readonly subscriptions = new Set<StoreSubscription>();
  /** Reads of the event logs, each going through only what was appended since the last. */
  private readonly events: EventCursor;
  /** What each version file's head holds, read once per file (version-heads.ts). */
  private readonly heads = new VersionHeads();
  /** The hot snapshots of the tasks opened last, parsed and checked (kept-checkpoints.ts). */
  private readonly kept = new KeptCheckpoints();
  /** The history indexes read last, decoded (kept-indexes.ts). */
  private readonly indexes = new KeptIndexes();
  /** The file checks' thread, once a check of many tasks started it; null where checks stay on this thread. */
  private fileChecks: FileCheckThread | null = null;
  private readonly fileCheckThread: boolean;

  constructor(
    readonly root: string,
    opts: StoreOptions,
  ) {
    this.fs = opts.fs ?? nodeFs;
    this.maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.concurrency = opts.concurrency ?? 32;
    this.maxEventLogBytes = opts.maxEventLogBytes ?? MAX_EVENT_LOG_BYTES;
    this.events = new EventCursor(this.fs, { maxBytes: this.maxEventLogBytes });
    this.fileCheckThread = opts.fileCheckThread ?? this.fs === nodeFs;
  }

  /** The read context; the root's realpath is resolved once it exists. */
  private async ctx(): Promise<ReadContext> {
    if (!this.ctxPromise) {
      const readContext = (realRoot: string): ReadContext => ({
        fs: this.fs,
        root: this.root,
        realRoot,
        maxFileBytes: this.maxFileBytes,
        maxEventLogBytes: this.maxEventLogBytes,
        heads: this.heads,
        kept: this.kept,
        indexes: this.indexes,
      });
      this.ctxPromise = this.fs.realpath(this.root).then(readContext, () => {
        // Not there yet: retry next time rather than caching a guess.
        this.ctxPromise = null;
        return readContext(this.root);
      });
    }
    return this.ctxPromise;
  }

  private writer(ctx: ReadContext, taskId: string): TaskWriter {
    let w = this.writers.get(taskId);
    if (!w) {
      w = new TaskWriter(ctx, taskId, path.join(this.root, taskId));
      this.writers.set(taskId, w);
    }
    return w;
  }

  listTasks(): Promise<ListedTask[]>;
  listTasks<T>(keep: KeepListed<T>): Promise<T[]>;
  async listTasks<T>(keep?: KeepListed<T>): Promise<(T | ListedTask)[]> {
    const ctx = await this.ctx();
    const listed = await scanRoot<T | ListedTask>(ctx, this.concurrency, keep ?? ((entries) => entries));
    this.helpWithFileChecks();
    return listed;
  }

  /**
   * File checks asked while this store listed (`ls` asks one per slice) and
   * still waiting for the thread when the listing ends are answered here as
   * well, the newest first, while the thread works from the oldest: the
   * listing's thread is free by then, and would otherwise wait for the other.
   */
  private helpWithFileChecks(): void {
    const checks = this.fileChecks;
    if (!checks) return;
    void (async () => {
      for (let question = checks.takeBack(); question; question = checks.takeBack()) {
        await nextTurn();
        await this.checkFilesHere(question.entries).then(question.resolve, question.reject);
      }
    })();
  }

  /** Find one task the way the listing would show it, validated whole and with the detail checks (gaps) on unless `depth` says less. */
  private async find<C extends CheckpointHead = Checkpoint>(
    taskId: string,
    depth: ReadDepth<C> = DETAIL as unknown as ReadDepth<C>,
    reader?: ReadContext,
  ): Promise<FoundTask<C> | null> {
    if (!isSafeTaskId(taskId)) return null;
    const ctx = reader ?? (await this.ctx());
    try {
      const st = await ctx.fs.lstat(path.join(this.root, taskId));
      if (st.isDirectory() || st.isSymbolicLink()) {
        // Read synchronously, the hot snapshot is opened outright: no listing of the folder first (FolderLookup).
        const lookup = ctx.fs.settled ? 'probe' : 'list';
        const found = st.isDirectory() ? await readFolder(ctx, taskId, depth, lookup) : await this.findLinked(ctx, taskId, depth);
        if (found) return found;
      }
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err;
    }
    const asFile = await readRootFile(ctx, `${taskId}.json`, depth);
    if (asFile) return asFile;
    const rootLegacy = await readRootFile(ctx, ROOT_LEGACY_FILE, depth);
    return rootLegacy && rootLegacy.entry.task_id === taskId ? rootLegacy : null;
  }

  private async findLinked<C extends CheckpointHead>(ctx: ReadContext, taskId: string, depth: ReadDepth<C>): Promise<FoundTask<C> | null> {
    const dirents = await this.fs.readdir(this.root);
    const d = dirents.find((e) => e.name === taskId);
    if (!d) return null;
    return readRootEntry(ctx, d, depth);
  }

  async getTask(taskId: string): Promise<TaskEntry | null> {
    // Small files and checkpoint.json, read one after the other, as the history's reads are: from the page cache, a
    // trip through the thread pool per call cost a reader beside a running task more than everything else it did.
    return (await this.find(taskId, DETAIL, sequentialReads(await this.ctx()).ctx))?.entry ?? null;
  }

  private async requireTask<C extends CheckpointHead = Checkpoint>(
    taskId: string,
    depth: ReadDepth<C> = DETAIL as unknown as ReadDepth<C>,
    reader?: ReadContext,
  ): Promise<FoundTask<C>> {
    const found = await this.find(taskId, depth, reader);
    if (!found)
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `there is no task ${JSON.stringify(taskId)} in ${this.root}`)]);
    // A task folder that is a symlink out of the root: the paths below it would be read through the link.
    const outside = found.entry.problems.find((p) => p.reason === 'outside-root' && p.file === found.entry.location);
    if (outside) throw new TaskReadError(taskId, [outside]);
    return found;
  }

  async readVersion(taskId: string, version: number): Promise<Checkpoint> {
    const dir = await this.ownFolder(taskId, [version]);
    const direct = dir === null ? null : await this.readOwnVersion(taskId, dir, version);
    if (direct) return direct;
    const found = await this.requireTask(taskId);
    const { entry } = found;
    if (entry.format !== 'waystation') {
      if (entry.checkpoint && entry.checkpoint.version === version) return entry.checkpoint;
      throw new TaskReadError(
        taskId,
        entry.checkpoint
          ? [problem(entry.location, 'missing-version', `a legacy task has only version ${entry.checkpoint.version}`)]
          : entry.problems,
      );
    }
    const ctx = await this.ctx();
    const loaded = await loadVersion(ctx, path.join(this.root, taskId), version);
    if (!loaded.ok) throw new TaskReadError(taskId, loaded.problems);
    return loaded.checkpoint;
  }

  async readVersions(taskId: string, versions: readonly number[]): Promise<Checkpoint[]> {
    const dir = await this.ownFolder(taskId, versions);
    if (!dir || versions.length < 2) return Promise.all(versions.map((v) => this.readVersion(taskId, v)));
    const loaded = await loadVersions(await this.ctx(), dir, versions);
    // A version missing here may still be found the long way (readVersion says precisely why not).
    return Promise.all(
      loaded.map((l, i) => {
        if (l.ok) return l.checkpoint;
        if (l.missing) return this.readVersion(taskId, versions[i]);
        throw new TaskReadError(taskId, l.problems);
      }),
    );
  }

  /**
   * The folder of task `taskId`, read for versions of it by name (each of `versions` a version number): null when
   * the id is not a task's, or the folder is not a folder of this root (a symbolic link, which find() checks against
   * the root), and the caller then looks the task up the long way.
   */
  private async ownFolder(taskId: string, versions: readonly number[]): Promise<string | null> {
    if (!isSafeTaskId(taskId) || !versions.every((v) => Number.isSafeInteger(v) && v >= 1)) return null;
    const dir = path.join(this.root, taskId);
    // Asked synchronously where the file system can answer so: a reader beside a running task asks this on every
    // read of its messages, and the trip through the thread pool was a fifth of that read, spent waiting.
    try {
      const sync = syncReadsOf(this.fs);
      return (sync ? sync.lstat(dir) : await this.fs.lstat(dir)).isDirectory() ? dir : null;
    } catch {
      return null;
    }
  }

  /**
   * A version of the task folder named `taskId`, rebuilt from its version
   * files alone: versions are immutable, so neither the hot snapshot nor the
   * rest of the task need reading (a 5 MB task was read and validated twice
   * more that way). `dir` is its folder (ownFolder). Null when the folder has
   * no such version file: the caller then looks the task up the long way, for
   * a legacy task or a precise error. A version file that is there but cannot
   * be rebuilt is an error here and now.
   */
  private async readOwnVersion(taskId: string, dir: string, version: number): Promise<Checkpoint | null> {
    const loaded = await loadVersion(await this.ctx(), dir, version);
    if (loaded.ok) return loaded.checkpoint;
    if (loaded.missing) return null;
    throw new TaskReadError(taskId, loaded.problems);
  }

  async history(taskId: string): Promise<VersionInfo[]> {
    return (await this.historyAfter(taskId)).versions;
  }

  async historyAfter(taskId: string, after?: VersionMark): Promise<VersionsAfter> {
    const found = await this.requireTask(taskId);
    const { entry } = found;
    if (entry.format !== 'waystation') {
      if (!entry.checkpoint) return { after: 0, versions: [] };
      const cp = entry.checkpoint;
      return { after: 0, versions: [{ version: cp.version, source: cp.source, updated_at: cp.run.updated_at, bytes: 0 }] };
    }
    const ctx = await this.ctx();
    const dir = path.join(this.root, taskId);
    const numbers = await listVersionNumbers(ctx, dir);
    // Versions never change, so a caller holding the list up to a version needs only the ones after it: the replay
    // starts from the version before it, rebuilt (a few snapshots' worth of reading), instead of from version 1.
    // The held entry is replayed too and must come out as the caller has it: a task folder removed and written
    // anew shares no history with the old one.
    if (after && numbers.includes(after.version)) {
      const before = after.version > 1 ? await rebuildVersion(ctx, dir, after.version - 1) : null;
      if (before === null || before.ok) {
        const start = before ? { version: after.version - 1, doc: before.value.doc } : null;
        const [held, ...later] = await replayVersions(
          ctx,
          dir,
          numbers.filter((v) => v >= after.version),
          start,
        );
        if (held?.version === after.version && held.updated_at === after.updated_at && held.bytes === after.bytes)
          return { after: after.version, versions: later };
      }
    }
    return { after: 0, versions: await replayVersions(ctx, dir, numbers, null) };
  }

  async create(
    checkpoint: Parameters<CheckpointStore['create']>[0],
    opts: Parameters<CheckpointStore['create']>[1] = {},
  ): Promise<SaveResult> {
    const taskId = (checkpoint as { task_id?: unknown }).task_id;
    if (typeof taskId === 'string' && holdsSecret(taskId, secretsOf())) {
      throw new StoreWriteError('[redacted]', [
        problem(
          '[redacted]',
          'schema',
          'the task id holds a secret (an API key of the environment); choose another id; nothing was written',
        ),
      ]);
    }
    if (typeof taskId !== 'string' || !isSafeTaskId(taskId)) {
      throw new StoreWriteError(String(taskId), [
        problem(
          String(taskId),
          'schema',
          `task_id ${JSON.stringify(taskId)} cannot name a task folder (one path segment, not starting with "." nor ending in ".tmp" or ".json"); nothing was written`,
        ),
      ]);
    }
    const ctx = await this.ctx();
    const result = await this.locks.run(taskId, async () => {
      const r = await this.writer(ctx, taskId).create({ ...opts, checkpoint });
      return this.afterSave(taskId, r, opts.eventAt);
    });
    // The root may have just been created: resolve its realpath afresh.
    if (ctx.realRoot === this.root) this.ctxPromise = null;
    return result;
  }

  async save(taskId: string, request: SaveRequest): Promise<SaveResult> {
    if (!isSafeTaskId(taskId))
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `${JSON.stringify(taskId)} is not a task id`)]);
    const ctx = await this.ctx();
    return this.locks.run(taskId, async () => {
      const w = this.writer(ctx, taskId);
      try {
        await w.lastVersion();
      } catch (err) {
        // Not a native task: say so plainly when it is a legacy one.
        const found = await this.find(taskId);
        if (found && found.entry.format !== 'waystation') {
          throw new ReadOnlyError(taskId, `${found.entry.location} is in a legacy article format; import it first (importTask)`);
        }
        const future = found?.entry.problems.find((p) => p.reason === 'future-schema');
        if (future) throw new ReadOnlyError(taskId, `${future.file}: ${future.message}`);
        throw err;
      }
      return this.afterSave(taskId, await w.save(request), request.eventAt);
    });
  }

  async settle(taskId: string): Promise<Problem[]> {
    const w = this.writers.get(taskId);
    return w ? this.locks.run(taskId, () => w.settle()) : [];
  }

  /** Append the version event; a failure there leaves the version saved and is reported as a warning. */
  private async afterSave(taskId: string, result: SaveResult, at?: string): Promise<SaveResult> {
    try {
      // A version event holds no string but its type and time: nothing in it to scrub (see appendEventLocked).
      await this.appendEventLocked(taskId, { type: 'version', version: result.checkpoint.version, ...(at ? { at } : {}) }, false);
    } catch (err) {
      const warning = problem(
        `${taskId}/events.jsonl`,
        'io',
        `version ${result.checkpoint.version} is saved but its event could not be appended (${errorCode(err) ?? String(err)})`,
      );
      return { ...result, warnings: [...(result.warnings ?? []), warning] };
    }
    return result;
  }

  async importTask(taskId: string): Promise<SaveResult> {
    const found = await this.requireTask(taskId);
    const { entry, legacy, importId } = found;
    if (!legacy || !importId)
      throw new StoreWriteError(taskId, [
        problem(entry.location, 'conflict', `${taskId} is already a Waystation task; there is nothing to import`),
      ]);
    if (!entry.checkpoint) throw new TaskReadError(taskId, entry.problems);
    const { version: _version, history: _history, ...rest } = entry.checkpoint;
    const results: Record<string, unknown> = {};
    // Inline legacy results move into blobs, keeping the hot snapshot small.
    const plan = rest.plan.map((step) => {
      if (!('result' in step)) return step;
      const { result, ...withoutResult } = step;
      results[step.id] = result ?? null;
      return withoutResult;
    });
    return this.create(
      {
        ...rest,
        task_id: importId,
        plan,
        source: { kind: 'import', imported_from: { path: entry.location, format: entry.format }, note: `imported from ${entry.location}` },
      },
      { results, appendHistory: legacy.messages },
    );
  }

  async readBlob(taskId: string, ref: string): Promise<unknown> {
    const found = await this.requireTask(taskId);
    if (found.entry.format !== 'waystation')
      throw new TaskReadError(taskId, [
        problem(found.entry.location, 'unreadable', 'a legacy task keeps its results inline (plan[i].result); it has no blobs'),
      ]);
    const ctx = await this.ctx();
    const read = await readBlobValue(ctx, path.join(this.root, taskId), ref);
    if (!read.ok) throw new TaskReadError(taskId, [read.problem]);
    return read.value;
  }

  async readHistory(taskId: string, version?: number): Promise<HistoryMessage[]> {
    return (await this.historyTail(taskId, version)).messages;
  }

  readHistoryAfter(taskId: string, version?: number, after?: HistoryMark): Promise<HistoryTail> {
    return this.historyTail(taskId, version, after);
  }

  private async historyTail(taskId: string, version: number | undefined, after?: HistoryMark): Promise<HistoryTail> {
    let cp: { history: Checkpoint['history'] } | null = null;
    const dir = version === undefined ? null : await this.ownFolder(taskId, [version]);
    if (dir !== null && version !== undefined) {
      // The version this store's last read of the task showed is answered from what that read kept, where it holds
      // (keptHistoryHead): checkpoint.json, a listing and a segment, read one after the other, synchronously.
      const kept = await keptHistoryHead(sequentialReads(await this.ctx()).ctx, dir, version);
      if (kept) return this.chainTail(kept.reader, taskId, kept.history, after);
      // A past version of a task folder names its history's head itself: the rest of the task is not read.
      cp = await this.readOwnVersion(taskId, dir, version);
    }
    if (!cp) {
      // The gaps in the version names are the task view's report, not the history's. A handful of small files
      // and checkpoint.json, read one after the other: from the page cache, the trips through the thread pool
      // cost more than the reads (sequentialReads).
      const found = await this.requireTask(taskId, HISTORY, sequentialReads(await this.ctx()).ctx);
      if (found.legacy) return { from: 0, messages: found.legacy.messages };
      cp = version === undefined ? found.entry.checkpoint : await this.readVersion(taskId, version);
      if (!cp) throw new TaskReadError(taskId, found.entry.problems);
    }
    return this.chainTail(await this.ctx(), taskId, cp.history, after);
  }

  /** The messages of the history `history` names, after `after`. */
  private async chainTail(ctx: ReadContext, taskId: string, history: Checkpoint['history'], after?: HistoryMark): Promise<HistoryTail> {
    const chain = await readHistoryChain(ctx, path.join(this.root, taskId), history.head, history.count, after);
    if (!chain.ok) throw new TaskReadError(taskId, [chain.problem]);
    return { from: chain.from, messages: chain.messages as HistoryMessage[] };
  }

  async appendEvent(taskId: string, event: Omit<TaskEvent, 'id' | 'task_id' | 'at'> & { at?: string }): Promise<TaskEvent> {
    if (!isSafeTaskId(taskId))
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `${JSON.stringify(taskId)} is not a task id`)]);
    return this.locks.run(taskId, () => this.appendEventLocked(taskId, event));
  }

  /**
   * Append an event, scrubbed of the environment's secrets (redact.ts) unless `scrub` is false: for an event the
   * store builds itself of a type and numbers only, where the scrub would find nothing, and reading the environment
   * for it cost a quarter of a save's processor time.
   */
  private async appendEventLocked(
    taskId: string,
    event: Omit<TaskEvent, 'id' | 'task_id' | 'at'> & { at?: string },
    scrub = true,
  ): Promise<TaskEvent> {
    const dir = path.join(this.root, taskId);
    let state = this.eventState.get(taskId);
    if (!state) {
      try {
        await this.fs.stat(path.join(dir, VERSIONS_DIR));
      } catch {
        throw new TaskReadError(taskId, [
          problem(taskId, 'unreadable', `there is no Waystation task ${JSON.stringify(taskId)} to log events for`),
        ]);
      }
    }
    // Another process (a worker, the CLI) may have appended since this store last
    // did: a log that changed size or mtime is read again, so ids never repeat.
    const before = await this.eventLogStat(dir);
    if (!state || before.size !== state.size || before.mtimeMs !== state.mtimeMs) {
      // The newest id is on the log's last lines: read from its end, never the whole log.
      const tail = await readEventTail(this.fs, dir, (newestFirst) => newestFirst.length > 0);
      const lastId = (tail?.newestFirst ?? []).reduce((m, e) => Math.max(m, e.id), 0);
      state = { lastId, torn: (tail?.tornBytes ?? 0) > 0, ...before };
    }
    const { at, ...rest } = scrub ? redactJson(event, secretsOf()) : event;
    const full: TaskEvent = { id: state.lastId + 1, task_id: taskId, ...rest, at: at ?? new Date().toISOString() };
    const ours = await appendEventLine(this.fs, dir, full, state.torn);
    const after = await this.eventLogStat(dir);
    // Cached only when the log grew by exactly our line: anything else was another writer, and the next append reads again.
    if (after.size === before.size + ours) this.eventState.set(taskId, { lastId: full.id, torn: false, ...after });
    else this.eventState.delete(taskId);
    return full;
  }

  /** The event log's size and mtime; a log not written yet is empty. */
  private async eventLogStat(dir: string): Promise<{ size: number; mtimeMs: number }> {
    try {
      const sync = syncReadsOf(this.fs);
      const st = sync ? sync.stat(eventsPath(dir)) : await this.fs.stat(eventsPath(dir));
      return { size: st.size, mtimeMs: st.mtimeMs };
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return { size: 0, mtimeMs: 0 };
      throw err;
    }
  }

  async readEvents(taskId: string, afterId = 0, opts: { last?: number } = {}): Promise<TaskEvent[]> {
    if (!isSafeTaskId(taskId)) return [];
    return this.events.read(path.join(this.root, taskId), afterId, opts.last);
  }

  async prepareForWrites(): Promise<void> {
    // The root only: each task's folder is made by its create.
    await fsp.mkdir(this.root, { recursive: true }).catch((err: unknown) => {
      throw folderNotMade(err, this.root, 'the checkpoint directory');
    });
    this.ctxPromise = null;
  }

  get artifactRoot(): string {
    return this.root;
  }

  /** The lease lives in the task's folder, `lease/<n>.json` (file-lease.ts). */
  acquireLease(taskId: string, opts: LeaseOptions): Promise<TaskLease> {
    if (!isSafeTaskId(taskId))
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `${JSON.stringify(taskId)} is not a task id`)]);
    return acquireLease(path.join(this.root, taskId), taskId, opts);
  }

  async readLease(taskId: string, opts: { ttlMs?: number; now?: number } = {}): Promise<LeaseRead> {
    let current: { n: number; entry: LeaseEntry | null } | null = null;
    try {
      if (isSafeTaskId(taskId)) current = await highestEntry(path.join(this.root, taskId, LEASE_DIR));
    } catch {
      // A reader must not claim a task is running on evidence it cannot read.
    }
    const entry = current?.entry ?? null;
    return { entry, info: leaseInfoOf(entry, opts), ...(current ? { generation: current.n } : {}) };
  }

  async requestStop(taskId: string, request: { by: string; reason?: string }): Promise<StopAsked | null> {
    if (!isSafeTaskId(taskId))
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `${JSON.stringify(taskId)} is not a task id`)]);
    const taskDir = path.join(this.root, taskId);
    const current = await highestEntry(path.join(taskDir, LEASE_DIR));
    if (!current?.entry || !leaseIsLive(current.entry)) return null;
    return { request: await writeStopRequest(taskDir, current.n, request), generation: current.n, holder: current.entry };
  }

  async readStopRequest(taskId: string): Promise<StopRequest | null> {
    if (!isSafeTaskId(taskId)) return null;
    const leaseDir = path.join(this.root, taskId, LEASE_DIR);
    const current = await highestEntry(leaseDir).catch(() => null);
    return current ? readStopRequest(leaseDir, current.n) : null;
  }

  recoveryReport(entry: Pick<TaskEntry, 'task_id' | 'location' | 'format'>): Promise<RecoveryReport | null> {
    return entry.format === 'waystation'
      ? recoveryReport(this.root, entry.location, { fs: this.fs, maxFileBytes: this.maxFileBytes })
      : Promise.resolve(null);
  }

  async fileProblems(entries: readonly ListedFiles[]): Promise<Problem[][]> {
    if (this.fileCheckThread && entries.length >= FILE_CHECK_THREAD_MIN) {
      this.fileChecks ??= new FileCheckThread({ root: this.root, maxFileBytes: this.maxFileBytes });
      // A thread that failed leaves the checks to this one: they are never skipped.
      const answered = await this.fileChecks.check(entries).catch(() => null);
      if (answered) return answered;
    }
    return this.checkFilesHere(entries);
  }

  /** fileProblems on this thread. */
  private async checkFilesHere(entries: readonly ListedFiles[]): Promise<Problem[][]> {
    const ctx = await this.ctx();
    // Read as a listing reads (see scanRoot): node:fs's synchronous calls where the store's calls are node:fs's.
    const sync = syncReadsOf(ctx.fs);
    const reader = sync ? { ...ctx, fs: settledReads(ctx.fs, sync) } : ctx;
    return mapLimit(entries, this.concurrency, (entry) => listedFileProblems(reader, entry));
  }

  async subscribe(onChange: (change: StoreChange) => void, onError?: (err: Error) => void): Promise<StoreSubscription> {
    const inner = await subscribeDirectory(this.fs, this.root, onChange, onError);
    const sub: StoreSubscription = {
      close: async () => {
        this.subscriptions.delete(sub);
        await inner.close();
      },
    };
    this.subscriptions.add(sub);
    return sub;
  }

  async close(): Promise<void> {
    await this.fileChecks?.close();
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await Promise.all([...this.writers.keys()].map((id) => this.settle(id).catch(() => [])));
  }
}

export type { Problem };

/**
 * The entries of `numbers` (ascending), replayed forward from `start` (the
 * version before the first of them, rebuilt) or from version 1: one record
 * per version, read with versionWalk. A version that does not read, or whose
 * delta has no base, is left out, as is every version after it up to the next
 * full snapshot.
 */
async function replayVersions(
  ctx: ReadContext,
  dir: string,
  numbers: readonly number[],
  start: { version: number; doc: unknown } | null,
): Promise<VersionInfo[]> {
  const { ctx: reader, pace } = versionWalk(ctx);
  const out: VersionInfo[] = [];
  let prev = start;
  for (const v of numbers) {
    await pace();
    const read = await readVersionFile(reader, dir, v);
    let doc: unknown = null;
    if (read.ok) {
      const { envelope } = read.value;
      if (envelope.kind === 'full') doc = envelope.checkpoint;
      else if (prev?.version === v - 1) {
        try {
          doc = applyDiff(prev.doc, envelope.ops);
        } catch {
          doc = null;
        }
      }
    }
    prev = doc === null ? null : { version: v, doc };
    if (doc === null || !read.ok) continue;
    out.push(versionInfo(v, doc, read.value.bytes.length));
  }
  return out;
}

/** A version's entry in the history list, from its checkpoint JSON and the size of its file. */
function versionInfo(version: number, doc: unknown, bytes: number): VersionInfo {
  const d = doc as { source?: unknown; run?: { updated_at?: unknown } };
  const source = VersionSource.safeParse(d.source);
  return {
    version,
    source: source.success ? source.data : { kind: 'runtime', note: 'source missing or malformed in this version' },
    updated_at: typeof d.run?.updated_at === 'string' ? d.run.updated_at : '',
    bytes,
  };
}
