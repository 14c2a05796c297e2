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
  let trailingTimer: NodeJS.Timeout | null = null;
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

  const flush = (forcedByMaxDelay: boolean) => {
    if (quietTimer) clearTimeout(quietTimer);
    if (maxTimer) clearTimeout(maxTimer);
    quietTimer = maxTimer = null;
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    if (forcedByMaxDelay) {
      // chokidar drops a file's change events for 50 ms after it reported one,
      // with no trailing event. A flush in the middle of a burst may thus miss
      // the burst's last writes: report every location that was active just
      // now once more, after chokidar's window has passed.
      const now = Date.now();
      const recent = [...batch.keys()].filter((loc) => now - (lastNoted.get(loc) ?? 0) < CHOKIDAR_THROTTLE_MS * 2);
      if (recent.length) {
        if (trailingTimer) clearTimeout(trailingTimer);
        trailingTimer = setTimeout(() => {
          trailingTimer = null;
          if (closed) return;
          for (const loc of recent) if (!pending.has(loc)) pending.set(loc, new Set());
          flush(false);
        }, Math.max(quietMs, CHOKIDAR_THROTTLE_MS * 2));
      }
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

  const note = (p: string) => {
    if (closed) return;
    const rel = relativeOf(p);
    if (rel === '' || rel.startsWith('..') || isIgnoredRelative(rel)) return;
    const location = locationOf(rel);
    let paths = pending.get(location);
    if (!paths) pending.set(location, (paths = new Set()));
    paths.add(rel);
    lastNoted.set(location, Date.now());
    schedule();
  };

  watcher.on('all', (_event, p) => note(p));
  watcher.on('error', (err) => options.onError?.(err instanceof Error ? err : new Error(String(err))));

  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));

  return {
    root: absRoot,
    ready,
    async close() {
      if (closed) return;
      flush(false);
      closed = true;
      if (trailingTimer) clearTimeout(trailingTimer);
      await watcher.close();
      await flushing;
    },
  };
}
