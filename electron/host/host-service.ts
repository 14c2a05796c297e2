/**
 * The host service: the Waystation API implemented over the store, the
 * verifier and the runner, for one open checkpoint directory at a time.
 *
 * Both transports (Electron IPC, the loopback web host) dispatch to one
 * instance. It owns the directory watcher and the event hub: changes on disk
 * become `task-changed` / `task-removed` / `task-event` events, found per
 * changed task, never by rescanning the whole directory.
 *
 * The task list is kept in memory: built once per open directory (started
 * right after opening, so it overlaps with the renderer loading), then updated
 * per changed task by the same watcher batches that publish events. Listing
 * 10,000 tasks from disk reads and checks 10,000 files (a second or more on a
 * small machine); answering from the kept list costs the serialisation alone.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
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
import type { Checkpoint, RecoveryMode } from '../../shared/checkpoint/schema.js';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import { builtInAgents } from '../agents/registry.js';
import { openStore } from '../store/directory-store.js';
import { TaskReadError, type CheckpointStore, type ListedTask, type TaskEntry } from '../store/store-types.js';
import { mayNeedRecovery, type TaskListing, type TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { IMPORT_SUFFIX } from '../store/directory-scan.js';
import { readLeaseState } from '../verify/lease-state.js';
import { summarizeEntries, summarizeEntry } from '../verify/summarize-entry.js';
import { verifyTask } from '../verify/verify-task.js';
import { hasRecoveryNews, recoveryReport } from '../store/recovery-report.js';
import { isModuleSpecifier, moduleFileOf } from '../runtime/agent-loader.js';
import { readAgentsConfig } from '../runtime/agent-catalog.js';
import type { DirectoryChange, DirectoryWatcher } from './directory-watcher.js';
import { watchDirectoryInThread } from './directory-watcher-thread.js';
import { EventHub } from './event-hub.js';
import { resolveInsideRoot } from './path-confinement.js';
import { changesSince, EVENTS_FILE, lastEventIdWithin, snapshotRoot, type RootSnapshot } from './root-snapshot.js';
import { ModuleHashCache, taskAgentStatus, type LoadFailure } from './task-agent-status.js';
import { VersionCache } from './version-cache.js';

/** What the runner reports about the processes it drives. */
export interface RunnerEvent {
  taskId: string;
  state: 'started' | 'exited' | 'output';
  detail: string;
  /** For an exit that refused the operation: the runtime's code (`agent-unavailable`, `busy`, ...). */
  error?: string;
}

/**
 * The runner as the host needs it: operations on tasks of a directory, the
 * long ones (start, resume, approve) in child processes that outlive any
 * renderer, and a feed of what those processes do.
 */
export interface HostRunner {
  /** Start a new task in a child process; resolves once the process is launched. */
  start(root: string, req: { taskId?: string; agent: string; options: Record<string, unknown>; mode: RecoveryMode }): Promise<ActionResult>;
  resume(root: string, taskId: string): Promise<ActionResult>;
  approve(root: string, taskId: string, by?: string): Promise<ActionResult>;
  reject(root: string, taskId: string, reason: string, by?: string): Promise<ActionResult>;
  /** With `expectedVersion`, refused when the task has moved past the version the value was chosen on (checked under the task's lock). */
  edit(root: string, taskId: string, stepId: string, value: unknown, expectedVersion?: number): Promise<ActionResult>;
  /** Agents registered for a directory (waystation.config.json), beyond the built-in ones. */
  registeredAgents?(root: string): Promise<AgentInfo[]>;
  /**
   * Resume the directory's interrupted auto-mode tasks (and prepare plans for
   * interrupted confirm-mode ones). Resolves when that recovery has run its
   * course; the host starts it when it opens a directory and does not wait.
   */
  recoverInterrupted?(root: string, candidates?: readonly string[]): Promise<void>;
  onEvent(listener: (event: RunnerEvent) => void): () => void;
  /** On quit: stop the child processes so that their tasks stay resumable. */
  shutdown(): Promise<void>;
}

/** Where recent folders are remembered (the desktop app's settings file). */
export interface RecentFolders {
  list(): string[];
  /** Those of `list()` last opened read-only. */
  readOnly(): string[];
  remember(root: string, opts: { readOnly: boolean }): Promise<void>;
}

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

interface OpenDirectory {
  root: string;
  /** Browsed only: nothing is run, no agent module is loaded (see DirectoryInfo.read_only). */
  readOnly: boolean;
  store: CheckpointStore;
  /** Started once the first task list is built (see open); null until then. */
  watcher: DirectoryWatcher | null;
  /** Task location (folder or root file) -> task id, as last seen. */
  locations: Map<string, string>;
  /** Task id -> id of the last event of its events.jsonl already published (or, once looked up, there when the directory was opened). */
  lastEvent: Map<string, number>;
  /**
   * Task folder -> size of its events.jsonl when the directory was opened, for
   * tasks whose last event id has not been needed yet: it is read from there
   * (`lastEventIdWithin`) when the task first changes, not for every task at open.
   */
  eventSeed: Map<string, number>;
  /** Batches are handled one after the other, so events keep their order. */
  queue: Promise<void>;
  /**
   * Task id -> what the last full verify found drifted, at which version. The
   * task view shows it even when a stat cannot (a same-size rewrite), and a new
   * finding is announced once, not at every verify.
   */
  verifiedDrift: Map<string, { version: number; signature: string }>;
  /** Registered agents, loaded once per directory and again when waystation.config.json or one of their modules changes. */
  registered: Promise<AgentInfo[]> | null;
  /** The identity of the registered modules' files when `registered` was loaded (see registeredModulesIdentity). */
  registeredIdentity: string | null;
  /** The start-up recovery of interrupted auto-mode tasks, while it runs. */
  recovery: Promise<void> | null;
  /** Settles once the watcher is ready and what changed before it was has been applied. */
  watching: Promise<void> | null;
  /**
   * The task list, by location, once built; null until the first build. A
   * task appearing or going away is patched in (see keepChange), never
   * rebuilt from the whole directory.
   */
  summaries: Map<string, KeptSummary> | null;
  /** Tasks were added to `summaries` since it was last put in task id order (the store's listing order). */
  unordered: boolean;
  /** The build in progress, shared by concurrent listings. */
  building: Promise<Map<string, KeptSummary>> | null;
  /** The last few versions rebuilt for a diff or a look at a past version. */
  versions: VersionCache;
  /**
   * Task id -> why its agent module did not load at the last resume or
   * approval, with the module's hash then. A pending entry is awaited, so a
   * refresh prompted by the exit never misses the failure that caused it.
   */
  loadFailures: Map<string, Promise<LoadFailure | null>>;
}

/**
 * One task of the kept list. `recheck` holds the entry of a task whose
 * summary can change with no file of its folder changing: a lease that
 * lapses, artifacts (outside the folder) that drift. Those few are
 * summarized again at every listing; the rest are served as kept.
 */
interface KeptSummary {
  summary: TaskSummary;
  recheck: ListedTask | null;
  /**
   * The plan's steps, for the listing `waystation ls --json` prints (GET
   * /api/tasks), flat: id, name and status of each step in one array of the
   * strings the parse made. One object per task instead of one per step kept
   * from the first build on: with an object per step, that build took about
   * 15% longer at 10,000 tasks.
   */
  steps: string[];
}

function keep(entry: ListedTask, summary: TaskSummary): KeptSummary {
  const volatile = summary.display_status === 'running' || (entry.checkpoint?.artifacts?.length ?? 0) > 0;
  const steps: string[] = [];
  for (const s of entry.checkpoint?.plan ?? []) steps.push(s.id, s.name, s.status);
  return { summary, recheck: volatile ? entry : null, steps };
}

/** The steps a listing shows, back from their flat form. */
function stepsOf(flat: readonly string[]): TaskListing['plan'] {
  const plan: TaskListing['plan'] = [];
  for (let i = 0; i < flat.length; i += 3)
    plan.push({ id: flat[i], name: flat[i + 1], status: flat[i + 2] as TaskListing['plan'][number]['status'] });
  return plan;
}

const notOpen = () => new ApiError('not-found', 'no checkpoint directory is open; open one first');

/** The host service; see the module comment. */
export class HostService implements WaystationService {
  readonly hub: EventHub;
  private current: OpenDirectory | null = null;
  private readonly stopRunnerFeed: () => void;
  private closed = false;
  private readonly moduleHashes = new ModuleHashCache();

  constructor(private readonly options: HostServiceOptions) {
    this.hub = options.hub ?? new EventHub();
    this.stopRunnerFeed =
      options.runner?.onEvent((e) => {
        if (e.state === 'exited') this.noteLoadOutcome(e);
        this.hub.publish({ type: 'runner', taskId: e.taskId, state: e.state, detail: e.detail });
      }) ?? (() => {});
  }

  /**
   * Remember why a task's agent module did not load, or forget it once a
   * worker got past loading. Only a load can tell that a module throws or
   * exports no agent, and the task view should keep saying so after the
   * runner's message has scrolled by.
   */
  private noteLoadOutcome(e: RunnerEvent): void {
    const dir = this.current;
    if (!dir) return;
    if (e.error === undefined) {
      dir.loadFailures.delete(e.taskId);
      return;
    }
    if (e.error !== 'agent-unavailable') return;
    const failure = dir.store
      .getTask(e.taskId)
      .then(async (entry) => {
        const ref = entry?.checkpoint?.agent;
        const file = ref ? moduleFileOf(ref, dir.root) : null;
        return file ? { message: e.detail, sha256: await this.moduleHashes.hash(file) } : null;
      })
      .catch(() => null);
    dir.loadFailures.set(e.taskId, failure);
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
    const root = path.resolve(dir);
    const stats = await fs.stat(root).catch(() => null);
    if (!stats?.isDirectory()) throw new ApiError('not-found', `${root} is not a directory; nothing was opened`);
    const realRoot = await fs.realpath(root);
    await this.closeDirectory();
    const store = (this.options.openStore ?? openStore)(realRoot);
    const dirState: OpenDirectory = {
      root: realRoot,
      // A host without a runner browses every directory read-only; unless told otherwise, a folder opened
      // read-only before opens read-only again: it was not trusted to run code.
      readOnly: !this.options.runner || (opts.readOnly ?? this.options.recent?.readOnly().includes(realRoot) ?? false),
      store,
      watcher: null,
      locations: new Map(),
      lastEvent: new Map(),
      eventSeed: new Map(),
      queue: Promise.resolve(),
      verifiedDrift: new Map(),
      registered: null,
      registeredIdentity: null,
      recovery: null,
      watching: null,
      summaries: null,
      unordered: false,
      building: null,
      versions: new VersionCache(realRoot),
      loadFailures: new Map(),
    };
    this.current = dirState;
    // Changes reported from here on queue behind the seed, so each task's event log is published from where it stood.
    const seeded = snapshotRoot(realRoot);
    dirState.queue = seeded.then(
      (snap) => {
        for (const [name, log] of snap.events) dirState.eventSeed.set(name, log.size);
      },
      () => undefined,
    );
    await dirState.queue;
    await this.rememberFolder(realRoot, dirState.readOnly);
    // Built now, in the background: the renderer's first listing then finds it ready or under way.
    const listed = this.keptSummaries(dirState).then(
      () => undefined,
      () => undefined,
    );
    // chokidar reports nothing until it has read every folder of the tree (seconds of CPU over 10,000 task
    // folders), so it starts once the first list is built rather than slow it down; whatever changed after
    // the seed, during the listing or the walk, is caught up once, at ready.
    dirState.watching = listed.then(() => this.startWatcher(dirState, seeded));
    this.hub.publish({ type: 'directory-changed', root: realRoot });
    this.startRecovery(dirState, listed);
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
        type: 'runner',
        taskId: '',
        state: 'output',
        detail: `${root} is open, but it could not be added to the recent folders: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }

  /**
   * Start watching an open directory, and catch up at ready on what changed
   * since `seeded` was taken. Resolves once that catch-up is applied.
   */
  private startWatcher(dir: OpenDirectory, seeded: Promise<RootSnapshot>): Promise<void> {
    if (this.current !== dir) return Promise.resolve();
    const watcher = watchDirectoryInThread(
      dir.root,
      (changes) => {
        dir.queue = dir.queue.then(() => this.applyChanges(dir, changes)).catch(() => {});
      },
      {
        ...this.options.watch,
        // A watcher that stops (its thread died, the OS limit on watches) leaves the view silently stale; say so.
        onError: (err) => {
          if (this.current !== dir) return;
          this.hub.publish({ type: 'runner', taskId: '', state: 'output', detail: `watching ${dir.root}: ${err.message}` });
        },
      },
    );
    dir.watcher = watcher;
    return watcher.ready.then(() => {
      dir.queue = dir.queue
        .then(async () => {
          const before = await seeded.catch(() => null);
          if (!before || this.current !== dir) return;
          const changes = await changesSince(dir.root, before);
          // Folders that appeared during chokidar's walk are not watched by it; they are handed back to it.
          watcher.watchAgain(changes.filter((c) => c.kind === 'changed' && !before.entries.has(c.location)).map((c) => c.location));
          if (changes.length > 0) await this.applyChanges(dir, changes);
        })
        .catch(() => {});
      return dir.queue;
    });
  }

  /**
   * Resume the interrupted auto-mode tasks of a directory just opened, in the
   * background: the runtime's backoff and attempt limits apply, and a task
   * whose verification fails falls back to waiting for a human. Progress
   * reaches subscribers as runner and task events like any other run.
   */
  private startRecovery(dir: OpenDirectory, listed: Promise<void>): void {
    const runner = this.options.runner;
    // Resuming runs each task's agent module: never in a directory opened to be looked at only.
    if (!runner?.recoverInterrupted || this.options.recoverOnOpen === false || dir.readOnly) return;
    // After the first task list, and from it: a second listing of a large directory would
    // compete with the first page a user waits for.
    dir.recovery = listed
      .then(async () => {
        if (this.current !== dir) return;
        const kept = await this.keptSummaries(dir).catch(() => null);
        const candidates = kept ? [...kept.values()].filter((k) => mayNeedRecovery(k.summary)).map((k) => k.summary.task_id) : undefined;
        await runner.recoverInterrupted!(dir.root, candidates);
      })
      .then(
        () => undefined,
        (err: unknown) => {
          // Recovery is best effort: the tasks stay interrupted and resumable by hand, and the reason is shown.
          this.hub.publish({
            type: 'runner',
            taskId: '',
            state: 'output',
            detail: `automatic recovery in ${dir.root} stopped: ${err instanceof Error ? err.message : String(err)}; interrupted tasks can be resumed by hand`,
          });
        },
      );
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
    await dir.watcher?.close();
    await dir.queue;
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
    await this.current?.queue;
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

  // ---- reading ------------------------------------------------------------------------------

  private dir(): OpenDirectory {
    if (!this.current) throw notOpen();
    return this.current;
  }

  /**
   * The task a request names. A task that is a symbolic link out of the root
   * is refused, for reads as for actions (a worker would write there): it is
   * listed, with the problem, but nothing behind it is read, and the refusal
   * names the link, never where it leads.
   */
  private async entry(taskId: string): Promise<{ dir: OpenDirectory; entry: TaskEntry }> {
    const dir = this.dir();
    const entry = await dir.store.getTask(taskId);
    if (!entry) throw new ApiError('not-found', `there is no task "${taskId}" in ${dir.root}`);
    if (entry.problems.some((p) => p.reason === 'outside-root')) {
      throw new ApiError(
        'forbidden',
        `task "${entry.task_id}" (${entry.location}) is a symbolic link leading outside the checkpoint directory ${dir.root}; it is not read, and nothing was done`,
      );
    }
    dir.locations.set(entry.location, entry.task_id);
    return { dir, entry };
  }

  private async checkpointAt(dir: OpenDirectory, entry: TaskEntry, version: number | undefined): Promise<Checkpoint> {
    const latest = entry.checkpoint?.version ?? null;
    if (version === undefined || version === latest) {
      if (!entry.checkpoint)
        throw new ApiError(
          'failed',
          `task ${entry.task_id} cannot be read`,
          entry.problems.map((p) => `${p.file}: ${p.message}`),
        );
      return entry.checkpoint;
    }
    if (latest !== null && version > latest) {
      throw new ApiError('not-found', `task ${entry.task_id} has versions 1 to ${latest}; there is no version ${version}`);
    }
    return dir.versions.get(entry.task_id, version, () => dir.store.readVersion(entry.task_id, version));
  }

  /**
   * A version of a task for a diff: kept, or rebuilt from its version files
   * alone, without reading the task's latest state. Anything that is not a
   * version file of a native task (a legacy task, a hot snapshot alone, a
   * version past the latest, no such task) is answered the long way, as
   * opening the task would answer it.
   */
  private async versionOf(dir: OpenDirectory, taskId: string, version: number): Promise<Checkpoint> {
    try {
      return await dir.versions.get(taskId, version, () => dir.store.readVersion(taskId, version));
    } catch (err) {
      if (!(err instanceof TaskReadError)) throw err;
      const { entry } = await this.entry(taskId);
      return this.checkpointAt(dir, entry, version);
    }
  }

  /** Several versions of a task, rebuilt together (see CheckpointStore.readVersions), or one by one the long way. */
  private async versionsOf(dir: OpenDirectory, taskId: string, versions: number[]): Promise<Checkpoint[]> {
    try {
      return await dir.versions.getMany(taskId, versions, (missing) => dir.store.readVersions(taskId, missing));
    } catch (err) {
      if (!(err instanceof TaskReadError)) throw err;
      return Promise.all(versions.map((v) => this.versionOf(dir, taskId, v)));
    }
  }

  async listTasks(): Promise<ApiOutputs['listTasks']> {
    return (await this.keptList()).map((k) => k.summary);
  }

  /**
   * Every task's summary with its plan's steps: exactly what `waystation ls
   * --json` prints, served as GET /api/tasks. The app's own list is
   * listTasks, which leaves the plans out.
   */
  async listTaskListings(): Promise<TaskListing[]> {
    return (await this.keptList()).map((k) => ({ ...k.summary, plan: stepsOf(k.steps) }));
  }

  /** The kept list in the store's order, the few volatile tasks summarized again. */
  private async keptList(): Promise<KeptSummary[]> {
    const dir = this.dir();
    const kept = await this.keptSummaries(dir);
    if (dir.unordered && dir.summaries === kept) {
      // Sorted in place, in one turn: a watcher batch or a listing under way holds this very map.
      const sorted = [...kept].sort(([, a], [, b]) =>
        a.summary.task_id < b.summary.task_id ? -1 : a.summary.task_id > b.summary.task_id ? 1 : 0,
      );
      kept.clear();
      for (const [location, k] of sorted) kept.set(location, k);
      dir.unordered = false;
    }
    const out: KeptSummary[] = [];
    // Rows are read from a copy: another listing may sort the map in place while this one waits on a recheck.
    for (const [location, k] of [...kept]) {
      if (!k.recheck) {
        out.push(k);
        continue;
      }
      const again = await this.recheck(dir, location, k, k.recheck);
      // A watcher batch may have replaced or removed this row while it was summarized: its answer stands.
      const now = kept.get(location);
      if (now === k) kept.set(location, again);
      if (now !== undefined) out.push(now === k ? again : now);
    }
    return out;
  }

  /**
   * Summarize a volatile row again. A row shown running whose lease is now
   * released was read before its runner's last save: the task is read again,
   * after the release, so it shows how the run ended (done, failed, waiting)
   * rather than "interrupted" until the watcher's batch arrives.
   */
  private async recheck(dir: OpenDirectory, location: string, k: KeptSummary, entry: ListedTask): Promise<KeptSummary> {
    const again = keep(entry, await summarizeEntry(dir.root, entry));
    if (k.summary.display_status !== 'running' || again.summary.display_status === 'running') return again;
    const fresh = await dir.store.getTask(k.summary.task_id).catch(() => null);
    return fresh?.location === location ? keep(fresh, await summarizeEntry(dir.root, fresh)) : again;
  }

  /** The kept task list, built from the store when there is none. */
  private keptSummaries(dir: OpenDirectory): Promise<Map<string, KeptSummary>> {
    if (dir.summaries) return Promise.resolve(dir.summaries);
    if (!dir.building) {
      // Queued with the watcher batches, so a change seen during the build is applied after it, never overwritten by it.
      const build = dir.queue.then(async () => {
        // Each slice is summarized as it is read, so the parsed checkpoints die young (see KeepListed).
        const kept = await dir.store.listTasks(async (entries) => {
          const summaries = await summarizeEntries(dir.root, entries);
          return entries.map((e, i) => keep(e, summaries[i]));
        });
        for (const k of kept) dir.locations.set(k.summary.location, k.summary.task_id);
        return new Map(kept.map((k) => [k.summary.location, k]));
      });
      dir.building = build;
      dir.queue = build.then(
        (map) => {
          if (dir.building !== build) return;
          dir.summaries = map;
          dir.building = null;
        },
        () => {
          if (dir.building === build) dir.building = null;
        },
      );
    }
    return dir.building;
  }

  /** Bring the kept list up to date with one change the watcher reported (`entry` null: no task there now). */
  private async keepChange(dir: OpenDirectory, location: string, entry: ListedTask | null): Promise<void> {
    const summaries = dir.summaries;
    if (!summaries) return;
    if (entry && entry.location === location && summaries.has(location)) {
      summaries.set(location, keep(entry, await summarizeEntry(dir.root, entry)));
      return;
    }
    // A task appeared or went away, or its id now resolves elsewhere. That can hide or uncover
    // another task of its id (a root file behind a folder) or the legacy folder it was imported
    // from: those ids alone are looked up again, not the whole directory.
    const gone = summaries.get(location)?.summary.task_id;
    summaries.delete(location);
    const ids = new Set<string>();
    for (const id of [gone, entry?.task_id]) {
      if (!id) continue;
      ids.add(id);
      if (id.endsWith(IMPORT_SUFFIX)) ids.add(id.slice(0, -IMPORT_SUFFIX.length));
    }
    for (const id of ids) await this.keepTask(dir, summaries, id, entry?.task_id === id ? entry : undefined);
  }

  /** Put one task id in the kept list as a listing would show it now (`known`: already read). */
  private async keepTask(dir: OpenDirectory, summaries: Map<string, KeptSummary>, taskId: string, known?: ListedTask): Promise<void> {
    for (const [location, k] of summaries) if (k.summary.task_id === taskId) summaries.delete(location);
    const found = known ?? (await dir.store.getTask(taskId).catch(() => null));
    if (!found) return;
    const imported = `${taskId}${IMPORT_SUFFIX}`;
    // A legacy task is listed only until the task it was imported into exists.
    if (
      found.format !== 'waystation' &&
      [...summaries.values()].some((k) => k.summary.task_id === imported && k.summary.format === 'waystation')
    )
      return;
    summaries.set(found.location, keep(found, await summarizeEntry(dir.root, found)));
    dir.locations.set(found.location, found.task_id);
    dir.unordered = true;
  }

  async getTask(input: ApiParsedInput<'getTask'>): Promise<TaskDetail> {
    const { dir, entry } = await this.entry(input.taskId);
    const checkpoint = input.version === undefined && !entry.checkpoint ? null : await this.checkpointAt(dir, entry, input.version);
    const lease = entry.format === 'waystation' ? await readLeaseState(path.join(dir.root, entry.location)) : { held: false };
    // A full verify of this very version may know of drift a stat cannot see (a same-size rewrite).
    const verified = dir.verifiedDrift.get(entry.task_id);
    const knownDrift = verified !== undefined && verified.version === entry.checkpoint?.version;
    // Of the latest version, whichever is shown: that is what a resume would run.
    const agent_status = entry.checkpoint
      ? await taskAgentStatus(dir.root, entry.checkpoint, this.moduleHashes, (await dir.loadFailures.get(entry.task_id)) ?? undefined)
      : null;
    return {
      summary: await summarizeEntry(dir.root, entry, knownDrift ? { drift: true } : {}),
      checkpoint,
      version: checkpoint?.version ?? null,
      latest_version: entry.checkpoint?.version ?? null,
      read_only: entry.read_only,
      problems: entry.problems,
      lease,
      agent_status,
    };
  }

  async getHistory(input: ApiParsedInput<'getHistory'>): Promise<ApiOutputs['getHistory']> {
    const { dir, entry } = await this.entry(input.taskId);
    const { after, versions } = await dir.store.historyAfter(entry.task_id, input.after);
    return { after, versions: versions.map((v) => ({ version: v.version, source: v.source, updated_at: v.updated_at, bytes: v.bytes })) };
  }

  async getStepResult(input: ApiParsedInput<'getStepResult'>): Promise<ApiOutputs['getStepResult']> {
    const { dir, entry } = await this.entry(input.taskId);
    const cp = await this.checkpointAt(dir, entry, input.version);
    const step = cp.plan.find((s) => s.id === input.stepId);
    if (!step) throw new ApiError('not-found', `task ${entry.task_id} has no step "${input.stepId}" at version ${cp.version}`);
    if (step.result_ref) return { value: await dir.store.readBlob(entry.task_id, step.result_ref), found: true };
    if (step.result !== undefined) return { value: step.result, found: true };
    return { value: null, found: false };
  }

  async getMessages(input: ApiParsedInput<'getMessages'>): Promise<ApiOutputs['getMessages']> {
    const { dir, entry } = await this.entry(input.taskId);
    if (entry.format !== 'waystation') {
      // Legacy files keep their history inline; the store converted it when it read them.
      const cp = await this.checkpointAt(dir, entry, input.version);
      const inline = (cp as Record<string, unknown>).messages;
      return { from: 0, messages: Array.isArray(inline) ? (inline as ApiOutputs['getMessages']['messages']) : [] };
    }
    return dir.store.readHistoryAfter(entry.task_id, input.version, input.after);
  }

  async diffVersions(input: ApiParsedInput<'diffVersions'>): Promise<ApiOutputs['diffVersions']> {
    const dir = this.dir();
    const [a, b] = await this.versionsOf(dir, input.taskId, [input.a, input.b]);
    return { a: input.a, b: input.b, summary: summarizeChange(a, b), entries: structuredDiff(a, b) };
  }

  async verifyTask(input: ApiParsedInput<'verifyTask'>): Promise<ApiOutputs['verifyTask']> {
    const { dir, entry } = await this.entry(input.taskId);
    const cp = await this.checkpointAt(dir, entry, undefined);
    const report = await verifyTask(dir.root, cp, { location: entry.location, format: entry.format });
    this.noteVerifiedDrift(dir, report);
    // Only a native task folder has versions a power cut can tear; a legacy file is read as it is.
    const recovery = entry.format === 'waystation' ? await recoveryReport(dir.root, entry.location) : null;
    return recovery && hasRecoveryNews(recovery) ? { ...report, recovery } : report;
  }

  /**
   * Remember what a full verify found, and announce new drift as a change of
   * the task: the list and every open window then show it as drifted, even
   * when the files changed outside the watched directory.
   */
  private noteVerifiedDrift(dir: OpenDirectory, report: ApiOutputs['verifyTask']): void {
    const before = dir.verifiedDrift.get(report.task_id);
    if (!report.drift) {
      if (before) {
        dir.verifiedDrift.delete(report.task_id);
        this.hub.publish({ type: 'task-changed', taskId: report.task_id, version: null });
      }
      return;
    }
    const signature = report.artifacts
      .filter((a) => a.status !== 'ok')
      .map((a) => `${a.path}\u0000${a.status}\u0000${a.actual?.size ?? ''}\u0000${a.actual?.sha256 ?? ''}`)
      .join('\n');
    if (before?.version === report.version && before.signature === signature) return;
    dir.verifiedDrift.set(report.task_id, { version: report.version, signature });
    // `version: null`: no version was written; the task's standing changed.
    this.hub.publish({ type: 'task-changed', taskId: report.task_id, version: null });
  }

  async listAgents(): Promise<AgentInfo[]> {
    const builtIn: AgentInfo[] = [...builtInAgents.values()].map((agent) => ({
      name: agent.name,
      description: agent.description,
      options_schema: jsonSchemaOf(agent.options),
      origin: 'builtin',
    }));
    const dir = this.current;
    const runner = this.options.runner;
    let registered: AgentInfo[] = [];
    if (dir && !dir.readOnly && runner?.registeredAgents) {
      // Registered modules are loaded in worker processes: once per directory, again when the configuration changes
      // (the watcher says so) or a module file does (it may live outside the directory, so it is compared here).
      const identity = await registeredModulesIdentity(dir.root);
      if (identity !== dir.registeredIdentity) {
        dir.registered = null;
        dir.registeredIdentity = identity;
      }
      dir.registered ??= runner.registeredAgents(dir.root).catch((err: unknown) => {
        dir.registered = null;
        throw err;
      });
      registered = await dir.registered;
    }
    // A working registration under a built-in's name is shadowed by the built-in; a broken one is shown, so its reason is seen.
    return [...builtIn, ...registered.filter((r) => !builtInAgents.has(r.name) || r.problem)];
  }

  // ---- acting -------------------------------------------------------------------------------

  private runner(): HostRunner {
    if (!this.options.runner) throw new ApiError('forbidden', 'this host runs no tasks (it was started read-only); nothing was done');
    const dir = this.current;
    if (dir?.readOnly) {
      throw new ApiError(
        'forbidden',
        `${dir.root} is open read-only: no task is started, resumed, approved, rejected or edited there; nothing was done. Open it with Open folder… to run its tasks`,
      );
    }
    return this.options.runner;
  }

  async startTask(input: ApiParsedInput<'startTask'>): Promise<ActionResult> {
    const dir = this.dir();
    // A start that names an existing task resumes it, so it gets the same check as a resume.
    if (input.taskId && (await dir.store.getTask(input.taskId))) await this.entry(input.taskId);
    if (input.taskId) {
      // A new task's folder must be a plain folder inside the root, never a link planted to lead out of it.
      await resolveInsideRoot(dir.root, input.taskId).catch((err: unknown) => {
        throw new ApiError(
          'forbidden',
          `task id ${JSON.stringify(input.taskId)} cannot be used: ${err instanceof Error ? err.message : String(err)}; nothing was written`,
        );
      });
    }
    return this.runner().start(dir.root, { taskId: input.taskId, agent: input.agent, options: input.options, mode: input.mode });
  }

  async resumeTask(input: ApiParsedInput<'resumeTask'>): Promise<ActionResult> {
    const { dir, entry } = await this.entry(input.taskId);
    return this.runner().resume(dir.root, entry.task_id);
  }

  async approveResume(input: ApiParsedInput<'approveResume'>): Promise<ActionResult> {
    const { dir, entry } = await this.entry(input.taskId);
    return this.runner().approve(dir.root, entry.task_id, input.by);
  }

  async rejectResume(input: ApiParsedInput<'rejectResume'>): Promise<ActionResult> {
    const { dir, entry } = await this.entry(input.taskId);
    return this.runner().reject(dir.root, entry.task_id, input.reason, input.by);
  }

  async editStepResult(input: ApiParsedInput<'editStepResult'>): Promise<ActionResult> {
    const { dir, entry } = await this.entry(input.taskId);
    // The runner refuses it (`moved`) when the task is no longer at `expectedVersion`, checked under the task's lock.
    return this.runner().edit(dir.root, entry.task_id, input.stepId, input.value, input.expectedVersion);
  }

  // ---- changes on disk ----------------------------------------------------------------------

  /** The task id a changed location most likely holds, without reading the directory. */
  private candidateId(dir: OpenDirectory, location: string): string | null {
    const known = dir.locations.get(location);
    if (known) return known;
    if (location === 'waystation.config.json') return null;
    if (location === 'checkpoint.json') return null;
    return location.endsWith('.json') ? location.slice(0, -'.json'.length) : location;
  }

  private async applyChanges(dir: OpenDirectory, changes: DirectoryChange[]): Promise<void> {
    for (const change of changes) {
      if (this.current !== dir) return;
      if (change.location === 'waystation.config.json') {
        // Registered agents changed: the renderer reloads its lists.
        dir.registered = null;
        this.hub.publish({ type: 'directory-changed', root: dir.root });
        continue;
      }
      let taskId = this.candidateId(dir, change.location);
      let entry = taskId ? await dir.store.getTask(taskId).catch(() => null) : null;
      if (!entry && change.location === 'checkpoint.json' && change.kind === 'changed') {
        // The root's own legacy checkpoint names its task inside; one listing finds it.
        taskId = (await dir.store.listTasks()).find((e) => e.location === 'checkpoint.json')?.task_id ?? null;
        entry = taskId ? await dir.store.getTask(taskId).catch(() => null) : null;
      }
      if (entry && entry.location !== change.location && change.kind === 'changed') {
        // The id resolved to another location (a root file named like a removed folder): not this change.
        entry = null;
      }
      // A row changed in place can be sent with the event; a task appearing or going away may change other rows too.
      const inPlace = entry !== null && dir.summaries?.has(change.location) === true;
      await this.keepChange(dir, change.location, entry);
      if (!entry) {
        const known = dir.locations.get(change.location);
        if (known) {
          dir.locations.delete(change.location);
          dir.lastEvent.delete(known);
          dir.eventSeed.delete(known);
          this.hub.publish({ type: 'task-removed', taskId: known });
        } else if (change.kind === 'removed' && taskId) {
          this.hub.publish({ type: 'task-removed', taskId });
        }
        continue;
      }
      dir.locations.set(change.location, entry.task_id);
      if (entry.format === 'waystation' && (change.paths.length === 0 || change.paths.some((p) => p.endsWith('/events.jsonl')))) {
        await this.publishTaskEvents(dir, entry.task_id);
      }
      // The row just rebuilt travels with the event, so a client replaces it instead of listing every task again.
      const summary = inPlace ? dir.summaries?.get(change.location)?.summary : undefined;
      this.hub.publish({
        type: 'task-changed',
        taskId: entry.task_id,
        version: entry.checkpoint?.version ?? null,
        ...(summary ? { summary } : {}),
      });
    }
  }

  /** Publish the lines appended to a task's events.jsonl since the last ones published. */
  private async publishTaskEvents(dir: OpenDirectory, taskId: string): Promise<void> {
    let after = dir.lastEvent.get(taskId);
    const seed = dir.eventSeed.get(taskId);
    if (after === undefined && seed !== undefined) after = lastEventIdWithin(path.join(dir.root, taskId, EVENTS_FILE), seed);
    dir.eventSeed.delete(taskId);
    const events = await dir.store.readEvents(taskId, after ?? 0).catch(() => []);
    for (const e of events) {
      this.hub.publish({
        type: 'task-event',
        taskId,
        event: {
          id: e.id,
          type: e.type,
          at: e.at,
          ...(e.step_id ? { step_id: e.step_id } : {}),
          ...(e.version !== undefined ? { version: e.version } : {}),
        },
      });
    }
    const last = events.length ? events[events.length - 1].id : after;
    if (last !== undefined) dir.lastEvent.set(taskId, last);
    else dir.lastEvent.set(taskId, 0);
  }
}

/** An agent's options schema as JSON Schema for the start form; `{}` when it cannot be expressed. */
function jsonSchemaOf(schema: unknown): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/**
 * Each registered module file's size and times, one line per configuration
 * entry: what the agents' descriptions were made from. A package name is
 * kept as written (it changes with the configuration, which the watcher sees).
 */
async function registeredModulesIdentity(root: string): Promise<string> {
  const { entries } = await readAgentsConfig(root);
  const lines = await Promise.all(
    entries.map(async ({ module }) => {
      if (!isModuleSpecifier(module)) return module;
      const st = await fs.stat(path.resolve(root, module)).catch(() => null);
      return st ? `${module} ${st.size} ${st.mtimeMs} ${st.ctimeMs}` : `${module} missing`;
    }),
  );
  return lines.join('\n');
}
