/**
 * The host's kept task list follows tasks appearing and going away by reading
 * those tasks alone: the directory is listed once, at open, however many
 * tasks it holds, and the list stays exactly what `waystation ls --json` prints.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import type { HostEvent } from '../../../shared/api/contract.js';
import { runCli } from '../../../electron/cli/main.js';
import { HostService } from '../../../electron/host/host-service.js';
import { acquireLease } from '../../../electron/store/file-lease.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { makeCheckpoint, withoutVersion } from '../store/store-test-helpers.js';

const MANY = 150;

let root: string;
let service: HostService | null = null;
let events: HostEvent[] = [];
/** What the host asked of its store since the last reset. */
let reads: { listings: number; tasks: string[] };

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-kept-list-')));
  events = [];
  reads = { listings: 0, tasks: [] };
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

/** The real store, counting the listings and the single-task reads made through it. */
function countingStore(dir: string): CheckpointStore {
  const store = openStore(dir);
  const listTasks = store.listTasks.bind(store);
  const getTask = store.getTask.bind(store);
  store.listTasks = ((...args: Parameters<typeof listTasks>) => {
    reads.listings++;
    return listTasks(...args);
  }) as CheckpointStore['listTasks'];
  store.getTask = async (taskId: string) => {
    reads.tasks.push(taskId);
    return getTask(taskId);
  };
  return store;
}

async function open(): Promise<HostService> {
  service = new HostService({ host: 'web', openStore: countingStore, watch: { quietMs: 30, maxDelayMs: 150 } });
  service.subscribe((e) => void events.push(e));
  await service.open(root);
  return service;
}

/** Wait for an event `predicate` accepts among those from index `from` on (all by default). */
function until(predicate: (e: HostEvent) => boolean, what: string, from = 0): Promise<void> {
  return new Promise((resolve, reject) => {
    if (events.slice(from).some(predicate)) return resolve();
    const timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}; got ${JSON.stringify(events.slice(-5))}`)), 20_000);
    const stop = service!.subscribe((e) => {
      if (!predicate(e)) return;
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}

async function lsJson(dir = root): Promise<unknown> {
  let stdout = '';
  await runCli(['ls', dir, '--json'], { out: (s) => (stdout += s), err: () => {}, color: false });
  return JSON.parse(stdout);
}

/** A one-shot gate: `reached` once something arrives at it, which then waits for `open()`. */
function gate() {
  let open!: () => void;
  let arrive!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  return { opened, reached, open, arrive };
}

/** The gate the next single-task read of a gatedStore stops at, if any. */
let nextRead: ReturnType<typeof gate> | null = null;

/** The real store, whose next single-task read waits at `nextRead` when one is set. */
function gatedStore(dir: string): CheckpointStore {
  const store = openStore(dir);
  const getTask = store.getTask.bind(store);
  store.getTask = async (taskId: string) => {
    const at = nextRead;
    nextRead = null;
    if (at) {
      at.arrive();
      await at.opened;
    }
    return getTask(taskId);
  };
  return store;
}

const listed = async () => JSON.parse(JSON.stringify(await service!.listTaskListings())) as unknown;

describe('the kept task list', () => {
  it(`patches in a task that appears and drops one that goes away among ${MANY}, reading only those`, async () => {
    const writer = openStore(root);
    for (let i = 0; i < MANY; i++) await writer.create(makeCheckpoint(`task-${String(i).padStart(4, '0')}`));
    await open();
    expect((await service!.listTasks()).length).toBe(MANY);
    expect(reads.listings).toBe(1);
    await service!.settled();
    reads = { listings: 0, tasks: [] };

    // Sorted into the middle of the list, as the store lists it.
    await writer.create(makeCheckpoint('task-0042a'));
    await until((e) => e.type === 'task-changed' && e.taskId === 'task-0042a', 'the new task');
    await service!.settled();
    expect(await listed()).toEqual(await lsJson());
    expect(reads.listings).toBe(0);
    expect(new Set(reads.tasks)).toEqual(new Set(['task-0042a']));

    reads = { listings: 0, tasks: [] };
    await fs.rm(path.join(root, 'task-0100'), { recursive: true });
    await until((e) => e.type === 'task-removed' && e.taskId === 'task-0100', 'the removal');
    await service!.settled();
    const after = (await service!.listTasks()).map((t) => t.task_id);
    expect(after).toHaveLength(MANY);
    expect(after).not.toContain('task-0100');
    expect(await listed()).toEqual(await lsJson());
    expect(reads.listings).toBe(0);
    expect(new Set(reads.tasks)).toEqual(new Set(['task-0100']));
  }, 60_000);

  it('shows the root file a removed folder of the same id was hiding, and hides it again when the folder returns', async () => {
    const writer = openStore(root);
    await writer.create(makeCheckpoint('other'));
    await writer.create(makeCheckpoint('dup'));
    await fs.writeFile(path.join(root, 'dup.json'), JSON.stringify({ task_id: 'dup', current_step: 1, total_steps: 2, results: { a: 1 } }));
    await open();
    const locationOf = async () => (await service!.listTasks()).filter((t) => t.task_id === 'dup').map((t) => t.location);
    expect(await locationOf()).toEqual(['dup']);
    await service!.settled();

    const aside = path.join(os.tmpdir(), `${path.basename(root)}-dup`);
    let mark = events.length;
    await fs.rename(path.join(root, 'dup'), aside);
    // Task dup is still there, now read from dup.json: a change of the task, not its removal.
    await until((e) => e.type === 'task-changed' && e.taskId === 'dup', 'the folder going away', mark);
    await service!.settled();
    expect(await locationOf()).toEqual(['dup.json']);
    expect(await listed()).toEqual(await lsJson());

    mark = events.length;
    await fs.rename(aside, path.join(root, 'dup'));
    await until((e) => e.type === 'task-changed' && e.taskId === 'dup', 'the folder coming back', mark);
    await service!.settled();
    expect(await locationOf()).toEqual(['dup']);
    expect(await listed()).toEqual(await lsJson());
    expect(reads.listings).toBe(1);
  }, 60_000);

  it('shows how a run ended once its lease is released, before the watcher reports its last save', async () => {
    const writer = openStore(root);
    const created = await writer.create(makeCheckpoint('driven'));
    const lease = await acquireLease(path.join(root, 'driven'), 'driven', { owner: 'a runner', heartbeatMs: 0 });
    // Batches wait ten seconds for quiet: what the list shows below comes from the listing alone.
    service = new HostService({ host: 'web', openStore: countingStore, watch: { quietMs: 10_000, maxDelayMs: 10_000 } });
    await service.open(root);
    await service.watching();
    const statusOf = async () => (await service!.listTasks()).find((t) => t.task_id === 'driven')?.display_status;
    expect(await statusOf()).toBe('running');

    // The runner's last save, then its lease released, as a run that finishes does.
    const { version: _v, ...last } = created.checkpoint;
    const plan = last.plan.map((s) => ({ ...s, status: 'done' as const, attempts: 1 }));
    await writer.save('driven', {
      expectedVersion: created.checkpoint.version,
      checkpoint: { ...last, status: 'done', plan, current_step: plan.length },
    });
    await lease.release();
    reads = { listings: 0, tasks: [] };
    expect(await statusOf()).toBe('done');
    expect(reads).toEqual({ listings: 0, tasks: ['driven'] });
  }, 30_000);

  it('stays what `ls --json` prints through any run of tasks written, saved, broken, removed and written anew', async () => {
    const ids = ['a', 'b', 'c'] as const;
    const change = fc.record({
      kind: fc.constantFrom('create', 'save', 'break', 'remove', 'article-file', 'remove-article-file'),
      id: fc.constantFrom(...ids),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 6 }), async (changes) => {
        const dir = path.join(root, `run-${run++}`);
        await fs.mkdir(dir);
        const writer = openStore(dir);
        await writer.create(makeCheckpoint('a'));
        service = new HostService({ host: 'web', openStore: (d) => openStore(d), watch: { quietMs: 20, maxDelayMs: 100 } });
        service.subscribe((e) => void events.push(e));
        await service.open(dir);
        await service.watching();
        try {
          for (const c of changes) {
            const folder = path.join(dir, c.id);
            const exists = (p: string) =>
              fs.stat(p).then(
                () => true,
                () => false,
              );
            const there = await exists(folder);
            const articleFile = path.join(dir, `${c.id}.json`);
            if (c.kind === 'create' && !there) await writer.create(makeCheckpoint(c.id));
            else if (c.kind === 'save' && there) {
              const cp = (await writer.getTask(c.id))?.checkpoint;
              if (!cp) continue;
              await writer.save(c.id, {
                expectedVersion: cp.version,
                checkpoint: { ...withoutVersion(cp), phase: `phase ${events.length}` },
              });
            } else if (c.kind === 'break' && there) await fs.writeFile(path.join(folder, 'checkpoint.json'), '{"torn');
            else if (c.kind === 'remove' && there) await fs.rm(folder, { recursive: true });
            else if (c.kind === 'article-file')
              await fs.writeFile(articleFile, JSON.stringify({ task_id: c.id, current_step: 1, total_steps: 2, note: events.length }));
            else if (c.kind === 'remove-article-file' && (await exists(articleFile))) await fs.rm(articleFile);
            else continue;
            // The list follows the watcher's batches: it comes to what `ls --json` prints.
            await vi.waitFor(
              async () => {
                await service!.settled();
                expect(await listed(), `after ${c.kind} ${c.id}`).toEqual(await lsJson(dir));
              },
              { timeout: 15_000, interval: 50 },
            );
          }
        } finally {
          await service.close();
          service = null;
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);

  it('shows a task drifted as soon as an artifact it recorded outside its folder changes, without a listing', async () => {
    const text = '# Summary\n\nFirst.\n';
    const file = path.join(root, 'outputs', 'sum', 'deep', 'a.summary.md');
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, text);
    const artifact = {
      type: 'file',
      path: 'outputs/sum/deep/a.summary.md',
      sha256: createHash('sha256').update(text).digest('hex'),
      size: Buffer.byteLength(text),
    };
    await openStore(root).create(makeCheckpoint('sum', 2, { status: 'done', artifacts: [artifact] }));
    await openStore(root).create(makeCheckpoint('other', 2, { status: 'done' }));
    const host = await open();
    expect((await host.listTasks()).map((t) => [t.task_id, t.display_status])).toEqual([
      ['other', 'done'],
      ['sum', 'done'],
    ]);
    const drifted = (from: number) =>
      until((e) => e.type === 'task-changed' && e.taskId === 'sum' && e.summary?.display_status === 'drifted', 'sum, drifted', from);
    const restored = (from: number) =>
      until((e) => e.type === 'task-changed' && e.taskId === 'sum' && e.summary?.display_status === 'done', 'sum, done again', from);
    const listings = reads.listings;
    let from = events.length;
    await fs.appendFile(file, 'Edited by hand.\n');
    await drifted(from);
    from = events.length;
    await fs.writeFile(file, text);
    await restored(from);
    // Its whole folder removed, and made again with the file as recorded: still followed.
    from = events.length;
    await fs.rm(path.join(root, 'outputs', 'sum'), { recursive: true });
    await drifted(from);
    from = events.length;
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, text);
    await restored(from);
    // The folder made in its place is watched in turn.
    from = events.length;
    await fs.appendFile(file, 'Edited again.\n');
    await drifted(from);
    // Read alone: no listing, and no other task.
    expect(reads.listings).toBe(listings);
    expect(events.filter((e) => e.type === 'task-changed' && e.taskId === 'other')).toEqual([]);
  });

  it('keeps what a watcher batch did to a row while a listing summarized that row again', async () => {
    const writer = openStore(root);
    await writer.create(makeCheckpoint('driven'));
    const lease = await acquireLease(path.join(root, 'driven'), 'driven', { owner: 'a runner', heartbeatMs: 0 });
    service = new HostService({ host: 'web', openStore: gatedStore, watch: { quietMs: 1_000, maxDelayMs: 1_000 } });
    service.subscribe((e) => void events.push(e));
    await service.open(root);
    await service.watching();
    expect((await service.listTasks()).map((t) => t.display_status)).toEqual(['running']);

    // The lease is gone, so the listing reads the task again; that read waits at the gate.
    await lease.release();
    const read = (nextRead = gate());
    const listing = service.listTasks();
    await read.reached;
    // Meanwhile the task goes away, and the watcher's batch drops its row.
    await fs.rm(path.join(root, 'driven'), { recursive: true });
    await until((e) => e.type === 'task-removed' && e.taskId === 'driven', 'the removal');
    read.open();
    expect(await listing).toEqual([]);
    expect(await service.listTasks()).toEqual([]);
  }, 30_000);
});
