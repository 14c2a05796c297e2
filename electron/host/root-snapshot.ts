/**
 * Snapshots of a checkpoint directory's root, so the host can tell what
 * changed while its watcher was still walking the tree.
 */
import { close, fstat, open, promises as fs, read } from 'node:fs';
import path from 'node:path';
import type { DirectoryChange } from './directory-watcher.js';

/** What a directory held at one moment: its entries and each task folder's last event id. */
export interface RootSnapshot {
  entries: Map<string, { dir: boolean; mtimeMs: number; size: number }>;
  lastEvent: Map<string, number>;
}

/** Seed `into` with each task's last event id, and remember the root's entries for `changesSince`. */
export async function snapshotRoot(root: string, into: Map<string, number>): Promise<RootSnapshot> {
  const entries = new Map<string, { dir: boolean; mtimeMs: number; size: number }>();
  const names = await fs.readdir(root, { withFileTypes: true });
  for (const d of names) {
    if (d.name.startsWith('.') || d.name.endsWith('.tmp')) continue;
    if (d.isDirectory()) entries.set(d.name, { dir: true, mtimeMs: 0, size: 0 });
    else {
      const st = await fs.stat(path.join(root, d.name)).catch(() => null);
      if (st) entries.set(d.name, { dir: false, mtimeMs: st.mtimeMs, size: st.size });
    }
  }
  await seedLastEvents(root, into);
  return { entries, lastEvent: new Map(into) };
}

/**
 * The locations that changed since a snapshot: task folders added, removed or
 * with new events, and root-level files added, removed or rewritten. Reported
 * with no paths, so each is re-read and its new events published.
 */
export async function changesSince(root: string, before: RootSnapshot): Promise<DirectoryChange[]> {
  const now = await snapshotRoot(root, new Map());
  const changes: DirectoryChange[] = [];
  for (const [name, was] of before.entries) {
    if (!now.entries.has(name)) changes.push({ location: name, kind: 'removed', paths: [] });
    else if (was.dir ? now.lastEvent.get(name) !== before.lastEvent.get(name) : now.entries.get(name)!.mtimeMs !== was.mtimeMs || now.entries.get(name)!.size !== was.size) {
      changes.push({ location: name, kind: 'changed', paths: [] });
    }
  }
  for (const name of now.entries.keys()) if (!before.entries.has(name)) changes.push({ location: name, kind: 'changed', paths: [] });
  return changes;
}

/**
 * Note, for every task folder, the id of the last line of its events.jsonl.
 *
 * Only the file's tail is read, so opening a directory of long-lived tasks
 * stays cheap; a torn last line is skipped as readers do.
 */
export async function seedLastEvents(root: string, into: Map<string, number>): Promise<void> {
  const names = await fs.readdir(root, { withFileTypes: true });
  const folders = names.filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name);
  const TAIL = 16 * 1024;
  let next = 0;
  const worker = async () => {
    while (next < folders.length) {
      const name = folders[next++];
      const tail = await readTail(path.join(root, name, 'events.jsonl'), TAIL);
      if (!tail) continue;
      const lines = tail.toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0; i--) {
        try {
          const id = (JSON.parse(lines[i]) as { id?: unknown }).id;
          if (typeof id === 'number') {
            into.set(name, id);
            break;
          }
        } catch {
          // A torn or partial line: look at the one before.
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/**
 * The last `max` bytes of a file, or null when it cannot be read. On the
 * callback API, without a FileHandle: opening a directory of 10,000 tasks
 * reads 10,000 tails before it serves, and promise-based handles cost several
 * times the reads themselves there.
 */
function readTail(file: string, max: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    open(file, 'r', (openErr, fd) => {
      if (openErr) return resolve(null);
      const finish = (tail: Buffer | null) => close(fd, () => resolve(tail));
      fstat(fd, (statErr, st) => {
        if (statErr) return finish(null);
        const length = Math.min(st.size, max);
        const buffer = Buffer.allocUnsafe(length);
        if (length === 0) return finish(buffer);
        read(fd, buffer, 0, length, st.size - length, (readErr, n) => finish(readErr ? null : buffer.subarray(0, n)));
      });
    });
  });
}
