/**
 * What the host catches up on once its watcher finishes walking the tree:
 * every task folder or root file that changed after the snapshot, and nothing
 * else; and where each task's event log stood when the directory was opened.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { changesSince, lastEventAtOpen, snapshotRoot, type LogAtOpen } from '../../../electron/host/root-snapshot.js';

let root: string;

const line = (id: number, at = '2026-01-01T00:00:00.000Z') => JSON.stringify({ id, task_id: 'x', type: 'version', at }) + '\n';
const seenNow = async (file: string): Promise<LogAtOpen> => {
  const st = await fs.stat(file);
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
};

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-snapshot-'));
  for (const id of ['quiet', 'busy', 'doomed']) {
    await fs.mkdir(path.join(root, id));
    await fs.writeFile(path.join(root, id, 'events.jsonl'), line(1) + line(2));
  }
  await fs.writeFile(path.join(root, 'legacy.json'), '{"task_id":"legacy"}');
  await fs.writeFile(path.join(root, '.checkpoint.json.abc.tmp'), 'half');
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

it("notes where each task folder's event log stood, without reading it", async () => {
  const snap = await snapshotRoot(root);
  const size = Buffer.byteLength(line(1) + line(2));
  expect(Object.fromEntries([...snap.events].map(([name, log]) => [name, log.size]))).toEqual({ quiet: size, busy: size, doomed: size });
  expect([...snap.entries.keys()].sort()).toEqual(['busy', 'doomed', 'legacy.json', 'quiet']);
});

it('reads the last event as of the snapshot, whatever was appended since', async () => {
  const snap = await snapshotRoot(root);
  const file = path.join(root, 'busy', 'events.jsonl');
  await fs.appendFile(file, line(3) + line(4));
  expect(lastEventAtOpen(file, snap.events.get('busy')!)).toEqual({ id: 2 });
  expect(lastEventAtOpen(file, await seenNow(file))).toEqual({ id: 4 });
});

it('skips a torn last line, and knows no event in an empty or missing log', async () => {
  const file = path.join(root, 'busy', 'events.jsonl');
  await fs.appendFile(file, '{"id":3,"task_id":"x","ty');
  const seen = await seenNow(file);
  expect(lastEventAtOpen(file, seen)).toEqual({ id: 2 });
  expect(lastEventAtOpen(file, { ...seen, size: 0 })).toBeUndefined();
  expect(lastEventAtOpen(path.join(root, 'fresh', 'events.jsonl'), seen)).toBeUndefined();
});

it('tells a log written anew from the one seen: shorter, another file, or its event there written after the log seen was', async () => {
  const file = path.join(root, 'busy', 'events.jsonl');
  const seen = await seenNow(file);
  // Rewritten in place, shorter.
  await fs.writeFile(file, line(1));
  expect(lastEventAtOpen(file, seen)).toBe('replaced');
  // Another file renamed over it (both existed at once: another inode number), as long as the log seen.
  const other = path.join(root, 'busy', 'other.jsonl');
  await fs.writeFile(other, line(1) + line(2));
  await fs.rename(other, file);
  expect(lastEventAtOpen(file, seen)).toBe('replaced');
  // The same file, longer, whose event at the old end was written a minute after the log seen last was.
  const later = new Date(seen.mtimeMs + 60_000).toISOString();
  await fs.writeFile(file, line(1, later) + line(2, later) + line(3, later));
  expect(lastEventAtOpen(file, { ...seen, ino: (await fs.stat(file)).ino })).toBe('replaced');
  // Written within the kernel clock's tick of the mtime seen: the log held it then.
  const within = new Date(seen.mtimeMs + 4).toISOString();
  await fs.writeFile(file, line(1, within) + line(2, within) + line(3, within));
  expect(lastEventAtOpen(file, { ...seen, ino: (await fs.stat(file)).ino })).toEqual({ id: 2 });
});

it('reports new events, new and removed tasks and rewritten root files, but not quiet ones', async () => {
  const snap = await snapshotRoot(root);
  await fs.appendFile(path.join(root, 'busy', 'events.jsonl'), line(3));
  await fs.rm(path.join(root, 'doomed'), { recursive: true });
  await fs.mkdir(path.join(root, 'fresh'));
  await fs.writeFile(path.join(root, 'legacy.json'), '{"task_id":"legacy","current_step":1}');
  await fs.writeFile(path.join(root, '.another.tmp'), 'ignored');

  const changes = await changesSince(root, snap);
  const byLocation = Object.fromEntries(changes.map((c) => [c.location, c.kind]));
  expect(byLocation).toEqual({ busy: 'changed', doomed: 'removed', fresh: 'changed', 'legacy.json': 'changed' });
  expect(changes.every((c) => c.paths.length === 0)).toBe(true);
});

it('reports nothing when nothing changed', async () => {
  const snap = await snapshotRoot(root);
  expect(await changesSince(root, snap)).toEqual([]);
});

it('reports every task removed when the root itself was deleted or moved away', async () => {
  const snap = await snapshotRoot(root);
  const moved = `${root}-moved`;
  await fs.rename(root, moved);
  try {
    const changes = await changesSince(root, snap);
    expect(changes.map((c) => `${c.kind} ${c.location}`).sort()).toEqual([
      'removed busy',
      'removed doomed',
      'removed legacy.json',
      'removed quiet',
    ]);
  } finally {
    await fs.rename(moved, root);
  }
});
