import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeptTaskList } from '../../../electron/host/kept-task-list.js';
import { SerialQueue } from '../../../electron/host/serial-queue.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { SYNC_SLICE } from '../../../electron/store/directory-scan.js';
import type { CheckpointStore, KeepListed } from '../../../electron/store/store-types.js';
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

  it('checks the version files a slice at a time once the list is built, the event loop running between slices', async () => {
    const ids = Array.from({ length: SYNC_SLICE + 1 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => store.create(makeCheckpoint(id, 2))));
    // Answered at once, as a store checking on its own thread answers: each slice's promise settles with no I/O.
    let slices = 0;
    const checking = Object.assign(Object.create(store) as CheckpointStore, {
      fileProblems: async (entries: readonly unknown[]) => {
        slices += 1;
        return entries.map(() => []);
      },
    });
    const list = new KeptTaskList(root, checking, new SerialQueue());
    await list.built();
    const seenByTheLoop = await new Promise<number>((resolve) => setImmediate(() => resolve(slices)));
    // Without a turn between them, every slice ran before anything else could (a reply, a request): both here.
    expect(seenByTheLoop).toBeLessThan(2);
    await vi.waitFor(() => expect(slices).toBe(2));
  });

  it('answers a first screen, newest first, from the rows read so far while the rest is still being read', async () => {
    // Two slices of the store's listing: the build is held after the first, as a large directory's is while it reads.
    const ids = Array.from({ length: SYNC_SLICE + 20 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(
        ids.slice(i, i + 50).map((id, k) => {
          const cp = makeCheckpoint(id);
          // Later tasks were updated later, minute by minute.
          const at = new Date(Date.UTC(2026, 0, 1, 0, i + k)).toISOString();
          return store.create({ ...cp, run: { ...cp.run, started_at: at, updated_at: at } });
        }),
      );
    }
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let slices = 0;
    const listTasks = store.listTasks.bind(store) as <T>(keep: KeepListed<T>) => Promise<T[]>;
    const slow = Object.assign(Object.create(store) as CheckpointStore, {
      listTasks: (<T>(keep: KeepListed<T>) =>
        listTasks<T>(async (entries) => {
          if (slices++ > 0) await held;
          return keep(entries);
        })) as CheckpointStore['listTasks'],
    });
    const list = new KeptTaskList(root, slow, new SerialQueue());
    const whole = list.list();
    let wholeDone = false;
    void whole.then(() => (wholeDone = true));

    const first = await list.firstRows(5);
    // Chosen among the first slice's rows, the newest of those first: the whole list is not there yet.
    expect(first.map((t) => t.task_id)).toEqual(ids.slice(SYNC_SLICE - 5, SYNC_SLICE).reverse());
    expect(wholeDone).toBe(false);
    // More rows than have been read: the answer waits for the build, then is chosen from every task.
    const more = list.firstRows(SYNC_SLICE + 10);
    release();
    expect((await more).map((t) => t.task_id)).toEqual(ids.slice(10).reverse());
    expect(await whole).toHaveLength(ids.length);
    // Once built, from the whole list.
    expect((await list.firstRows(3)).map((t) => t.task_id)).toEqual(ids.slice(-3).reverse());
  });

  it('answers a first screen of a small directory with every task once the list is read', async () => {
    for (const id of ['b', 'a']) await store.create(makeCheckpoint(id));
    const list = new KeptTaskList(root, store, new SerialQueue());
    // Same update time: by task id.
    expect((await list.firstRows(100)).map((t) => t.task_id)).toEqual(['a', 'b']);
    expect(listings).toBe(1);
  });

  it('fails a first screen as the listing fails', async () => {
    const broken = Object.assign(Object.create(store) as CheckpointStore, {
      listTasks: (() => Promise.reject(new Error('the disk went away'))) as CheckpointStore['listTasks'],
    });
    const list = new KeptTaskList(root, broken, new SerialQueue());
    await expect(list.firstRows(10)).rejects.toThrow('the disk went away');
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
