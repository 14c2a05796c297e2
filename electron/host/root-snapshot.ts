/**
 * Snapshots of a checkpoint directory's root, so the host can tell what
 * changed while its watcher was still walking the tree, and which events of a
 * task's log were already there when the directory was opened.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { EVENTS_FILE } from '../store/event-log.js';
import { READ_FLAGS } from '../store/store-fs.js';
import type { DirectoryChange } from './directory-watcher.js';

/** What a directory held at one moment: its entries, and how long each task folder's event log was. */
export interface RootSnapshot {
  entries: Map<string, { dir: boolean; mtimeMs: number; size: number }>;
  /** Task folder -> its events.jsonl as stat-ed then; folders without one are absent. */
  events: Map<string, LogAtOpen>;
}

/** A task's event log as the snapshot stat-ed it: its size, mtime and inode number. */
export interface LogAtOpen {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** How many root entries are stat-ed before the snapshot lets the event loop run. */
const SLICE = 500;

/**
 * Take a snapshot of the root: one stat per root file and one per task
 * folder's events.jsonl, in slices that yield to the event loop between them.
 *
 * The event logs are not read here: the stat says where each log stood, and
 * `lastEventAtOpen` reads a task's last event from that point only when the
 * task first changes. Opening a directory of 10,000 tasks then costs
 * 10,000 stats instead of 40,000 file-system calls.
 */
export async function snapshotRoot(root: string): Promise<RootSnapshot> {
  const entries = new Map<string, { dir: boolean; mtimeMs: number; size: number }>();
  const events = new Map<string, LogAtOpen>();
  const names = readdirSync(root, { withFileTypes: true });
  // Paths by concatenation: path.join normalises each one, which took as long as the stat itself here.
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  const logSuffix = path.sep + EVENTS_FILE;
  for (let start = 0; start < names.length; start += SLICE) {
    if (start > 0) await nextTurn();
    const end = Math.min(names.length, start + SLICE);
    for (let i = start; i < end; i++) {
      const name = names[i].name;
      if (name.startsWith('.') || name.endsWith('.tmp')) continue;
      if (names[i].isDirectory()) {
        entries.set(name, { dir: true, mtimeMs: 0, size: 0 });
        const st = statOrNull(prefix + name + logSuffix);
        if (st?.isFile()) events.set(name, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
      } else {
        const st = statOrNull(prefix + name);
        if (st) entries.set(name, { dir: false, mtimeMs: st.mtimeMs, size: st.size });
      }
    }
  }
  return { entries, events };
}

/** A stat, or null when the path is gone or cannot be stat-ed (the watcher reports it if it matters). */
function statOrNull(file: string): Stats | null {
  try {
    return statSync(file, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/**
 * The locations that changed since a snapshot: task folders added, removed or
 * whose event log grew or was rewritten, and root-level files added, removed
 * or rewritten. Reported with no paths, so each is re-read and its new events
 * published.
 */
export async function changesSince(root: string, before: RootSnapshot): Promise<DirectoryChange[]> {
  // A root deleted or moved away before the watcher saw it go: every task it held is gone.
  const now = await snapshotRoot(root).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return { entries: new Map(), events: new Map() } satisfies RootSnapshot;
    throw err;
  });
  const changes: DirectoryChange[] = [];
  const differs = (a: { size: number; mtimeMs: number } | undefined, b: { size: number; mtimeMs: number } | undefined) =>
    a?.size !== b?.size || a?.mtimeMs !== b?.mtimeMs;
  for (const [name, was] of before.entries) {
    const is = now.entries.get(name);
    if (!is) changes.push({ location: name, kind: 'removed', paths: [] });
    else if (was.dir ? differs(now.events.get(name), before.events.get(name)) : differs(is, was)) {
      changes.push({ location: name, kind: 'changed', paths: [] });
    }
  }
  for (const name of now.entries.keys()) if (!before.entries.has(name)) changes.push({ location: name, kind: 'changed', paths: [] });
  return changes;
}

/** How far back from the end a last event is looked for: far more than any one event line. */
const TAIL = 16 * 1024;

/**
 * How much later than a log's mtime at open its event at that point may say it was written and still be one the
 * log held then: an event's time is taken before its line is appended, and a file's mtime can lag the clock by a
 * tick of the kernel's coarse clock (4 ms here). A log written anew after the open has its events later still.
 */
const WRITTEN_BEFORE_OPEN_SLACK_MS = 50;

/**
 * The id of the last event a task's log held when the directory was opened
 * (`seen`), read from the log as it is now; `replaced` when the log now there
 * is another one than the log seen then, whose events are all news; undefined
 * when it held none or cannot be read.
 *
 * Event logs are only ever appended to, so the first `seen.size` bytes of the
 * same log are what it held then, however much was appended since. The log
 * is another one when it is another file (another inode number), shorter
 * than it was, or when its event at that point says it was written after the
 * log seen at open last was: a task removed and run again under its name,
 * whose new log got the old inode number back (ext4 hands freed numbers out
 * again) and grew past the old size. A torn last line is skipped, as readers
 * do.
 */
export function lastEventAtOpen(file: string, seen: LogAtOpen): { id: number } | 'replaced' | undefined {
  if (seen.size <= 0) return undefined;
  let fd: number;
  try {
    // Non-blocking, as every store read: a named pipe put in the log's place must not stop the host.
    fd = openSync(file, READ_FLAGS);
  } catch {
    return undefined;
  }
  let tail: Buffer;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    if (stat.ino !== seen.ino || stat.size < seen.size) return 'replaced';
    const length = Math.min(seen.size, TAIL);
    tail = Buffer.allocUnsafe(length);
    tail = tail.subarray(0, readSync(fd, tail, 0, length, seen.size - length));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  const lines = tail.toString('utf8').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].trim() === '') continue;
    let event: { id?: unknown; at?: unknown };
    try {
      event = JSON.parse(lines[i]) as { id?: unknown; at?: unknown };
    } catch {
      // A torn or partial line: look at the one before.
      continue;
    }
    if (typeof event.id !== 'number') continue;
    const at = typeof event.at === 'string' ? Date.parse(event.at) : NaN;
    if (at > seen.mtimeMs + WRITTEN_BEFORE_OPEN_SLACK_MS) return 'replaced';
    return { id: event.id };
  }
  return undefined;
}
