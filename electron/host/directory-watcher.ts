/**
 * Watching a checkpoint directory for changes made by anyone: our own runner,
 * another process, a person with a text editor.
 *
 * The folders are watched one `fs.watch` each (folder-watches.ts), which
 * reports single entries; the host wants to know which tasks changed. So
 * events are mapped to the task they belong to (the first path segment under
 * the root, or a task file at the root), collected per task and flushed in
 * one batch once the directory has been quiet for a moment, with an upper
 * bound so a task written to continuously is still reported regularly.
 * Writers' temporary files (`.name.tmp`, dot-files) are ignored, and so are
 * `versions/` and `blobs/`, never watched: every save also renames
 * `checkpoint.json` or appends to `events.jsonl`, which are. The event log,
 * not the watcher, is what guarantees that no version goes unreported.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { BLOBS_DIR } from '../store/blob-store.js';
import { VERSIONS_DIR } from '../store/version-file.js';
import { FolderWatches } from './folder-watches.js';

/** How long after a flush a folder that just appeared is reported again (files written before its watch started). */
const SETTLE_MS = 250;

/** What happened to one task location during a batch. */
export interface DirectoryChange {
  /** The task folder or root-level task file, relative to the root (e.g. `t1`, `legacy.json`). */
  location: string;
  /** `removed` when the location no longer exists at flush time. */
  kind: 'changed' | 'removed';
  /**
   * Paths below the root that changed, forward slashes, in the order first
   * seen. Empty for the second report of a folder that had just appeared
   * (see watchDirectory).
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
   * Watch these locations (task folders, relative to the root) when they are
   * not watched yet: whoever catches up at ready on folders that appeared
   * while the watches were set up hands them here, so their later changes
   * are reported whatever the timing was.
   */
  watchAgain(locations: readonly string[]): void;
  /** Watch the files of exactly these folders (relative, below a root entry): where tasks' artifacts lie. */
  watchArtifactFolders(folders: ReadonlySet<string>): void;
  /** Stop watching; pending changes are flushed first. */
  close(): Promise<void>;
}

/**
 * Is this path, relative to the root, something the watcher ignores?
 *
 * Temporary files of writers in progress (FORMAT.md: names starting with `.`
 * or ending with `.tmp`, in any segment), and a task's `blobs/` and
 * `versions/` folders, which only ever gain files alongside a rename of the
 * task's `checkpoint.json` or an append to its `events.jsonl`.
 */
export function isIgnoredRelative(relative: string): boolean {
  if (relative === '') return false;
  const segments = relative.split(/[/\\]/);
  if (segments.some((s) => s.startsWith('.') || s.endsWith('.tmp'))) return true;
  if (segments.length >= 2 && (segments[1] === BLOBS_DIR || segments[1] === VERSIONS_DIR)) return true;
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
  let quietTimer: NodeJS.Timeout | null = null;
  let maxTimer: NodeJS.Timeout | null = null;
  let settleTimer: NodeJS.Timeout | null = null;
  /** Locations to report once more when things have settled (see flush). */
  const settle = new Set<string>();
  /** Top-level folders that appeared since the last flush. */
  const freshFolders = new Set<string>();
  let closed = false;
  let flushing: Promise<void> = Promise.resolve();

  const schedule = () => {
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = setTimeout(() => flush(), quietMs);
    if (!maxTimer) maxTimer = setTimeout(() => flush(), maxDelayMs);
  };

  const flush = () => {
    if (quietTimer) clearTimeout(quietTimer);
    if (maxTimer) clearTimeout(maxTimer);
    quietTimer = maxTimer = null;
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    for (const loc of batch.keys()) {
      // Files written into a folder that has just appeared, before its watch
      // started, go unreported: the folder is reported once more, after things have settled.
      if (freshFolders.has(loc)) settle.add(loc);
      freshFolders.delete(loc);
    }
    if (settle.size && !settleTimer) {
      settleTimer = setTimeout(() => {
        settleTimer = null;
        if (closed) return;
        for (const loc of settle) if (!pending.has(loc)) pending.set(loc, new Set());
        settle.clear();
        flush();
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

  const note = (rel: string, appeared: boolean) => {
    if (closed || rel === '' || isIgnoredRelative(rel)) return;
    const location = locationOf(rel);
    if (appeared) freshFolders.add(location);
    let paths = pending.get(location);
    if (!paths) pending.set(location, (paths = new Set()));
    paths.add(rel);
    schedule();
  };

  const folders = new FolderWatches(absRoot, {
    onPath: note,
    ignored: isIgnoredRelative,
    onError: (err) => {
      try {
        options.onError?.(err);
      } catch {
        // A failing error handler must not stop the watcher.
      }
    },
  });
  const ready = folders.start();

  return {
    root: absRoot,
    ready,
    watchAgain(locations) {
      if (closed || locations.length === 0) return;
      folders.watchTasks(locations);
    },
    watchArtifactFolders(wanted) {
      if (!closed) folders.watchArtifactFolders(wanted);
    },
    async close() {
      if (closed) return;
      flush();
      closed = true;
      if (settleTimer) clearTimeout(settleTimer);
      folders.close();
      await ready.catch(() => {});
      await flushing;
    },
  };
}
