/**
 * What the host catches up on once its watcher finishes walking the tree:
 * every task folder or root file that changed after the snapshot, and nothing else.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { changesSince, snapshotRoot } from '../../../electron/host/root-snapshot.js';

let root: string;

const line = (id: number) => JSON.stringify({ id, task_id: 'x', type: 'version', at: '2026-01-01T00:00:00Z' }) + '\n';

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

it('seeds the last event id of each task folder', async () => {
  const seeded = new Map<string, number>();
  const snap = await snapshotRoot(root, seeded);
  expect(Object.fromEntries(seeded)).toEqual({ quiet: 2, busy: 2, doomed: 2 });
  expect([...snap.entries.keys()].sort()).toEqual(['busy', 'doomed', 'legacy.json', 'quiet']);
});

it('reports new events, new and removed tasks and rewritten root files, but not quiet ones', async () => {
  const snap = await snapshotRoot(root, new Map());
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
  const snap = await snapshotRoot(root, new Map());
  expect(await changesSince(root, snap)).toEqual([]);
});
