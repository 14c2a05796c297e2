/**
 * The host service: the Waystation API implemented for one open checkpoint
 * directory at a time.
 *
 * Both transports (Electron IPC, the loopback web host) dispatch to one
 * instance. It is a facade: it opens and closes directories and hands each
 * call to the part that does that job.
 *
 * - open-directory.ts: one open directory and its parts, created and dropped together;
 * - kept-task-list.ts: the task list kept in memory and patched per change;
 * - change-feed.ts: what the watcher reports, turned into the API's events;
 * - task-reads.ts: what a task is, at a version, and its history, diffs and verify;
 * - agent-catalog-cache.ts: the built-in and registered agents;
 * - host-operations.ts: start, resume, approve, reject, edit, handed to the runner;
 * - host-ports.ts: the runner and the recent folders, as small interfaces.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  ApiError,
  type ActionResult,
  type AgentInfo,
  type ApiOutputs,
  type ApiParsedInput,
  type DirectoryInfo,
  type HostEventListener,
  type TaskDetail,
  type WaystationService,
} from '../../shared/api/contract.js';
import type { TaskListing } from '../../shared/checkpoint/task-summary.js';
import { openStore } from '../store/directory-store.js';
import type { CheckpointStore } from '../store/store-types.js';
import { detectLangGraph, openLangGraphSource } from '../sources/langgraph/open-langgraph.js';
import { watchLangGraph } from '../sources/langgraph/langgraph-watcher.js';
import { builtInAgentInfos, catalogOf } from './agent-catalog-cache.js';
import { EventHub } from './event-hub.js';
import { HostOperations } from './host-operations.js';
import type { HostRunner, RecentFolders } from './host-ports.js';
import { OpenDirectory } from './open-directory.js';
import { snapshotRoot } from './root-snapshot.js';
import { startRecovery } from './start-up-recovery.js';
import { ModuleHashCache } from './task-agent-status.js';
import { messageOf } from '../../shared/api/error-codes.js';

export type { HostRunner, RecentFolders, RunnerEvent } from './host-ports.js';

export interface HostServiceOptions {
  host: 'desktop' | 'web';
  runner?: HostRunner | null;
  recent?: RecentFolders;
  /** Desktop: show the folder picker; resolves to the chosen path or null. */
  chooseDirectory?: (opts: { readOnly: boolean }) => Promise<string | null>;
  openStore?: (root: string) => CheckpointStore;
  /** Watcher batching, for tests. */
  watch?: { quietMs?: number; maxDelayMs?: number };
  /**
   * Resume interrupted auto-mode tasks when a directory is opened (default
   * true when there is a runner): auto mode promises that such tasks carry on
   * without a human, so the first host to see them after a crash restarts them.
   */
  recoverOnOpen?: boolean;
  hub?: EventHub;
}

const notOpen = () => new ApiError('not-found', 'no checkpoint directory is open; open one first');

/** The host service; see the module comment. */
export class HostService implements WaystationService {
  readonly hub: EventHub;
  private current: OpenDirectory | null = null;
  private readonly stopRunnerFeed: () => void;
  private closed = false;
  private readonly moduleHashes = new ModuleHashCache();
  private readonly operations: HostOperations;

  constructor(private readonly options: HostServiceOptions) {
    this.hub = options.hub ?? new EventHub();
    this.operations = new HostOperations(options.runner);
    this.stopRunnerFeed =
      options.runner?.onEvent((e) => {
        // Only a load can tell that a module throws or exports no agent: the task view keeps what the exit said.
        if (e.state === 'exited') this.current?.loadFailures.note(e);
        this.hub.publish({ type: 'runner', taskId: e.taskId, state: e.state, detail: e.detail });
      }) ?? (() => {});
  }

  /** The open root, or null. */
  get root(): string | null {
    return this.current?.root ?? null;
  }

  /**
   * Open `dir` as the checkpoint directory: a new store and watcher replace
   * the old ones, and subscribers get `directory-changed`. `readOnly`
   * unset: in the mode the folder was last opened in (see RecentFolders).
   */
  async open(dir: string, opts: { readOnly?: boolean } = {}): Promise<DirectoryInfo> {
    // A LangGraph checkpointer (a SQLite file, a postgres:// URL) opens as a read-only source; anything else must be a directory.
    const found = await detectLangGraph(dir);
    if (found.kind === 'sqlite' || found.kind === 'postgres') return this.openLangGraph(dir, found.kind === 'sqlite' ? found.file : null);
    const root = path.resolve(dir);
    const stats = await fs.stat(root).catch(() => null);
    if (!stats?.isDirectory()) {
      const why = stats && found.kind === 'neither' ? `: ${found.reason}` : '';
      throw new ApiError('not-found', `${root} is not a directory${why}; nothing was opened`);
    }
    const realRoot = await fs.realpath(root);
    await this.closeDirectory();
    const opened = new OpenDirectory({
      root: realRoot,
      // A host without a runner browses every directory read-only; unless told otherwise, a folder opened
      // read-only before opens read-only again: it was not trusted to run code.
      readOnly: !this.options.runner || (opts.readOnly ?? this.options.recent?.readOnly().includes(realRoot) ?? false),
      store: (this.options.openStore ?? openStore)(realRoot),
      hub: this.hub,
      hashes: this.moduleHashes,
      describeRegistered: this.options.runner?.registeredAgents?.bind(this.options.runner),
      watch: this.options.watch,
    });
    this.current = opened;
    const seeded = snapshotRoot(realRoot);
    await opened.seed(seeded);
    await this.rememberFolder(realRoot, opened.readOnly);
    // Built now, in the background: the renderer's first listing then finds it ready or under way.
    const listed = opened.list.built().then(
      () => undefined,
      () => undefined,
    );
    // chokidar reports nothing until it has read every folder of the tree (seconds of CPU over 10,000 task
    // folders), so it starts once the first list is built rather than slow it down; whatever changed after
    // the seed, during the listing or the walk, is caught up once, at ready.
    opened.watching = listed.then(() => opened.feed.start(seeded));
    this.hub.publish({ type: 'directory-changed', root: realRoot });
    const runner = this.options.runner;
    // Resuming runs each task's agent module: never in a directory opened to be looked at only.
    if (runner?.recoverInterrupted && this.options.recoverOnOpen !== false && !opened.readOnly) {
      opened.recovery = startRecovery(opened, (root, candidates) => runner.recoverInterrupted!(root, candidates), this.hub, listed);
    }
    return this.directoryInfo();
  }

  /**
   * Open a LangGraph checkpointer as the browsed source: read-only whatever
   * was asked (Waystation never runs a LangGraph graph), watched through its
   * file or polled (see langgraph-watcher.ts) instead of chokidar. Its root
   * is the file's real path, or the URL without its password.
   */
  private async openLangGraph(location: string, file: string | null): Promise<DirectoryInfo> {
    const source = await openLangGraphSource(location);
    const realRoot = file ? await fs.realpath(file) : source.root;
    await this.closeDirectory();
    const opened = new OpenDirectory({
      root: realRoot,
      readOnly: true,
      store: source,
      hub: this.hub,
      hashes: this.moduleHashes,
      onClose: () => source.close(),
    });
    this.current = opened;
    // A database URL is not remembered: it may hold a password, and the recent list is shown and stored in the clear.
    if (file) await this.rememberFolder(realRoot, true);
    const listed = opened.list.built().then(
      () => undefined,
      () => undefined,
    );
    opened.watching = listed.then(() => {
      if (!opened.isOpen) return;
      const watcher = watchLangGraph(source, file, (changes) => void opened.queue.run(() => opened.feed.apply(changes)).catch(() => {}), {
        onError: (err) => {
          if (opened.isOpen) this.hub.publish({ type: 'directory-notice', root: realRoot, detail: `watching ${realRoot}: ${err.message}` });
        },
      });
      opened.onClosing(() => watcher.close());
      return watcher.ready;
    });
    this.hub.publish({ type: 'directory-changed', root: realRoot });
    return this.directoryInfo();
  }

  /**
   * Add a folder just opened to the recent ones. Best effort: the directory is
   * open and watched whether or not the settings file could be written, so a
   * failure is reported to subscribers rather than failing the open.
   */
  private async rememberFolder(root: string, readOnly: boolean): Promise<void> {
    try {
      await this.options.recent?.remember(root, { readOnly });
    } catch (err) {
      this.hub.publish({
        type: 'directory-notice',
        root,
        detail: `${root} is open, but it could not be added to the recent folders: ${messageOf(err)}`,
      });
    }
  }

  /** Resolves once the recovery started when the current directory was opened has run its course (tests). */
  async recovered(): Promise<void> {
    await this.current?.recovery;
  }

  /** Stop watching and forget the open directory. */
  async closeDirectory(): Promise<void> {
    const dir = this.current;
    this.current = null;
    if (!dir) return;
    await dir.close();
  }

  /** Quit: the watcher stops, running tasks are left resumable, subscribers are dropped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopRunnerFeed();
    await this.closeDirectory();
    await this.options.runner?.shutdown();
    this.hub.clear();
  }

  /** Resolves once the watcher of the open directory is ready and caught up (tests). */
  async watching(): Promise<void> {
    await this.current?.watching;
  }

  /** Resolves once every watcher batch seen so far has been turned into events (tests). */
  async settled(): Promise<void> {
    await this.current?.queue.idle();
  }

  subscribe(listener: HostEventListener, lastEventId?: number): () => void {
    return this.hub.subscribe(listener, lastEventId);
  }

  // ---- the directory ------------------------------------------------------------------------

  private directoryInfo(): DirectoryInfo {
    const recent = this.options.recent;
    return {
      root: this.root,
      recent: recent?.list() ?? [],
      host: this.options.host,
      read_only: this.current ? this.current.readOnly : !this.options.runner,
      recent_read_only: recent?.readOnly() ?? [],
    };
  }

  async getDirectory(): Promise<DirectoryInfo> {
    return this.directoryInfo();
  }

  async openDirectory(input: ApiParsedInput<'openDirectory'>): Promise<DirectoryInfo> {
    const requested = path.resolve(input.path);
    const current = this.root;
    const same = current !== null && (requested === current || (await fs.realpath(requested).catch(() => requested)) === current);
    // The same folder, asked for in the mode it is open in or in no particular mode, is already open. The web
    // host's mode is the one it was started with (`--read-only`), so there the answer says which it is.
    if (same && (this.options.host === 'web' || input.readOnly === undefined || input.readOnly === this.current?.readOnly))
      return this.directoryInfo();
    if (this.options.host === 'web') {
      // The web host serves the one directory it was started on; anything else would widen what the token opens.
      throw new ApiError(
        'forbidden',
        `this web host serves ${current ?? 'no directory'} only; start \`waystation serve ${input.path}\` to browse another directory`,
      );
    }
    const recent = this.options.recent?.list() ?? [];
    // A renderer may reopen a folder the user picked before, never name an arbitrary one.
    if (!recent.includes(requested)) {
      throw new ApiError('forbidden', `${requested} is not among the recent folders; choose it with Open folder… first`);
    }
    return this.open(requested, { readOnly: input.readOnly });
  }

  async chooseDirectory(input: ApiParsedInput<'chooseDirectory'>): Promise<DirectoryInfo | null> {
    if (!this.options.chooseDirectory) return null;
    const chosen = await this.options.chooseDirectory({ readOnly: input.readOnly });
    if (!chosen) return null;
    return this.open(chosen, { readOnly: input.readOnly });
  }

  private dir(): OpenDirectory {
    if (!this.current) throw notOpen();
    return this.current;
  }

  // ---- reading ------------------------------------------------------------------------------

  async listTasks(): Promise<ApiOutputs['listTasks']> {
    return this.dir().list.list();
  }

  /**
   * Every task's summary with its plan's steps: exactly what `waystation ls
   * --json` prints, served as GET /api/tasks. The app's own list is
   * listTasks, which leaves the plans out.
   */
  async listTaskListings(): Promise<TaskListing[]> {
    return this.dir().list.listings();
  }

  async getTask(input: ApiParsedInput<'getTask'>): Promise<TaskDetail> {
    return this.dir().reads.getTask(input);
  }

  async getHistory(input: ApiParsedInput<'getHistory'>): Promise<ApiOutputs['getHistory']> {
    return this.dir().reads.getHistory(input);
  }

  async getStepResult(input: ApiParsedInput<'getStepResult'>): Promise<ApiOutputs['getStepResult']> {
    return this.dir().reads.getStepResult(input);
  }

  async getMessages(input: ApiParsedInput<'getMessages'>): Promise<ApiOutputs['getMessages']> {
    return this.dir().reads.getMessages(input);
  }

  async diffVersions(input: ApiParsedInput<'diffVersions'>): Promise<ApiOutputs['diffVersions']> {
    return this.dir().reads.diffVersions(input);
  }

  async verifyTask(input: ApiParsedInput<'verifyTask'>): Promise<ApiOutputs['verifyTask']> {
    return this.dir().reads.verifyTask(input);
  }

  async listAgents(): Promise<AgentInfo[]> {
    const builtIn = builtInAgentInfos();
    const registered = (await this.current?.registered?.list()) ?? [];
    return catalogOf(builtIn, registered);
  }

  // ---- acting -------------------------------------------------------------------------------

  async startTask(input: ApiParsedInput<'startTask'>): Promise<ActionResult> {
    return this.operations.start(this.dir(), input);
  }

  async resumeTask(input: ApiParsedInput<'resumeTask'>): Promise<ActionResult> {
    return this.operations.resume(this.dir(), input);
  }

  async approveResume(input: ApiParsedInput<'approveResume'>): Promise<ActionResult> {
    return this.operations.approve(this.dir(), input);
  }

  async rejectResume(input: ApiParsedInput<'rejectResume'>): Promise<ActionResult> {
    return this.operations.reject(this.dir(), input);
  }

  async editStepResult(input: ApiParsedInput<'editStepResult'>): Promise<ActionResult> {
    return this.operations.edit(this.dir(), input);
  }

  async stopTask(input: ApiParsedInput<'stopTask'>): Promise<ActionResult> {
    return this.operations.stop(this.dir(), input);
  }

  async forkTask(input: ApiParsedInput<'forkTask'>): Promise<ActionResult> {
    return this.operations.fork(this.dir(), input);
  }

  async previewRewind(input: ApiParsedInput<'previewRewind'>): Promise<ApiOutputs['previewRewind']> {
    return this.operations.previewRewind(this.dir(), input);
  }

  async rewindTask(input: ApiParsedInput<'rewindTask'>): Promise<ActionResult> {
    return this.operations.rewind(this.dir(), input);
  }
}
