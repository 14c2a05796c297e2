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
 * `versions/` and `blobs/`: they only ever gain files while every save also
 * renames `checkpoint.json` and appends to `events.jsonl`, which are watched.
 * The event log, not the watcher, is what guarantees that no version goes
 * unreported.
 *
 * The watches are the OS's own, one per folder that matters (the root, each
 * task folder, each `lease/`), not chokidar's: chokidar reads and stats every
 * entry of the tree to track it, which took about 5 s before the first event
 * over 10,000 task folders, against 0.2 s for the native watches. The host
 * only needs to know which task location changed, never a file-level diff,
 * so the folder watches' (event, name) pairs are all it uses.
 */
import { watch, type FSWatcher } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Folders below a task folder that are watched too: the lease decides whether a task shows as running. */
const WATCHED_SUBFOLDERS = ['lease'];
/** A burst of change events of one file can arrive after a flush; see `active` in flush. */
const BURST_MS = 50;
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
  /** Folder (relative, '' for the root) -> its watch. */
  const watches = new Map<string, FSWatcher>();

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
      // A flush forced by maxDelayMs in the middle of a burst may come before
      // the burst's last writes are visible to the reader. And files written
      // into a folder that has just appeared can be missed while its watch is
      // being set up. Either way the location is reported once more, after
      // things have settled.
      const active = beforeQuiet && now - (lastNoted.get(loc) ?? 0) < BURST_MS * 2;
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

  const note = (rel: string) => {
    if (closed) return;
    if (rel === '' || rel.startsWith('..') || isIgnoredRelative(rel)) return;
    const location = locationOf(rel);
    let paths = pending.get(location);
    if (!paths) pending.set(location, (paths = new Set()));
    paths.add(rel);
    lastNoted.set(location, Date.now());
    schedule();
  };

  const unwatchUnder = (rel: string) => {
    for (const [dir, w] of watches) {
      if (dir === rel || dir.startsWith(`${rel}/`)) {
        w.close();
        watches.delete(dir);
      }
    }
  };

  /** Watch one folder; false when it is not there (or not a folder). */
  const watchFolder = (rel: string): boolean => {
    if (closed || watches.has(rel)) return true;
    let w: FSWatcher;
    try {
      w = watch(rel === '' ? absRoot : path.join(absRoot, rel), { persistent: true }, (_event, name) => onEntry(rel, name));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') options.onError?.(err instanceof Error ? err : new Error(String(err)));
      return false;
    }
    w.on('error', (err) => {
      // The folder went away (or the OS dropped the watch): its location is reported and re-watched if it comes back.
      unwatchUnder(rel);
      if (rel !== '') note(rel);
      else options.onError?.(err instanceof Error ? err : new Error(String(err)));
    });
    watches.set(rel, w);
    return true;
  };

  /** Watch a task folder and the subfolders of it that matter. */
  const watchTask = (location: string) => {
    if (!watchFolder(location)) return;
    for (const sub of WATCHED_SUBFOLDERS) watchFolder(`${location}/${sub}`);
  };

  /** Something happened to `name` in the watched folder `dir`. */
  const onEntry = (dir: string, name: string | Buffer | null) => {
    if (closed) return;
    if (name === null) {
      // The OS did not say which entry: the whole folder (or, at the root, everything) may have changed.
      if (dir !== '') note(dir);
      return;
    }
    const rel = dir === '' ? String(name) : `${dir}/${String(name)}`;
    if (isIgnoredRelative(rel)) return;
    note(rel);
    const depth = rel.split('/').length;
    const isFolderOfInterest = depth === 1 || (depth === 2 && WATCHED_SUBFOLDERS.includes(rel.split('/')[1]));
    if (!isFolderOfInterest) return;
    // A folder of interest appeared or went away: start or stop watching it.
    void fs.stat(path.join(absRoot, rel)).then(
      (st) => {
        if (!st.isDirectory() || watches.has(rel)) return;
        if (depth === 1) {
          freshFolders.add(rel);
          watchTask(rel);
        } else {
          watchFolder(rel);
        }
        // Entries created before the watch was in place are reported by the settle pass (freshFolders).
        if (depth === 2) freshFolders.add(locationOf(rel));
      },
      () => unwatchUnder(rel),
    );
  };

  const ready = (async () => {
    watchFolder('');
    let entries: import('node:fs').Dirent[] = [];
    try {
      entries = await fs.readdir(absRoot, { withFileTypes: true });
    } catch (err) {
      options.onError?.(err instanceof Error ? err : new Error(String(err)));
    }
    for (const e of entries) {
      if (closed) return;
      if (isIgnoredRelative(e.name)) continue;
      // Symlinked task folders are watched through the link, as the store reads them.
      if (e.isDirectory() || e.isSymbolicLink()) watchTask(e.name);
    }
  })();

  return {
    root: absRoot,
    ready,
    async close() {
      if (closed) return;
      flush(false);
      closed = true;
      if (settleTimer) clearTimeout(settleTimer);
      await ready;
      for (const w of watches.values()) w.close();
      watches.clear();
      await flushing;
    },
  };
}
