import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeptTaskList } from '../../../electron/host/kept-task-list.js';
import { SerialQueue } from '../../../electron/host/serial-queue.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

let root: string;
let listings: number;
let store: CheckpointStore;

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-kept-')));
  listings = 0;
  const real = openStore(root);
  const listTasks = real.listTasks.bind(real);
  store = Object.assign(Object.create(real) as CheckpointStore, {
    listTasks: ((...args: Parameters<CheckpointStore['listTasks']>) => {
      listings += 1;
      return listTasks(...args);
    }) as CheckpointStore['listTasks'],
  });
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('the kept task list', () => {
  it('is built from one listing, shared by the listings asked for while it is built', async () => {
    for (const id of ['b', 'a']) await store.create(makeCheckpoint(id));
    const list = new KeptTaskList(root, store, new SerialQueue());
    const [first, second] = await Promise.all([list.list(), list.list()]);
    expect(first.map((t) => t.task_id)).toEqual(['a', 'b']);
    expect(second.map((t) => t.task_id)).toEqual(['a', 'b']);
    expect(await list.list()).toHaveLength(2);
    expect(listings).toBe(1);
    expect(list.locations.get('a')).toBe('a');
  });

  it('takes in a task that appeared and drops one that went away, in task id order, without listing again', async () => {
    await store.create(makeCheckpoint('m'));
    const list = new KeptTaskList(root, store, new SerialQueue());
    await list.built();
    await store.create(makeCheckpoint('c'));
    await list.apply('c', await store.getTask('c'));
    expect((await list.list()).map((t) => t.task_id)).toEqual(['c', 'm']);
    await fs.rm(path.join(root, 'm'), { recursive: true });
    await list.apply('m', null);
    expect((await list.list()).map((t) => t.task_id)).toEqual(['c']);
    expect(listings).toBe(1);
  });

  it('gives the listing as JSON text in pieces, the very text of the whole listing, for hundreds of tasks and for none', async () => {
    const empty = new KeptTaskList(root, store, new SerialQueue());
    expect([...(await empty.listingsJson())].join('')).toBe('[]');
    // More tasks than one piece holds, so the pieces are joined where one ends and the next begins.
    const ids = Array.from({ length: 300 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => store.create(makeCheckpoint(id, 2))));
    const list = new KeptTaskList(root, store, new SerialQueue());
    const pieces = [...(await list.listingsJson())];
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(JSON.stringify(await list.listings()));
    expect((JSON.parse(pieces.join('')) as { task_id: string }[]).map((t) => t.task_id)).toEqual(ids);
  });

  it("serves each task's steps with its listing, as `waystation ls --json` prints them", async () => {
    await store.create(makeCheckpoint('t', 2));
    const list = new KeptTaskList(root, store, new SerialQueue());
    const [listing] = await list.listings();
    expect(listing.plan.map((s) => s.status)).toEqual(['pending', 'pending']);
    expect(listing.plan).toHaveLength(2);
    expect(listing.task_id).toBe('t');
  });

  it('changes nothing for a change seen before the list was first built', async () => {
    const list = new KeptTaskList(root, store, new SerialQueue());
    await store.create(makeCheckpoint('early'));
    await list.apply('early', await store.getTask('early'));
    expect(list.has('early')).toBe(false);
    expect((await list.list()).map((t) => t.task_id)).toEqual(['early']);
  });
});
