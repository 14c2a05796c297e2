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
import { combineFigures, taskFigures, type TaskFigures } from './directory-overview.js';
import {
  EVENTS_PAGE,
  type ActionResult,
  type AgentInfo,
  type ApiOutputs,
  type ApiParsedInput,
  type DirectoryInfo,
  type DirectoryTrust,
  type HostEventListener,
  type TaskDetail,
  type WaystationService,
} from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import type { TaskListing } from '../../shared/checkpoint/task-summary.js';
import { openStore } from '../store/directory-store.js';
import { openLocation } from '../store/open-location.js';
import { isPostgresUrl, redactUrl } from '../store/postgres/redact-url.js';
import { isCheckpointStore, type CheckpointSource, type CheckpointStore } from '../store/store-types.js';
import { detectLocation, type DetectedLocation } from '../sources/detect-location.js';
import { builtInAgentInfos, catalogOf } from './agent-catalog-cache.js';
import { EventHub } from './event-hub.js';
import { HostOperations } from './host-operations.js';
import type { HostRunner, RecentFolders, WatchTiming } from './host-ports.js';
import { OpenDirectory } from './open-directory.js';
import { snapshotRoot } from './root-snapshot.js';
import { recoverRunsThatEnd, startRecovery } from './auto-recovery.js';
import { ModuleHashCache } from './task-agent-status.js';
import { messageOf } from '../../shared/api/error-codes.js';
import { howToTrust, userTrustGate, type TrustGate } from '../runtime/directory-trust.js';
import { newTaskIdProblem } from '../runtime/task-operations.js';
import { optionsTooLarge } from '../runtime/worker-job-channel.js';
import { describeDirectoryTrust } from './directory-trust-info.js';
import { refuseUnlistedAgent } from './start-agent-check.js';

export type { HostRunner, RecentFolders, RunnerEvent } from './host-ports.js';

export interface HostServiceOptions {
  host: 'desktop' | 'web';
  runner?: HostRunner | null;
  recent?: RecentFolders;
  /** Desktop: show a system notification; resolves to whether one was shown. */
  notify?: (n: { title: string; body: string }) => boolean;
  /** Desktop: show the folder picker; resolves to the chosen path or null. */
  chooseDirectory?: (opts: { readOnly: boolean }) => Promise<string | null>;
  openStore?: (root: string) => CheckpointStore;
  /** Watcher batching, the running rows' pace and the wait before a stopped run is recovered, for tests. */
  watch?: WatchTiming;
  /**
   * Resume interrupted auto-mode tasks when a directory is opened, and those
   * whose run stops while it is open (default true when there is a runner):
   * auto mode promises that such tasks carry on without a human, so the first
   * host to see them after a crash restarts them.
   */
  recoverOnOpen?: boolean;
  hub?: EventHub;
  /**
   * Which directories a person trusts (directory-trust.ts): an untrusted one
   * is browsed read-only until trusted. The user's trust store by default.
   */
  trust?: TrustGate;
}

/**
 * The store of a directory the host opens: its version files are checked on
 * the host's own thread. The host asks for those checks once its list is
 * built, a slice of 200 tasks at a time (about 10 ms each, some 0.3 s for
 * 10,000 tasks), where a thread of their own held 10 to 22 MiB more at the
 * host's peak (docs/BENCHMARKS.md, issue 21).
 */
function openHostStore(root: string): CheckpointStore {
  return openStore(root, { fileCheckThread: false });
}

const notOpen = () => new ApiError('not-found', 'no checkpoint directory is open; open one first');

/** The host service; see the module comment. */
export class HostService implements WaystationService {
  /** Each task's share of the directory overview, by root and task id, for the version it was read at. */
  private readonly overviewFigures = new Map<string, { version: number; figures: TaskFigures }>();
  readonly hub: EventHub;
  private current: OpenDirectory | null = null;
  private readonly stopRunnerFeed: () => void;
  private closed = false;
  private readonly moduleHashes = new ModuleHashCache();
  private readonly operations: HostOperations;
  /** The open directory is not trusted (directory-trust.ts): browsed read-only until trustDirectory. */
  private untrusted = false;

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
   * `detected`: what `dir` is, when the caller found out already (`serve`
   * does, before it starts the host): a database is then not asked again.
   */
  async open(dir: string, opts: { readOnly?: boolean; detected?: DetectedLocation } = {}): Promise<DirectoryInfo> {
    // A database or a LangGraph checkpointer opens as a store or a source of its own; anything else must be a directory.
    const found = opts.detected ?? (await detectLocation(dir));
    // The runner opens the database itself, so it is handed the URL as given (its password included); everything
    // shown names it by store.root, without the password. LangGraph's tables beside the store are said, as the
    // reading commands say them: their threads are not shown.
    if (found.kind === 'postgres-store')
      return this.openNonDirectory((this.options.openStore ?? openLocation)(dir), {
        ...opts,
        location: dir,
        alsoHoldsLangGraph: found.holds === 'waystation-and-langgraph',
      });
    if (found.kind === 'langgraph-sqlite' || found.kind === 'langgraph-postgres') {
      // Waystation never runs a LangGraph graph: a checkpointer is browsed, read-only whatever was asked. Its readers
      // (SQLite's and PostgreSQL's drivers, the msgpack decoder) are loaded only then: a host of a directory never needs them.
      const { openLangGraphSource } = await import('../sources/langgraph/open-langgraph.js');
      const source = await openLangGraphSource(dir, found);
      return this.openNonDirectory(source, { readOnly: true, remember: found.kind === 'langgraph-sqlite' });
    }
    const root = path.resolve(dir);
    const stats = await fs.stat(root).catch(() => null);
    if (!stats?.isDirectory()) {
      const why = stats && found.kind === 'neither' ? `: ${found.reason}` : '';
      throw new ApiError('not-found', `${root} is not a directory${why}; nothing was opened`);
    }
    const realRoot = await fs.realpath(root);
    // Nothing of a directory runs before a person trusts it: untrusted is read-only, whatever was asked.
    const untrusted = this.options.runner ? !(await this.trustGate().isTrusted(realRoot)) : false;
    await this.closeDirectory();
    this.untrusted = untrusted;
    const opened = new OpenDirectory({
      root: realRoot,
      // A host without a runner browses every directory read-only; unless told otherwise, a folder opened
      // read-only before opens read-only again: it was not trusted to run code.
      readOnly: !this.options.runner || untrusted || (opts.readOnly ?? this.options.recent?.readOnly().includes(realRoot) ?? false),
      store: (this.options.openStore ?? openHostStore)(realRoot),
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
    // The watcher sets up a watch per task folder (a readdir and 10,000 watches, a slice at a time), so it
    // starts once the first list is built rather than hold up its reads; whatever changed after the
    // seed, during the listing or the set-up, is caught up once, at ready.
    opened.watching = listed.then(() => opened.feed.start(seeded));
    this.hub.publish({ type: 'directory-changed', root: realRoot });
    this.startRecovery(opened, listed);
    return this.directoryInfo();
  }

  /**
   * Resume the interrupted auto-mode tasks of `opened` once it is `listed`, and those whose run stops while it is
   * open (auto-recovery.ts). Resuming runs each task's agent module: never in a directory opened to be looked
   * at only.
   */
  private startRecovery(opened: OpenDirectory, listed: Promise<void>): void {
    const runner = this.options.runner;
    if (!runner?.recoverInterrupted || this.options.recoverOnOpen === false || opened.readOnly) return;
    const recover = (root: string, candidates?: readonly string[]) => runner.recoverInterrupted!(root, candidates);
    opened.recovery = startRecovery(opened, recover, this.hub, listed);
    recoverRunsThatEnd(opened, recover, this.hub, this.options.watch?.recoverAfterMs);
  }

  /**
   * Open a store or source that is not a directory (a database, a LangGraph
   * checkpointer): its change feed is its own subscription instead of a
   * watcher. A database is not added to the recent folders (its URL may hold
   * a password, and that list is stored in the clear); a LangGraph file is,
   * read-only. A source that cannot be written is browsed read-only.
   */
  private async openNonDirectory(
    store: CheckpointSource,
    opts: { readOnly?: boolean; remember?: boolean; location?: string; alsoHoldsLangGraph?: boolean },
  ): Promise<DirectoryInfo> {
    const writable = isCheckpointStore(store);
    let untrusted: boolean;
    try {
      // A database holds no code: what runs is read from its artifact folder, which must be trusted like a directory.
      untrusted = writable && this.options.runner ? !(await this.trustGate().isTrusted(store.artifactRoot)) : false;
    } catch (err) {
      await store.close().catch(() => {});
      throw err;
    }
    const opened = new OpenDirectory({
      root: opts.location ?? store.root,
      readOnly: !writable || !this.options.runner || untrusted || (opts.readOnly ?? false),
      store,
      alsoHoldsLangGraph: opts.alsoHoldsLangGraph,
      hub: this.hub,
      hashes: this.moduleHashes,
      describeRegistered: writable ? this.options.runner?.registeredAgents?.bind(this.options.runner) : undefined,
      watch: this.options.watch,
      onClose: () => store.close(),
    });
    // Subscribed to first, then listed: a change made while the list is read is delivered after it (its batch
    // queues behind the build), never lost between the two.
    const watching = opened.feed.startFromStore();
    opened.watching = watching;
    try {
      // The task list's first rows, read before anything is replaced: a store that cannot be listed fails here with
      // its own words (unreachable, wrong password, no schema). The rest of the list is read while the host serves,
      // and is the one the renderer's listings are answered from: a database is listed once on open, not once to
      // check it and again to show it.
      await Promise.all([watching, opened.list.firstRows(1)]);
    } catch (err) {
      // A subscription still being set up is let finish (or fail) first, so that closing ends it too.
      await watching.catch(() => {});
      await opened.close().catch(() => {});
      throw err;
    }
    await this.closeDirectory();
    this.untrusted = untrusted;
    this.current = opened;
    if (opts.remember) await this.rememberFolder(store.root, true);
    this.hub.publish({ type: 'directory-changed', root: store.root });
    this.startRecovery(opened, Promise.resolve());
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
      // The store's own name for where it is: a database's URL without its password.
      root: this.current ? this.current.store.root : null,
      recent: recent?.list() ?? [],
      host: this.options.host,
      read_only: this.current ? this.current.readOnly : !this.options.runner,
      recent_read_only: recent?.readOnly() ?? [],
      untrusted: this.current !== null && this.untrusted,
      also_holds_langgraph: this.current?.alsoHoldsLangGraph ?? false,
    };
  }

  private trustGate(): TrustGate {
    return this.options.trust ?? userTrustGate();
  }

  async getDirectoryTrust(): Promise<DirectoryTrust> {
    const dir = this.dir();
    const tasks = await this.listTasks().catch(() => []);
    // The folder whose code runs: the directory itself, or a database's artifact folder.
    return describeDirectoryTrust(dir.store.artifactRoot, this.trustGate(), tasks, { canTrust: Boolean(this.options.runner) });
  }

  /**
   * Trust the open directory, as a person asked in the trust prompt, and open
   * it again to run: its interrupted auto-mode tasks resume then. Refused
   * when the path is not the directory open (the prompt showed another).
   */
  async trustDirectory(input: ApiParsedInput<'trustDirectory'>): Promise<DirectoryInfo> {
    const dir = this.dir();
    const named = await fs.realpath(path.resolve(input.path)).catch(() => path.resolve(input.path));
    const codeRoot = dir.store.artifactRoot;
    if (named !== codeRoot) {
      throw new ApiError(
        'forbidden',
        `${input.path} is not the open directory's folder (${codeRoot}); only the open directory can be trusted; nothing was trusted`,
      );
    }
    if (!this.options.runner) throw new ApiError('forbidden', 'this host runs no tasks (it was started read-only); nothing was trusted');
    await this.trustGate().trust(codeRoot);
    if (!this.untrusted) return this.directoryInfo();
    return this.open(dir.root, { readOnly: false });
  }

  /** Refuse an action in an untrusted directory, with the reason and the way to trust it. */
  private trusted(): OpenDirectory {
    const dir = this.dir();
    if (this.untrusted) {
      throw new ApiError(
        'forbidden',
        `${dir.store.artifactRoot} is not trusted: nothing in it is started, resumed, approved, rejected or edited, and no agent module is loaded; nothing was done. To run its tasks, ${howToTrust(dir.store.artifactRoot)}`,
      );
    }
    return dir;
  }

  async getDirectory(): Promise<DirectoryInfo> {
    return this.directoryInfo();
  }

  async openDirectory(input: ApiParsedInput<'openDirectory'>): Promise<DirectoryInfo> {
    if (isPostgresUrl(input.path)) return this.openDatabase(input);
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
        `this web host serves ${this.current?.store.root ?? 'no directory'} only; start \`waystation serve ${input.path}\` to browse another directory`,
      );
    }
    const recent = this.options.recent?.list() ?? [];
    // A renderer may reopen a folder the user picked before, never name an arbitrary one.
    if (!recent.includes(requested)) {
      throw new ApiError('forbidden', `${requested} is not among the recent folders; choose it with Open folder… first`);
    }
    return this.open(requested, { readOnly: input.readOnly });
  }

  /**
   * Open a database the user named in the app's Open database… dialog. A URL
   * names no file a renderer could reach beyond what it was shown, so, unlike
   * a folder, it need not be among the recent ones (which never hold URLs:
   * their passwords would be written to the settings file). The web host
   * still serves only the location it was started on.
   */
  private async openDatabase(input: ApiParsedInput<'openDirectory'>): Promise<DirectoryInfo> {
    const shown = redactUrl(input.path);
    if (this.options.host === 'web') {
      if (this.current?.store.root === shown) return this.directoryInfo();
      throw new ApiError(
        'forbidden',
        `this web host serves ${this.current?.store.root ?? 'no directory'} only; start \`waystation serve ${shown}\` to browse that database`,
      );
    }
    return this.open(input.path, { readOnly: input.readOnly });
  }

  async getOverview(): Promise<ApiOutputs['getOverview']> {
    const dir = this.dir();
    const listed = await dir.list.withFigures();
    const figures: TaskFigures[] = [];
    for (const { summary, figures: ofRow } of listed) {
      if (summary.version === null) continue;
      // A directory's rows hold them, read with the list: opening 10,000 tasks whole for them took 12.7 s.
      if (ofRow) {
        figures.push(ofRow);
        continue;
      }
      // Kept per task and version: only tasks that moved on since the last overview are read again.
      const key = `${dir.root}\u0000${summary.task_id}`;
      const kept = this.overviewFigures.get(key);
      if (kept && kept.version === summary.version) {
        figures.push(kept.figures);
        continue;
      }
      const entry = await dir.store.getTask(summary.task_id).catch(() => null);
      if (!entry?.checkpoint) continue;
      const f = taskFigures(entry.checkpoint);
      if (!f) continue;
      this.overviewFigures.set(key, { version: entry.checkpoint.version, figures: f });
      figures.push(f);
    }
    return combineFigures(figures, { read: figures.length, total: listed.length });
  }

  async showNotification(input: ApiParsedInput<'showNotification'>): Promise<ApiOutputs['showNotification']> {
    // Only the desktop app can reach the system's notifications from here; a web host has no screen of its own.
    if (!this.options.notify) return { shown: false };
    return { shown: this.options.notify({ title: input.title, body: input.body }) };
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

  async listTasks(input: ApiParsedInput<'listTasks'> = {}): Promise<ApiOutputs['listTasks']> {
    const { list } = this.dir();
    return input.limit === undefined ? list.list() : list.firstRows(input.limit);
  }

  /**
   * Every task's summary with its plan's steps: exactly what `waystation ls
   * --json` prints, served as GET /api/tasks. The app's own list is
   * listTasks, which leaves the plans out.
   */
  async listTaskListings(): Promise<TaskListing[]> {
    return this.dir().list.listings();
  }

  /** listTaskListings as JSON text, in pieces (see KeptTaskList.listingsJson): what GET /api/tasks sends. */
  async listTaskListingsJson(): Promise<Iterable<string>> {
    return this.dir().list.listingsJson();
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

  async getEvents(input: ApiParsedInput<'getEvents'>): Promise<ApiOutputs['getEvents']> {
    const dir = this.dir();
    const entry = await dir.reads.entry(input.taskId);
    // Only a Waystation task folder keeps an event log; another format has none to show.
    if (entry.format !== 'waystation') return { events: [], skipped: 0 };
    // The newest page only: a log of millions of lines is never held whole. Ids go up by one per event, so
    // those before the page are counted from the first one sent.
    const events = await dir.store.readEvents(entry.task_id, input.after, { last: EVENTS_PAGE });
    const first = events[0];
    const skipped = first ? Math.max(0, first.id - (input.after ?? 0) - 1) : 0;
    return { events: events.length > EVENTS_PAGE ? events.slice(-EVENTS_PAGE) : events, skipped };
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
    const dir = this.trusted();
    // Before any lookup on disk: an id no worker accepts is refused here, and a name too long for the disk names no path.
    if (input.taskId && !(await dir.store.getTask(input.taskId).catch(() => null))) {
      const why = newTaskIdProblem(input.taskId);
      if (why) throw new ApiError('invalid-input', why);
    }
    const heavy = optionsTooLarge(input.options);
    if (heavy) throw new ApiError('too-large', heavy);
    // Only an agent the directory's catalog lists is started: a path is never an agent name.
    if (this.options.runner && !dir.readOnly) refuseUnlistedAgent(input.agent, await this.listAgents());
    return this.operations.start(dir, input);
  }

  async resumeTask(input: ApiParsedInput<'resumeTask'>): Promise<ActionResult> {
    return this.operations.resume(this.trusted(), input);
  }

  async approveResume(input: ApiParsedInput<'approveResume'>): Promise<ActionResult> {
    return this.operations.approve(this.trusted(), input);
  }

  async rejectResume(input: ApiParsedInput<'rejectResume'>): Promise<ActionResult> {
    return this.operations.reject(this.trusted(), input);
  }

  async editStepResult(input: ApiParsedInput<'editStepResult'>): Promise<ActionResult> {
    return this.operations.edit(this.trusted(), input);
  }

  async stopTask(input: ApiParsedInput<'stopTask'>): Promise<ActionResult> {
    return this.operations.stop(this.trusted(), input);
  }

  async forkTask(input: ApiParsedInput<'forkTask'>): Promise<ActionResult> {
    return this.operations.fork(this.trusted(), input);
  }

  async previewRewind(input: ApiParsedInput<'previewRewind'>): Promise<ApiOutputs['previewRewind']> {
    return this.operations.previewRewind(this.dir(), input);
  }

  async rewindTask(input: ApiParsedInput<'rewindTask'>): Promise<ActionResult> {
    return this.operations.rewind(this.trusted(), input);
  }

  // A LangGraph checkpointer is browsed read-only; editing a thread's state is its one write, asked for explicitly.
  async previewThreadEdit(input: ApiParsedInput<'previewThreadEdit'>): Promise<ApiOutputs['previewThreadEdit']> {
    const { previewThreadEdit } = await import('./langgraph-edit.js');
    return previewThreadEdit(this.dir().store, input);
  }

  async editThreadState(input: ApiParsedInput<'editThreadState'>): Promise<ActionResult> {
    const { editThreadState } = await import('./langgraph-edit.js');
    return editThreadState(this.dir().store, input);
  }
}
