/**
 * One open checkpoint directory: its store and the host's parts that belong
 * to it (the kept task list, the change feed, the registered agents, the
 * reads, the load failures), created together when the directory is opened
 * and dropped together when another one is.
 */
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import type { CheckpointSource } from '../store/store-types.js';
import { RegisteredAgentsCache } from './agent-catalog-cache.js';
import { ChangeFeed } from './change-feed.js';
import type { EventHub } from './event-hub.js';
import type { HostRunner, WatchTiming } from './host-ports.js';
import { KeptTaskList } from './kept-task-list.js';
import { LoadFailures } from './load-failures.js';
import type { RootSnapshot } from './root-snapshot.js';
import { watchRunningRows } from './running-rows.js';
import { SerialQueue } from './serial-queue.js';
import type { ModuleHashCache } from './task-agent-status.js';
import { TaskReads } from './task-reads.js';
import { VerifiedDrift } from './verified-drift.js';

export interface OpenDirectoryOptions {
  root: string;
  /** Browsed only: nothing is run, no agent module is loaded (see DirectoryInfo.read_only). */
  readOnly: boolean;
  /** The directory's store, or a read-only source (a LangGraph checkpointer). */
  store: CheckpointSource;
  /** A database holding LangGraph's checkpointer tables beside the store, whose threads are not shown (DirectoryInfo.also_holds_langgraph). */
  alsoHoldsLangGraph?: boolean;
  hub: EventHub;
  /** Run after the parts have stopped (a source's database connection to close). */
  onClose?: () => Promise<void>;
  hashes: ModuleHashCache;
  /** Describes the directory's registered agents; absent when the host has no runner able to. */
  describeRegistered?: HostRunner['registeredAgents'];
  watch?: WatchTiming;
}

/** One open directory and its parts; see the module comment. */
export class OpenDirectory {
  readonly root: string;
  readonly readOnly: boolean;
  readonly store: CheckpointSource;
  readonly alsoHoldsLangGraph: boolean;
  /** Batches are handled one after the other, so events keep their order. */
  readonly queue = new SerialQueue();
  readonly list: KeptTaskList;
  readonly feed: ChangeFeed;
  readonly reads: TaskReads;
  readonly loadFailures: LoadFailures;
  /** Null when the registered agents are not listed here (read-only, or no runner to describe them). */
  readonly registered: RegisteredAgentsCache | null;
  /** The start-up recovery of interrupted auto-mode tasks, while it runs. */
  recovery: Promise<void> | null = null;
  /** Settles once the watcher is ready and what changed before it was has been applied. */
  watching: Promise<void> | null = null;
  private closed = false;
  private readonly closing: (() => Promise<void>)[] = [];
  private readonly runEndedListeners = new Set<(summary: TaskSummary) => void>();

  constructor(private readonly options: OpenDirectoryOptions) {
    const { root, store, hub } = options;
    this.root = root;
    this.readOnly = options.readOnly;
    this.store = store;
    this.alsoHoldsLangGraph = options.alsoHoldsLangGraph ?? false;
    const drift = new VerifiedDrift();
    this.list = new KeptTaskList(
      root,
      store,
      this.queue,
      {
        isOpen: () => !this.closed,
        onRowChanged: (summary) => hub.publish({ type: 'task-changed', taskId: summary.task_id, version: summary.version, summary }),
        // The task's standing changed, not its files: no version, as a full verify's drift is sent.
        onRunEnded: (summary) => {
          hub.publish({ type: 'task-changed', taskId: summary.task_id, version: null, summary });
          for (const fn of this.runEndedListeners) fn(summary);
        },
      },
      drift,
    );
    this.loadFailures = new LoadFailures(root, store, options.hashes);
    this.reads = new TaskReads({
      root,
      store,
      drift,
      onDriftChanged: (taskId, location) => this.announceDrift(taskId, location),
      locations: this.list.locations,
      hashes: options.hashes,
      loadFailures: this.loadFailures,
    });
    const describe = options.describeRegistered;
    this.registered = !options.readOnly && describe ? new RegisteredAgentsCache(root, (r) => describe(r)) : null;
    this.feed = new ChangeFeed({
      root,
      store,
      list: this.list,
      queue: this.queue,
      hub,
      isOpen: () => !this.closed,
      onConfigChanged: () => this.registered?.invalidate(),
      watch: options.watch,
    });
    const running = watchRunningRows({
      recheck: () => this.list.recheckRunning(),
      queue: this.queue,
      isOpen: () => !this.closed,
      everyMs: options.watch?.runningMs,
    });
    this.closing.push(async () => running.stop());
  }

  /**
   * A full verify changed how a task is shown: its row is summarized again (from the entry it keeps, no file read)
   * and sent with the change, so every list replaces that row rather than listing every task again. Not queued
   * behind the watcher's batches: the verify's answer waits for it, and a row a batch replaced meanwhile stands.
   * `version: null`: no version was written; the task's standing changed.
   */
  private async announceDrift(taskId: string, location: string): Promise<void> {
    if (this.closed) return;
    const summary = await this.list.resummarize(location).catch(() => undefined);
    if (this.closed) return;
    // A row that is another task's now (the id moved) is not sent: the change then relists.
    const row = summary?.task_id === taskId ? { summary } : {};
    this.options.hub.publish({ type: 'task-changed', taskId, version: null, ...row });
  }

  /**
   * Call `fn` with each kept row found no longer running when it was summarized again (KeptTaskList's onRunEnded:
   * the pass over running rows, running-rows.ts, or a listing): a run that ended with nothing the watcher saw, as it
   * shows now.
   */
  onRunEnded(fn: (summary: TaskSummary) => void): void {
    this.runEndedListeners.add(fn);
  }

  /** Whether the directory is still the open one. */
  get isOpen(): boolean {
    return !this.closed;
  }

  /**
   * Take the event logs as they were when the directory was opened, queued
   * first: changes reported from here on queue behind it, so each task's
   * event log is published from where it stood.
   */
  seed(seeded: Promise<RootSnapshot>): Promise<void> {
    return this.queue.run(() =>
      seeded.then(
        (snap) => this.feed.seed(snap),
        () => undefined,
      ),
    );
  }

  /** Run `fn` when the directory is closed, before the batches queued are awaited (a watcher of its own to stop). */
  onClosing(fn: () => Promise<void>): void {
    this.closing.push(fn);
  }

  /** Stop watching; resolves once the batches already queued have run. */
  async close(): Promise<void> {
    this.closed = true;
    for (const fn of this.closing.splice(0)) await fn().catch(() => {});
    await this.feed.close();
    await this.queue.idle();
    await this.options.onClose?.();
  }
}
