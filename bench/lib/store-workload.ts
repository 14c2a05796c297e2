/**
 * The store workload of `bench/commit-compare.ts`, run in a child process
 * against the directory store of one source tree (this one, or an earlier
 * commit's checked out elsewhere), so two builds are timed by the same code
 * on the same machine in the same run.
 *
 * It uses only what every version of the store has had: `openStore(root)`,
 * `create`, `save` (with and without the task's lease), `getTask` and
 * `listTasks`. The lease comes from the store where it hands one out, else
 * from the runtime's lease module of that tree.
 *
 * Run: node bin/waystation-tsx.mjs bench/lib/store-workload.ts --tree DIR [--steps 200] [--tasks 2000]
 * Prints one JSON line: medians in milliseconds.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { freshCheckpoint } from './fresh-checkpoint.js';

interface StoreLike {
  create(cp: unknown): Promise<{ checkpoint: Record<string, unknown> }>;
  save(taskId: string, req: unknown): Promise<{ checkpoint: Record<string, unknown> }>;
  getTask(taskId: string): Promise<unknown>;
  listTasks(): Promise<unknown[]>;
  settle?(taskId: string): Promise<void>;
  acquireLease?(taskId: string, opts: unknown): Promise<LeaseLike>;
}
interface LeaseLike {
  release(): Promise<void>;
}

/** What one run measured, in milliseconds (medians). */
export interface StoreWorkloadResult {
  /** One step marked done with its result, no lease held (a whole version file each). */
  saveMs: number;
  /** The same under the task's lease (appended to a segment where the store does that). */
  leasedSaveMs: number;
  /** The latest version of a task of `steps` steps and as many versions, from a fresh store each time (`waystation show`). */
  getTaskMs: number;
  /** The same from one store that opened the task before (the host's task view, opened again). */
  getTaskAgainMs: number;
  /** Every task of a directory of `tasks` small tasks, each its first version alone. */
  listMs: number;
  /**
   * Every task of a directory of `tasks / 4` small tasks written the runtime's way: created, then saved under
   * the lease, so their later versions are records of a segment and checkpoint.json names the last of them.
   */
  listLeasedMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Saves of each kind made before the measured ones, in a task of their own. */
const WARM_UP_SAVES = 50;

/** Mark the steps done one save at a time; returns each save's time. */
async function drive(store: StoreLike, taskId: string, steps: number, lease: LeaseLike | undefined): Promise<number[]> {
  let cp = (await store.create(freshCheckpoint({ taskId, taskName: taskId, goal: 'bench', steps, at: new Date(0).toISOString() })))
    .checkpoint;
  const times: number[] = [];
  for (let i = 0; i < steps; i++) {
    const plan = (cp.plan as Record<string, unknown>[]).map((s, k) => (k === i ? { ...s, status: 'done', attempts: 1 } : s));
    const req = {
      expectedVersion: cp.version,
      checkpoint: { ...cp, plan, current_step: Math.min(i + 1, steps - 1), phase: `step ${i + 2}` },
      results: { [`s${i + 1}`]: { text: `result of step ${i + 1}`, n: i } },
      ...(lease ? { lease } : {}),
    };
    const t0 = process.hrtime.bigint();
    cp = (await store.save(taskId, req)).checkpoint;
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times;
}

async function leaseFor(tree: string, store: StoreLike, root: string, taskId: string): Promise<LeaseLike> {
  const opts = { owner: 'bench', heartbeatMs: 0 };
  if (store.acquireLease) return store.acquireLease(taskId, opts);
  const mod = (await import(pathToFileURL(path.join(tree, 'electron/runtime/lease.ts')).href)) as {
    acquireLease(taskDir: string, taskId: string, opts: unknown): Promise<LeaseLike>;
  };
  return mod.acquireLease(path.join(root, taskId), taskId, opts);
}

/** drive under the task's lease, as the runtime saves: the segment settled and the lease let go after. */
async function driveLeased(tree: string, store: StoreLike, root: string, taskId: string, steps: number): Promise<number[]> {
  const lease = await leaseFor(tree, store, root, taskId);
  try {
    return await drive(store, taskId, steps, lease);
  } finally {
    await store.settle?.(taskId);
    await lease.release();
  }
}

/** Run the workload against the store of `tree`. */
async function runStoreWorkload(tree: string, steps: number, tasks: number): Promise<StoreWorkloadResult> {
  const { openStore } = (await import(pathToFileURL(path.join(tree, 'electron/store/directory-store.ts')).href)) as {
    openStore(root: string): StoreLike;
  };
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-commit-bench-'));
  try {
    const store = openStore(root);
    // Not reported: the first saves of a process run before the JIT has compiled the save path (the start-up
    // bench measures a process's first steps), and a tree with more code to compile paid more for them.
    await drive(store, 'warm', WARM_UP_SAVES, undefined);
    await driveLeased(tree, store, root, 'warm-leased', WARM_UP_SAVES);
    const saves = await drive(store, 'plain', steps, undefined);
    const leased = await driveLeased(tree, store, root, 'leased', steps);
    const getTask: number[] = [];
    for (let i = 0; i < 15; i++) getTask.push(await time(() => openStore(root).getTask('plain')));
    const kept = openStore(root);
    await kept.getTask('plain');
    const getTaskAgain: number[] = [];
    for (let i = 0; i < 15; i++) getTaskAgain.push(await time(() => kept.getTask('plain')));

    const listRoot = path.join(root, 'listing');
    const lister = openStore(listRoot);
    for (let i = 0; i < tasks; i++) {
      await lister.create(freshCheckpoint({ taskId: `t${i}`, taskName: `t${i}`, goal: 'bench', steps: 5, at: new Date(0).toISOString() }));
    }
    const list: number[] = [];
    // A fresh store each time: what `waystation ls` and a host's first listing pay.
    for (let i = 0; i < 5; i++) list.push(await time(() => openStore(listRoot).listTasks()));

    const leasedRoot = path.join(root, 'leased-listing');
    const leasedLister = openStore(leasedRoot);
    for (let i = 0; i < Math.max(1, Math.floor(tasks / 4)); i++) await driveLeased(tree, leasedLister, leasedRoot, `r${i}`, 3);
    const listLeased: number[] = [];
    for (let i = 0; i < 5; i++) listLeased.push(await time(() => openStore(leasedRoot).listTasks()));
    return {
      saveMs: median(saves),
      leasedSaveMs: median(leased),
      getTaskMs: median(getTask),
      getTaskAgainMs: median(getTaskAgain),
      listMs: median(list),
      listLeasedMs: median(listLeased),
    };
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}

// Run as an entry point only (bench/commit-compare.ts starts it); the types above are what it imports.
const { values } = parseArgs({
  options: { tree: { type: 'string' }, steps: { type: 'string', default: '200' }, tasks: { type: 'string', default: '2000' } },
});
if (!values.tree) throw new Error('--tree DIR: the source tree whose store is measured');
const result = await runStoreWorkload(path.resolve(values.tree), Number(values.steps), Number(values.tasks));
process.stdout.write(`${JSON.stringify(result)}\n`);
