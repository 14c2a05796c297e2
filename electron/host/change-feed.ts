/**
 * The change feed of one open directory: what the watcher reports on disk,
 * turned into the API's events.
 *
 * Changes become `task-changed` / `task-removed` / `task-event` events, found
 * per changed task, never by rescanning the whole directory, and the kept
 * task list is patched by the same batches, so a listing and the events
 * never disagree. A watcher that fails is announced as a `directory-notice`.
 */
import path from 'node:path';
import { askAfter, eventsAfterHeld, type HeldEvent } from '../../shared/api/events-after.js';
import { EVENTS_FILE } from '../store/event-log.js';
import type { CheckpointSource, StoreSubscription, TaskEvent } from '../store/store-types.js';
import { watchDirectory, type DirectoryChange, type DirectoryWatcher } from './directory-watcher.js';
import type { EventHub } from './event-hub.js';
import type { KeptTaskList } from './kept-task-list.js';
import { changesSince, lastEventAtOpen, type LogAtOpen, type RootSnapshot } from './root-snapshot.js';
import type { WatchTiming } from './host-ports.js';
import type { SerialQueue } from './serial-queue.js';

export interface ChangeFeedOptions {
  root: string;
  store: CheckpointSource;
  list: KeptTaskList;
  queue: SerialQueue;
  hub: EventHub;
  /** False once the directory was closed: nothing more is published for it. */
  isOpen: () => boolean;
  /** waystation.config.json changed: the registered agents must be loaded again. */
  onConfigChanged: () => void;
  /** Watcher batching, for tests. */
  watch?: WatchTiming;
}

/** The change feed of one open directory; see the module comment. */
export class ChangeFeed {
  private subscription: StoreSubscription | null = null;
  /** Task id -> the last event of its events.jsonl already published (or, once looked up, there when the directory was opened). */
  private readonly lastEvent = new Map<string, HeldEvent>();
  /**
   * Task folder -> its events.jsonl as stat-ed when the directory was opened,
   * for tasks whose last event has not been needed yet: it is read from there
   * (`lastEventAtOpen`) when the task first changes, not for every task at open.
   */
  private readonly eventSeed = new Map<string, LogAtOpen>();
  /** Task location -> the absolute paths of its artifacts, as its kept row last had them: what watchArtifacts follows. */
  private readonly artifacts = new Map<string, readonly string[]>();
  /** Started once the first task list is built (see start); null until then. */
  private watcher: DirectoryWatcher | null = null;

  constructor(private readonly options: ChangeFeedOptions) {}

  /** Take the event logs as they were when the directory was opened: events are published from there on. */
  seed(snapshot: RootSnapshot): void {
    for (const [name, log] of snapshot.events) this.eventSeed.set(name, log);
  }

  /**
   * Start watching, and catch up at ready on what changed since `seeded` was
   * taken. Resolves once that catch-up is applied.
   */
  start(seeded: Promise<RootSnapshot>): Promise<void> {
    const { root, queue, hub, isOpen } = this.options;
    if (!isOpen()) return Promise.resolve();
    const watcher = watchDirectory(
      root,
      (changes) => {
        queue.run(() => this.apply(changes)).catch(() => {});
      },
      {
        ...this.options.watch,
        // A watcher that stops (the OS limit on watches) leaves the view silently stale; say so.
        onError: (err) => {
          if (!isOpen()) return;
          hub.publish({ type: 'directory-notice', root, detail: `watching ${root}: ${err.message}` });
        },
      },
    );
    this.watcher = watcher;
    return watcher.ready.then(() =>
      queue
        .run(async () => {
          const before = await seeded.catch(() => null);
          if (!before || !isOpen()) return;
          const changes = await changesSince(root, before);
          // Folders that appeared while the watches were set up are handed back, to be watched if they are not yet.
          watcher.watchAgain(changes.filter((c) => c.kind === 'changed' && !before.entries.has(c.location)).map((c) => c.location));
          if (changes.length > 0) await this.apply(changes);
          for (const location of this.options.list.rowLocations()) this.noteArtifacts(location);
          this.watchArtifacts();
        })
        .catch(() => {}),
    );
  }

  /**
   * Follow a store that is not a directory (a database) through its own
   * subscription (LISTEN/NOTIFY) instead of a watcher: each change becomes a
   * batch for its task, as a watcher's would.
   */
  async startFromStore(): Promise<void> {
    const { store, queue, hub, isOpen } = this.options;
    this.subscription = await store.subscribe(
      (change) => {
        const taskId = change.task_id;
        // Events before the first one delivered were there when the feed began: not news.
        if (!this.lastEvent.has(taskId) && change.events.length > 0) this.lastEvent.set(taskId, { id: change.events[0].id - 1 });
        const batch: DirectoryChange[] = [{ location: taskId, kind: 'changed', paths: [`${taskId}/${EVENTS_FILE}`] }];
        queue.run(() => this.apply(batch)).catch(() => {});
      },
      (err) => {
        if (isOpen()) hub.publish({ type: 'directory-notice', root: store.root, detail: `watching ${store.root}: ${err.message}` });
      },
    );
  }

  /** Stop watching; batches already queued still run (and publish nothing once the directory is closed). */
  async close(): Promise<void> {
    await this.watcher?.close();
    await this.subscription?.close();
  }

  /** The task id a changed location most likely holds, without reading the directory. */
  private candidateId(location: string): string | null {
    const known = this.options.list.locations.get(location);
    if (known) return known;
    if (location === 'waystation.config.json') return null;
    if (location === 'checkpoint.json') return null;
    return location.endsWith('.json') ? location.slice(0, -'.json'.length) : location;
  }

  /** Turn one watcher batch into events, patching the kept list on the way. */
  async apply(changes: DirectoryChange[]): Promise<void> {
    const { root, store, list, hub, isOpen } = this.options;
    // Whether the folders the artifacts lie in may have changed: the watches are brought in line once, at the end.
    let artifactsMoved = false;
    for (const change of changes) {
      if (!isOpen()) return;
      if (change.location === 'waystation.config.json') {
        // Registered agents changed: the renderer reloads its lists.
        this.options.onConfigChanged();
        hub.publish({ type: 'directory-changed', root });
        continue;
      }
      let taskId = this.candidateId(change.location);
      let entry = taskId ? await store.getTask(taskId).catch(() => null) : null;
      if (!entry && !list.locations.has(change.location)) {
        // No task here: files tasks recorded as artifacts, maybe (md-summarizer's outputs/). Their tasks are read
        // again now, so a drift shows as it happens rather than at the next listing.
        const owners = this.artifactOwners(change.paths);
        if (owners.length > 0) {
          await this.apply(owners.map((location) => ({ location, kind: 'changed' as const, paths: change.paths })));
          // A folder of theirs may have been removed and made again: its watch, let go then, is set up afresh.
          artifactsMoved = true;
          continue;
        }
      }
      if (!entry && change.location === 'checkpoint.json' && change.kind === 'changed') {
        // The root's own legacy checkpoint names its task inside; one listing finds it.
        taskId = (await store.listTasks()).find((e) => e.location === 'checkpoint.json')?.task_id ?? null;
        entry = taskId ? await store.getTask(taskId).catch(() => null) : null;
      }
      if (entry && entry.location !== change.location && change.kind === 'changed') {
        // The id resolved to another location (a root file named like a removed folder): not this change.
        entry = null;
      }
      // A row changed in place can be sent with the event; a task appearing or going away may change other rows too.
      const inPlace = entry !== null && list.has(change.location);
      await list.apply(change.location, entry);
      artifactsMoved = this.noteArtifacts(change.location) || artifactsMoved;
      if (!entry) {
        const known = list.locations.get(change.location);
        if (known) {
          list.locations.delete(change.location);
          this.lastEvent.delete(known);
          this.eventSeed.delete(known);
          hub.publish({ type: 'task-removed', taskId: known });
        } else if (change.kind === 'removed' && taskId) {
          hub.publish({ type: 'task-removed', taskId });
        }
        continue;
      }
      list.locations.set(change.location, entry.task_id);
      if (entry.format === 'waystation' && (change.paths.length === 0 || change.paths.some((p) => p.endsWith('/events.jsonl')))) {
        await this.publishTaskEvents(entry.task_id);
      }
      // The row just rebuilt travels with the event, so a client replaces it instead of listing every task again.
      const summary = inPlace ? list.summaryAt(change.location) : undefined;
      hub.publish({
        type: 'task-changed',
        taskId: entry.task_id,
        version: entry.checkpoint?.version ?? null,
        ...(summary ? { summary } : {}),
      });
    }
    if (artifactsMoved) this.watchArtifacts();
  }

  /**
   * Take the artifacts of the task at `location` as its kept row has them now; true when they differ from what was
   * taken before. A batch reads only the rows it changed: a running task saves often, and its artifacts seldom move.
   */
  private noteArtifacts(location: string): boolean {
    const now = this.options.list.artifactPaths(location);
    const before = this.artifacts.get(location) ?? [];
    if (now.length === before.length && now.every((p, i) => p === before[i])) return false;
    if (now.length > 0) this.artifacts.set(location, now);
    else this.artifacts.delete(location);
    return true;
  }

  /**
   * Watch the folders that hold the kept tasks' artifacts outside their own folders (and below the root): the
   * watcher sees only the root's entries, task folders and leases otherwise. Called after a batch that moved an
   * artifact, so a task that records one in a new folder has it watched from its save on.
   */
  private watchArtifacts(): void {
    if (!this.watcher || !this.options.isOpen()) return;
    const root = path.resolve(this.options.root);
    const folders = new Set<string>();
    for (const [location, paths] of this.artifacts) {
      for (const abs of paths) {
        const rel = path.relative(root, path.dirname(abs));
        // Outside the root (nothing the watcher sees), or the task's own folder (watched as the task).
        if (rel === '' || rel === location || rel.startsWith('..') || path.isAbsolute(rel)) continue;
        folders.add(rel.split(path.sep).join('/'));
      }
    }
    this.watcher.watchArtifactFolders(folders);
  }

  /** The locations of the kept tasks with an artifact at one of `paths` (relative to the root), or below one. */
  private artifactOwners(paths: readonly string[]): string[] {
    const root = path.resolve(this.options.root);
    const changed = paths.map((p) => path.join(root, p));
    const owners: string[] = [];
    for (const [location, held] of this.artifacts) {
      if (held.some((abs) => changed.some((c) => abs === c || abs.startsWith(c + path.sep)))) owners.push(location);
    }
    return owners;
  }

  /** Publish the lines appended to a task's events.jsonl since the last ones published. */
  private async publishTaskEvents(taskId: string): Promise<void> {
    const { root, hub } = this.options;
    let after = this.lastEvent.get(taskId);
    const seed = this.eventSeed.get(taskId);
    if (after === undefined && seed !== undefined) {
      // A log written anew since the open (the task removed and run again) is all news: read from its start.
      const held = lastEventAtOpen(path.join(root, taskId, EVENTS_FILE), seed);
      if (held !== undefined && held !== 'replaced') after = held;
    }
    this.eventSeed.delete(taskId);
    const events = await this.eventsAfter(taskId, after);
    for (const e of events) {
      hub.publish({
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
    const newest = events.at(-1);
    this.lastEvent.set(taskId, newest ? { id: newest.id, at: newest.at, type: newest.type } : (after ?? { id: 0 }));
  }

  /**
   * The events of a task's log after the last one published (events-after.ts): a task removed and written anew
   * within one batch of the watcher has a log of its own, and all of it is news.
   */
  private async eventsAfter(taskId: string, after: HeldEvent | undefined): Promise<TaskEvent[]> {
    const { store } = this.options;
    if (after && after.id > 0) {
      const goesOn = eventsAfterHeld(after, await store.readEvents(taskId, askAfter(after)).catch(() => []));
      if (goesOn) return goesOn;
    }
    return store.readEvents(taskId, 0).catch(() => []);
  }
}
