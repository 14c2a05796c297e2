/**
 * The folders of a checkpoint directory under watch, one `fs.watch` each:
 * the root, every task folder, each task's `lease/`, and the folders below
 * them that hold files tasks recorded as artifacts (md-summarizer's
 * `outputs/<task>/`), which the change feed names.
 *
 * A folder's watch reports what happens to the entries directly in it (an
 * entry created, renamed over, removed, written to or appended to), on Linux,
 * macOS and Windows alike. Every file the change feed reads is directly in
 * one of these folders: `checkpoint.json` and `events.jsonl` (which every
 * save renames or appends to, a segment append included) in the task folder,
 * `lease/<n>.json` in the lease folder, root-level task files in the root. So
 * no file is watched on its own, and `versions/` and `blobs/`, which only gain
 * files beside a save that touches those, are never read or watched.
 *
 * That is 10,001 watches for 10,000 tasks, set up with one `readdir` of the
 * root and one `stat` per task folder (is there a `lease/`). chokidar, which
 * did this before, stat-ed and watched every file as well and kept a few
 * kilobytes of JavaScript objects per entry: about 230 MiB and several seconds
 * of CPU over the same directory, against about 20 MiB and a fraction of a
 * second here.
 */
import { readdirSync, statSync, watch, type Dirent, type FSWatcher, type Stats } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LEASE_DIR } from '../store/file-lease.js';

/** How many root entries are set up before the walk lets the event loop run. */
const SLICE = 500;

export interface FolderWatchesOptions {
  /**
   * Something happened to `relative` (forward slashes, below the root).
   * `appeared`: a task folder appeared (or was replaced) and is watched from
   * now on; files written into it before that may not have been reported.
   */
  onPath(relative: string, appeared: boolean): void;
  /** A folder could not be watched, or its watch failed; the others stay watched. */
  onError(err: Error): void;
  /** Whether a relative path is of no interest (temporary files, `versions/`, ...); its events are dropped. */
  ignored(relative: string): boolean;
}

/** The watched folders of one root; see the module comment. */
export class FolderWatches {
  /** Relative folder ('' for the root, `t1`, `t1/lease`) -> its watch. */
  private readonly watches = new Map<string, FSWatcher>();
  /** The root's entries as last seen, so that a root removed can report each of them gone. */
  private readonly rootNames = new Set<string>();
  /** Folders watched for the artifacts in them (watchArtifactFolders), not as tasks. */
  private readonly artifactFolders = new Set<string>();
  /** Error codes already reported: a limit reached fails every folder after it, and is said once. */
  private readonly reported = new Set<string>();
  private closed = false;

  constructor(
    private readonly absRoot: string,
    private readonly options: FolderWatchesOptions,
  ) {}

  /** How many folders are watched. */
  get size(): number {
    return this.watches.size;
  }

  /**
   * Watch the root, then every task folder and lease folder in it, a slice
   * at a time. The root is watched first, so a folder that appears during the
   * walk is reported and watched by the root's watch.
   */
  async start(): Promise<void> {
    this.watchFolder('', (event, name) => this.onRootEvent(event, name));
    let entries: Dirent[];
    try {
      entries = readdirSync(this.absRoot, { withFileTypes: true });
    } catch (err) {
      this.report(err, '');
      return;
    }
    for (let start = 0; start < entries.length; start += SLICE) {
      if (start > 0) await nextTurn();
      if (this.closed) return;
      for (const d of entries.slice(start, start + SLICE)) {
        if (this.options.ignored(d.name)) continue;
        this.rootNames.add(d.name);
        // A symbolic link is followed, as a listing follows it (the store then refuses one leading outside the root).
        if (d.isDirectory() || (d.isSymbolicLink() && this.statOf(d.name)?.isDirectory())) this.watchTask(d.name);
      }
    }
  }

  /** Watch these task folders (names in the root) when they are folders not watched yet. */
  watchTasks(names: readonly string[]): void {
    for (const name of names) {
      if (this.closed || this.watches.has(name) || this.options.ignored(name)) continue;
      if (this.statOf(name)?.isDirectory()) this.watchTask(name);
    }
  }

  /**
   * Watch exactly these folders (relative to the root, below a root entry) for the files in them, as folders of
   * tasks' artifacts: the ones watched for that before and not named now are let go. A folder not there now is
   * left out, and watched once it is named again and there (a batch after it is made names it again).
   */
  watchArtifactFolders(folders: ReadonlySet<string>): void {
    if (this.closed) return;
    for (const folder of this.artifactFolders) {
      if (folders.has(folder)) continue;
      this.artifactFolders.delete(folder);
      this.unwatch(folder);
    }
    for (const folder of folders) {
      // The root's entries and their lease folders have watches of their own; so may a folder named twice.
      if (!folder.includes('/') || this.watches.has(folder) || this.options.ignored(folder)) continue;
      if (!this.statOf(folder)?.isDirectory()) continue;
      this.artifactFolders.add(folder);
      this.watchFolder(folder, (event, filename) => {
        // The folder itself removed or moved (a watch on Linux then follows nothing): let go, so that the next batch
        // watches the folder made in its place.
        if (event === 'rename' && !this.statOf(folder)) this.unwatch(folder);
        const relative = filename === null ? folder : `${folder}/${String(filename)}`;
        if (!this.options.ignored(relative)) this.options.onPath(relative, false);
      });
    }
  }

  /** Stop every watch. */
  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
  }

  private onRootEvent(event: string, filename: string | Buffer | null): void {
    if (filename === null) {
      // Some platforms do not say which entry changed: the root is compared with what was seen.
      this.rescanRoot();
      return;
    }
    const name = String(filename);
    if (this.options.ignored(name)) return;
    if (!this.statOf('')) {
      // The root itself was removed or moved away: everything it held is gone.
      for (const gone of this.rootNames) this.options.onPath(gone, false);
      this.rootNames.clear();
      return;
    }
    let appeared = false;
    // `rename`: the entry appeared, went away or was replaced; `change`: a root file was written to.
    if (event === 'rename') appeared = this.settleRootEntry(name);
    this.options.onPath(name, appeared);
  }

  /**
   * Bring the watch of a root entry in line with what is there now: a folder
   * is watched afresh (it may be another folder under the same name), an
   * entry gone is no longer watched. True when a folder is now watched.
   */
  private settleRootEntry(name: string): boolean {
    const st = this.statOf(name);
    this.unwatchTask(name);
    if (!st) {
      this.rootNames.delete(name);
      return false;
    }
    this.rootNames.add(name);
    if (!st.isDirectory()) return false;
    this.watchTask(name);
    return true;
  }

  private rescanRoot(): void {
    let now: Set<string>;
    try {
      now = new Set(readdirSync(this.absRoot).filter((n) => !this.options.ignored(n)));
    } catch {
      now = new Set();
    }
    for (const name of this.rootNames) if (!now.has(name)) this.options.onPath(name, this.settleRootEntry(name));
    for (const name of now) if (!this.rootNames.has(name)) this.options.onPath(name, this.settleRootEntry(name));
  }

  private watchTask(name: string): void {
    this.watchFolder(name, (event, filename) => {
      if (filename === null) {
        this.options.onPath(name, false);
        return;
      }
      const entry = String(filename);
      // The folder's own removal is reported under its own name by some platforms.
      if (event === 'rename' && entry === name && !this.statOf(name)) {
        this.options.onPath(name, false);
        return;
      }
      if (entry === LEASE_DIR && event === 'rename') this.settleLease(name);
      const relative = `${name}/${entry}`;
      if (!this.options.ignored(relative)) this.options.onPath(relative, false);
    });
    if (this.statOf(`${name}/${LEASE_DIR}`)?.isDirectory()) this.watchLease(name);
  }

  private settleLease(task: string): void {
    const folder = `${task}/${LEASE_DIR}`;
    this.unwatch(folder);
    if (this.statOf(folder)?.isDirectory()) this.watchLease(task);
  }

  private watchLease(task: string): void {
    const folder = `${task}/${LEASE_DIR}`;
    this.watchFolder(folder, (_event, filename) => {
      const relative = filename === null ? folder : `${folder}/${String(filename)}`;
      if (!this.options.ignored(relative)) this.options.onPath(relative, false);
    });
  }

  private unwatchTask(name: string): void {
    this.unwatch(`${name}/${LEASE_DIR}`);
    this.unwatch(name);
  }

  private unwatch(folder: string): void {
    this.watches.get(folder)?.close();
    this.watches.delete(folder);
  }

  /** Start one folder's watch; a folder gone meanwhile is skipped, any other failure reported once per kind. */
  private watchFolder(folder: string, listener: (event: string, filename: string | Buffer | null) => void): void {
    if (this.closed) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(path.join(this.absRoot, folder), { persistent: false }, (event, filename) => {
        if (!this.closed && this.watches.get(folder) === watcher) listener(event, filename);
      });
    } catch (err) {
      this.report(err, folder);
      return;
    }
    watcher.on('error', (err) => {
      if (this.watches.get(folder) !== watcher) return;
      this.unwatch(folder);
      // A folder removed can fail its watch instead of reporting (Windows): that is a change, not a failure.
      if (!this.statOf(folder)) this.options.onPath(folder, false);
      else this.report(err, folder);
    });
    this.watches.set(folder, watcher);
  }

  private report(err: unknown, folder: string): void {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
    if (code === 'ENOENT' || code === 'ENOTDIR' || this.reported.has(code)) return;
    this.reported.add(code);
    const where = path.join(this.absRoot, folder);
    const why =
      code === 'ENOSPC'
        ? `the system's limit on watched folders is reached (on Linux, fs.inotify.max_user_watches)`
        : (err as Error).message;
    this.options.onError(
      new Error(
        `${where} cannot be watched: ${why}; changes made there, and in any other folder that fails the same way, are not shown until the directory is opened again`,
      ),
    );
  }

  /** A stat of a path below the root, null when it is not there (or cannot be stat-ed). */
  private statOf(relative: string): Stats | null {
    try {
      return statSync(path.join(this.absRoot, relative), { throwIfNoEntry: false }) ?? null;
    } catch {
      return null;
    }
  }
}
