/**
 * Watching a checkpoint directory for changes made by anyone: our own runner,
 * another process, a person with a text editor.
 *
 * chokidar reports single files; the host wants to know which tasks changed.
 * So events are mapped to the task they belong to (the first path segment
 * under the root, or a task file at the root), collected per task and flushed
 * in one batch once the directory has been quiet for a moment, with an upper
 * bound so a task written to continuously is still reported regularly.
 * Writers' temporary files (`.name.tmp`, dot-files) are ignored, and so are
 * `versions/` and `blobs/`: chokidar re-reads a folder on every event in it,
 * which costs O(n²) over a burst into a folder of thousands of versions,
 * while every save also renames `checkpoint.json` and appends to
 * `events.jsonl`, which are watched. The event log, not the watcher, is what
 * guarantees that no version goes unreported.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

/** How long chokidar suppresses further change events of a file after reporting one (its `_throttle('change', path, 50)`). */
const CHOKIDAR_THROTTLE_MS = 50;
/** How long after a flush a location that may have had unreported writes is reported again. */
const SETTLE_MS = 250;

/** What happened to one task location during a batch. */
export interface DirectoryChange {
  /** The task folder or root-level task file, relative to the root (e.g. `t1`, `legacy.json`). */
  location: string;
  /** `removed` when the location no longer exists at flush time. */
  kind: 'changed' | 'removed';
  /**
   * Paths below the root that changed, forward slashes, in the order first
   * seen. Empty for a settling re-report after a burst (see watchDirectory).
   */
  paths: string[];
}

export interface DirectoryWatcherOptions {
  /** Flush once no event arrived for this long (ms). */
  quietMs?: number;
  /** Flush at the latest this long after the first pending event (ms). */
  maxDelayMs?: number;
  /** Watch errors (EACCES on a subfolder, the OS limit on watches); the rest stays watched. */
  onError?: (err: Error) => void;
}

export interface DirectoryWatcher {
  readonly root: string;
  /** Resolves once the initial scan is done; changes after that are reported. */
  readonly ready: Promise<void>;
  /**
   * Watch these locations (task folders or root files, relative to the root)
   * afresh. chokidar does not watch a folder that appeared while it walked the
   * tree; whoever catches up on such folders at ready hands them here, so
   * their later changes are reported.
   */
  watchAgain(locations: readonly string[]): void;
  /** Stop watching; pending changes are flushed first. */
  close(): Promise<void>;
}

/**
 * Is this path, relative to the root, something the watcher ignores?
 *
 * Temporary files of writers in progress (FORMAT.md: names starting with `.`
 * or ending with `.tmp`, in any segment), and a task's `blobs/` and
 * `versions/` folders, which only ever gain files alongside a rename of the
 * task's `checkpoint.json`.
 */
export function isIgnoredRelative(relative: string): boolean {
  if (relative === '') return false;
  const segments = relative.split(/[/\\]/);
  if (segments.some((s) => s.startsWith('.') || s.endsWith('.tmp'))) return true;
  if (segments.length >= 2 && (segments[1] === 'blobs' || segments[1] === 'versions')) return true;
  if (segments[0] === 'node_modules') return true;
  return false;
}

/** The task location a relative path belongs to: its first segment. */
export function locationOf(relative: string): string {
  return relative.split(/[/\\]/)[0];
}

/**
 * Watch `root` and report changed task locations in coalesced batches.
 *
 * @param onChanges called with one entry per location that changed since the last batch
 */
export function watchDirectory(
  root: string,
  onChanges: (changes: DirectoryChange[]) => void,
  options: DirectoryWatcherOptions = {},
): DirectoryWatcher {
  const quietMs = options.quietMs ?? 75;
  const maxDelayMs = options.maxDelayMs ?? 400;
  const absRoot = path.resolve(root);
  let pending = new Map<string, Set<string>>();
  const lastNoted = new Map<string, number>();
  let quietTimer: NodeJS.Timeout | null = null;
  let maxTimer: NodeJS.Timeout | null = null;
  let settleTimer: NodeJS.Timeout | null = null;
  /** Locations to report once more when things have settled (see flush). */
  const settle = new Set<string>();
  /** Top-level folders that appeared since the last flush. */
  const freshFolders = new Set<string>();
  let closed = false;
  let flushing: Promise<void> = Promise.resolve();

  const relativeOf = (p: string) => path.relative(absRoot, path.resolve(absRoot, p)).split(path.sep).join('/');

  const watcher: FSWatcher = watch(absRoot, {
    ignoreInitial: true,
    // task/lease/<n>.json is two folders down; deeper trees are not ours.
    depth: 2,
    ignored: (p: string) => {
      const rel = relativeOf(p);
      return rel.startsWith('..') || isIgnoredRelative(rel);
    },
  });

  const schedule = () => {
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = setTimeout(() => flush(false), quietMs);
    if (!maxTimer) maxTimer = setTimeout(() => flush(true), maxDelayMs);
  };

  const flush = (beforeQuiet: boolean) => {
    if (quietTimer) clearTimeout(quietTimer);
    if (maxTimer) clearTimeout(maxTimer);
    quietTimer = maxTimer = null;
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const now = Date.now();
    for (const loc of batch.keys()) {
      // chokidar drops a file's change events for 50 ms after it reported one,
      // with no trailing event, so a flush before a quiet period may
      // miss the burst's last writes. And files written into a folder that has
      // just appeared can be missed while chokidar starts watching it. Either
      // way the location is reported once more, after things have settled.
      const active = beforeQuiet && now - (lastNoted.get(loc) ?? 0) < CHOKIDAR_THROTTLE_MS * 2;
      if (active || freshFolders.has(loc)) settle.add(loc);
      freshFolders.delete(loc);
    }
    if (settle.size && !settleTimer) {
      settleTimer = setTimeout(() => {
        settleTimer = null;
        if (closed) return;
        for (const loc of settle) if (!pending.has(loc)) pending.set(loc, new Set());
        settle.clear();
        // Not a quiet-period flush either: writes may still be under way.
        flush(true);
      }, SETTLE_MS);
    }
    // Batches are delivered in order even though checking existence is async.
    flushing = flushing.then(async () => {
      const changes: DirectoryChange[] = [];
      for (const [location, paths] of batch) {
        const exists = await fs
          .lstat(path.join(absRoot, location))
          .then(() => true)
          .catch(() => false);
        changes.push({ location, kind: exists ? 'changed' : 'removed', paths: [...paths] });
      }
      try {
        onChanges(changes);
      } catch {
        // A failing subscriber must not stop the watcher.
      }
    });
  };

  const note = (event: string, p: string) => {
    if (closed) return;
    const rel = relativeOf(p);
    if (rel === '' || rel.startsWith('..') || isIgnoredRelative(rel)) return;
    const location = locationOf(rel);
    if (event === 'addDir') freshFolders.add(location);
    let paths = pending.get(location);
    if (!paths) pending.set(location, (paths = new Set()));
    paths.add(rel);
    lastNoted.set(location, Date.now());
    schedule();
  };

  watcher.on('all', (event, p) => note(event, p));
  watcher.on('error', (err) => options.onError?.(err instanceof Error ? err : new Error(String(err))));

  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));

  return {
    root: absRoot,
    ready,
    watchAgain(locations) {
      if (closed || locations.length === 0) return;
      watcher.add(locations.map((l) => path.join(absRoot, l)));
    },
    async close() {
      if (closed) return;
      flush(false);
      closed = true;
      if (settleTimer) clearTimeout(settleTimer);
      await watcher.close();
      await flushing;
    },
  };
}
