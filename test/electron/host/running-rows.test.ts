/**
 * A runner killed outside the host changes no file, so the watcher never hears
 * of it: the host asks the rows it shows running again, and one whose lease
 * is no longer held is sent as a change, so every inspector open on the
 * directory shows the task stopped without being reloaded.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostEvent } from '../../../shared/api/contract.js';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { LEASE_TTL_ENV } from '../../../electron/store/lease-record.js';
import { openLangGraphSource } from '../../../electron/sources/langgraph/open-langgraph.js';
import { runStopped } from '../../support/langgraph-stopped-run.js';
import { recordingRunner, type RecordedAction } from '../../support/recording-runner.js';
import { trustAll } from '../../support/trust-all.js';
import { holdLease } from '../../support/hold-lease.js';
import type { HostRunner } from '../../../electron/host/host-service.js';

let root: string;
let service: HostService | null = null;
let holder: ChildProcess | null = null;
const events: HostEvent[] = [];
/** Leases the host read of the task, each a pass over the running rows once the list is built. */
let leaseReads = 0;

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-running-rows-')));
  events.length = 0;
  leaseReads = 0;
});
afterEach(async () => {
  holder?.kill('SIGKILL');
  holder = null;
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

function countingStore(dir: string): CheckpointStore {
  const store = openStore(dir);
  const readLease = store.readLease.bind(store);
  store.readLease = (taskId, opts) => {
    leaseReads++;
    return readLease(taskId, opts);
  };
  return store;
}

/** Open the host with batches that wait a minute for quiet: nothing below comes from the watcher. */
async function openHost(): Promise<HostService> {
  service = new HostService({ host: 'web', openStore: countingStore, watch: { quietMs: 60_000, maxDelayMs: 60_000, runningMs: 50 } });
  service.subscribe((e) => void events.push(e));
  await service.open(root);
  await service.watching();
  return service;
}

function nextChange(taskId: string): Promise<Extract<HostEvent, { type: 'task-changed' }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no change of ${taskId}; events: ${JSON.stringify(events.slice(-5))}`)), 20_000);
    const stop = service!.subscribe((e) => {
      if (e.type !== 'task-changed' || e.taskId !== taskId) return;
      clearTimeout(timer);
      stop();
      resolve(e);
    });
  });
}

/** Wait for `n` more reads of the lease (passes over the row), ten seconds at most. */
async function passes(n: number): Promise<void> {
  const from = leaseReads;
  const until = Date.now() + 10_000;
  while (leaseReads < from + n) {
    if (Date.now() > until) throw new Error(`the host read the lease ${leaseReads - from} times in 10 s, not ${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('rows shown running', () => {
  it('show the task interrupted once its runner is killed, with no file changed', { timeout: 40_000 }, async () => {
    await openStore(root).create(makeCheckpoint('driven'));
    holder = await holdLease(path.join(root, 'driven'));
    const host = await openHost();
    const row = async () => (await host.listTasks()).find((t) => t.task_id === 'driven');
    expect((await row())?.display_status).toBe('running');

    // Passes over a live runner's row send nothing.
    await passes(3);
    expect(events.filter((e) => e.type === 'task-changed')).toEqual([]);

    const changed = nextChange('driven');
    const killed = new Promise((resolve) => holder!.on('exit', resolve));
    holder.kill('SIGKILL');
    await killed;
    const event = await changed;
    // The task's standing changed, not its files: no version, the row as it shows now.
    expect(event.version).toBeNull();
    expect(event.summary?.display_status).toBe('interrupted');
    expect((await row())?.display_status).toBe('interrupted');
    expect((await host.getTask({ taskId: 'driven' })).summary.display_status).toBe('interrupted');

    // Once shown stopped, the row is asked no more.
    const reads = leaseReads;
    await new Promise((r) => setTimeout(r, 300));
    expect(leaseReads).toBe(reads);
  });

  it('are announced stopped by a listing that asks them again first, as by the pass', { timeout: 40_000 }, async () => {
    await openStore(root).create(makeCheckpoint('driven'));
    holder = await holdLease(path.join(root, 'driven'));
    // No pass before a minute: what finds the runner gone below is the listing.
    service = new HostService({ host: 'web', openStore: countingStore, watch: { quietMs: 60_000, maxDelayMs: 60_000, runningMs: 60_000 } });
    service.subscribe((e) => void events.push(e));
    await service.open(root);
    await service.watching();
    expect((await service.listTasks()).find((t) => t.task_id === 'driven')?.display_status).toBe('running');

    const changed = nextChange('driven');
    const killed = new Promise((resolve) => holder!.on('exit', resolve));
    holder.kill('SIGKILL');
    await killed;
    // An inspector's listing (its overview, a reload) reads the row again before any pass does.
    expect((await service.listTasks()).find((t) => t.task_id === 'driven')?.display_status).toBe('interrupted');
    const event = await changed;
    expect([event.version, event.summary?.display_status]).toEqual([null, 'interrupted']);
  });

  it(
    'show a LangGraph thread interrupted once its newest checkpoint is older than the lease time-to-live',
    { timeout: 90_000 },
    async () => {
      const file = path.join(root, 'runs.sqlite');
      runStopped('breakpoint', file);
      // The time-to-live set to end a few seconds from now, whenever the run above wrote its checkpoint.
      const source = await openLangGraphSource(file);
      const since = Date.parse((await source.readLease('breakpoint', { ttlMs: 3_600_000 })).info.since!);
      await source.close();
      const before = process.env[LEASE_TTL_ENV];
      // A few seconds to open the host and read the row while the thread is still young, on a loaded machine too.
      process.env[LEASE_TTL_ENV] = String(Date.now() - since + 8_000);
      try {
        service = new HostService({ host: 'web', runner: null, watch: { runningMs: 50 } });
        service.subscribe((e) => void events.push(e));
        await service.open(file);
        const row = async () => (await service!.listTasks()).find((t) => t.task_id === 'breakpoint');
        expect((await row())?.display_status).toBe('running');
        expect((await service.getTask({ taskId: 'breakpoint' })).lease).toEqual({
          held: true,
          owner: 'a LangGraph run',
          since: expect.any(String),
        });

        const event = await nextChange('breakpoint');
        expect(event.version).toBeNull();
        expect(event.summary?.display_status).toBe('interrupted');
        expect(Date.now()).toBeGreaterThanOrEqual(since + Number(process.env[LEASE_TTL_ENV]));
        expect((await row())?.display_status).toBe('interrupted');
      } finally {
        if (before === undefined) delete process.env[LEASE_TTL_ENV];
        else process.env[LEASE_TTL_ENV] = before;
      }
    },
  );

  it(
    'have a run in auto mode resumed once its runner died and nothing else took it up for a while; not a manual one',
    { timeout: 40_000 },
    async () => {
      const store = openStore(root);
      const agent = { name: 'checkpoint-demo' };
      await store.create(makeCheckpoint('auto-run', 3, { agent, recovery: { mode: 'auto', decisions: [], auto_attempts: 0 } }));
      await store.create(makeCheckpoint('manual-run', 3, { agent }));
      const autoHolder = await holdLease(path.join(root, 'auto-run'));
      holder = await holdLease(path.join(root, 'manual-run'));
      // The recovery the host asks for, with the tasks it names (the runner checks each whole: tested in cli-recovery).
      const asked: (readonly string[] | undefined)[] = [];
      const askedAt: number[] = [];
      const recorded: RecordedAction[] = [];
      const runner: HostRunner = {
        ...recordingRunner(recorded, { agentCode: true }),
        recoverInterrupted: async (_root, candidates) => {
          asked.push(candidates);
          askedAt.push(Date.now());
        },
      };
      service = new HostService({
        host: 'web',
        runner,
        trust: trustAll,
        openStore: countingStore,
        watch: { quietMs: 60_000, maxDelayMs: 60_000, runningMs: 50, recoverAfterMs: 400 },
      });
      service.subscribe((e) => void events.push(e));
      await service.open(root);
      await service.watching();
      // The recovery at open, of the rows that may need it (both still driven: the runner finds their leases held).
      await expect.poll(() => asked.length, { timeout: 10_000 }).toBe(1);

      const autoEnded = nextChange('auto-run');
      // When the host said the run stopped: the wait before the recovery starts then.
      let endedAt = 0;
      const stopTiming = service.subscribe((e) => {
        if (e.type === 'task-changed' && e.taskId === 'auto-run' && !endedAt) endedAt = Date.now();
      });
      const killed = new Promise((resolve) => autoHolder.on('exit', resolve));
      autoHolder.kill('SIGKILL');
      await killed;
      expect((await autoEnded).summary?.display_status).toBe('interrupted');
      stopTiming();
      await expect.poll(() => asked.length, { timeout: 10_000 }).toBe(2);
      // Left to whatever drove it for the wait first (400 ms, less a millisecond or two of timer granularity); then
      // this task alone.
      expect(askedAt[1] - endedAt).toBeGreaterThanOrEqual(398);
      expect(asked[1]).toEqual(['auto-run']);

      const manualEnded = nextChange('manual-run');
      holder.kill('SIGKILL');
      expect((await manualEnded).summary?.display_status).toBe('interrupted');
      await new Promise((r) => setTimeout(r, 1_000));
      expect(asked).toHaveLength(2);
    },
  );
});
