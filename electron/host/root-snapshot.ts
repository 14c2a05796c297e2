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
  /** Task folder -> size and mtime of its events.jsonl; folders without one are absent. */
  events: Map<string, { size: number; mtimeMs: number }>;
}

/** How many root entries are stat-ed before the snapshot lets the event loop run. */
const SLICE = 500;

/**
 * Take a snapshot of the root: one stat per root file and one per task
 * folder's events.jsonl, in slices that yield to the event loop between them.
 *
 * The event logs are not read here: the size says where each log stood, and
 * `lastEventIdWithin` reads a task's last event id from that point only when
 * the task first changes. Opening a directory of 10,000 tasks then costs
 * 10,000 stats instead of 40,000 file-system calls.
 */
export async function snapshotRoot(root: string): Promise<RootSnapshot> {
  const entries = new Map<string, { dir: boolean; mtimeMs: number; size: number }>();
  const events = new Map<string, { size: number; mtimeMs: number }>();
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
        if (st?.isFile()) events.set(name, { size: st.size, mtimeMs: st.mtimeMs });
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

/** How far back from the end a last event id is looked for: far more than any one event line. */
const TAIL = 16 * 1024;

/**
 * The id of the last whole event line in the first `size` bytes of an event
 * log; undefined when there is none or the file cannot be read.
 *
 * Event logs are only ever appended to, so the first `size` bytes are the log
 * as it stood when its size was taken, however much was appended since. A
 * torn last line is skipped, as readers do.
 */
export function lastEventIdWithin(file: string, size: number): number | undefined {
  if (size <= 0) return undefined;
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
    // A log now shorter than it was was replaced, not appended to: what it held then is gone.
    const end = Math.min(size, stat.size);
    const length = Math.min(end, TAIL);
    tail = Buffer.allocUnsafe(length);
    tail = tail.subarray(0, readSync(fd, tail, 0, length, end - length));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  const lines = tail.toString('utf8').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].trim() === '') continue;
    try {
      const id = (JSON.parse(lines[i]) as { id?: unknown }).id;
      if (typeof id === 'number') return id;
    } catch {
      // A torn or partial line: look at the one before.
    }
  }
  return undefined;
}
