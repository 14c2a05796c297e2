import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { startFakePublishService } from '../../fakes/fake-publish-service.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { trustAll } from '../../support/trust-all.js';
import { HostService } from '../../../electron/host/host-service.js';
import { detectLocation } from '../../../electron/sources/detect-location.js';
import { dispatch } from '../../../shared/api/dispatch.js';
import { databaseWithBoth } from '../../support/langgraph-database.js';
import type { HostEvent } from '../../../shared/api/contract.js';
import { openPostgresStore } from '../../../electron/store/postgres/postgres-store.js';
import { createDatabase, TEST_PASSWORD, withClient } from '../../support/postgres-cluster.js';
import { makeCheckpoint, withoutVersion } from '../store/store-test-helpers.js';
import { SYNC_SLICE } from '../../../electron/store/directory-scan.js';
import type { KeepListed } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';

useOfflineWorkers();

const slowAgent = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fakes/slow-agent.ts');

describe('the host over a PostgreSQL store', () => {
  it('lists the database once when it opens it, and answers the first listing from that', async () => {
    const url = await createDatabase('hostonce');
    const writer = openPostgresStore(url);
    await writer.create(makeCheckpoint('a'));
    await writer.create(makeCheckpoint('b'));
    await writer.close();
    let listings = 0;
    const service = new HostService({
      host: 'web',
      runner: null,
      openStore: (location) => {
        const store = openPostgresStore(location);
        const list = store.listTasks.bind(store) as (keep?: unknown) => Promise<unknown>;
        (store as { listTasks: unknown }).listTasks = (keep?: unknown) => {
          listings++;
          return list(keep);
        };
        return store;
      },
    });
    try {
      await service.open(url);
      expect((await service.listTasks()).map((t) => t.task_id)).toEqual(['a', 'b']);
      expect(listings).toBe(1);
    } finally {
      await service.close();
    }
  });

  it('opens once the first rows are read, and keeps a save made while the rest of the list is still being read', async () => {
    const url = await createDatabase('hostduring');
    const writer = openPostgresStore(url);
    const ids = Array.from({ length: SYNC_SLICE + 10 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => writer.create(makeCheckpoint(id))));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const service = new HostService({
      host: 'web',
      runner: null,
      openStore: (location) => {
        const store = openPostgresStore(location);
        const list = store.listTasks.bind(store) as <T>(keep: KeepListed<T>) => Promise<T[]>;
        let slices = 0;
        // The listing is held after its first slice, as a large database's is while the host already serves.
        (store as { listTasks: unknown }).listTasks = <T>(keep: KeepListed<T>) =>
          list<T>(async (entries) => {
            if (slices++ > 0) await held;
            return keep(entries);
          });
        return store;
      },
    });
    try {
      await service.open(url);
      const first = await service.listTasks({ limit: 5 });
      expect(first).toHaveLength(5);
      const seen: HostEvent[] = [];
      service.subscribe((e) => seen.push(e));
      // The last task, in the slice not read yet: saved before the listing gets there.
      const last = ids[ids.length - 1];
      const v1 = (await writer.getTask(last))!.checkpoint!;
      await writer.save(last, { expectedVersion: 1, checkpoint: { ...withoutVersion(v1 as Checkpoint), phase: 'saved meanwhile' } });
      // And a task made after that: delivered by the subscription, which was up before the listing began.
      await writer.create(makeCheckpoint('u-new'));
      release();
      await vi.waitFor(
        async () => {
          const rows = await service.listTasks({});
          expect(rows.find((t) => t.task_id === last)?.phase).toBe('saved meanwhile');
          expect(rows.map((t) => t.task_id)).toContain('u-new');
        },
        { timeout: 10_000, interval: 50 },
      );
      await vi.waitFor(() => expect(seen.some((e) => e.type === 'task-changed' && e.taskId === 'u-new')).toBe(true), {
        timeout: 10_000,
        interval: 50,
      });
    } finally {
      release();
      await service.close();
      await writer.close();
    }
  });

  it('fails the open when the listing fails, and leaves no subscription behind', async () => {
    const url = await createDatabase('hostfail');
    const writer = openPostgresStore(url);
    await writer.create(makeCheckpoint('a'));
    await writer.close();
    const service = new HostService({
      host: 'web',
      runner: null,
      openStore: (location) => {
        const store = openPostgresStore(location);
        (store as { listTasks: unknown }).listTasks = () => Promise.reject(new Error('the listing broke'));
        return store;
      },
    });
    const database = new URL(url).pathname.slice(1);
    const listeners = () =>
      withClient(
        url,
        async (c) =>
          (
            await c.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'`, [
              database,
            ])
          ).rows[0].n,
      );
    try {
      await expect(service.open(url)).rejects.toThrow('the listing broke');
      // The subscription the open started beside the listing is closed with it: no connection keeps listening.
      await vi.waitFor(async () => expect(await listeners()).toBe('0'), { timeout: 5_000, interval: 50 });
      await expect(service.listTasks({})).rejects.toThrow();
    } finally {
      await service.close();
    }
  });

  it('lists the tasks, names the database without its password, and sees another runner’s saves live', async () => {
    const url = await createDatabase('host');
    const runner = openPostgresStore(url);
    await runner.create(makeCheckpoint('before'));
    const service = new HostService({ host: 'web', runner: null });
    try {
      const info = await service.open(url);
      expect(info.root).toBe(url.replace(`:${TEST_PASSWORD}`, ''));
      expect(JSON.stringify(info)).not.toContain(TEST_PASSWORD);
      expect((await service.listTasks()).map((t) => t.task_id)).toEqual(['before']);

      const seen: HostEvent[] = [];
      service.subscribe((e) => seen.push(e));
      const v1 = (await runner.create(makeCheckpoint('live'))).checkpoint;
      await runner.save('live', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' } });
      await vi.waitFor(
        () => {
          const versions = seen
            .filter((e) => e.type === 'task-changed' && e.taskId === 'live')
            .map((e) => (e as { version: number | null }).version);
          expect(versions).toContain(2);
        },
        { timeout: 10_000, interval: 50 },
      );
      const events = seen
        .filter((e) => e.type === 'task-event' && e.taskId === 'live')
        .map((e) => (e as { event: { id: number } }).event.id);
      expect(events).toEqual([...new Set(events)].sort((a, b) => a - b));
      expect(events).toContain(2);
      expect((await service.listTasks()).map((t) => t.task_id)).toEqual(['before', 'live']);
    } finally {
      await service.close();
      await runner.close();
    }
  });

  it('stops a task another runner drives against the database, at its next step', async () => {
    const url = await createDatabase('hoststop');
    const publish = await startFakePublishService();
    const store = openPostgresStore(url);
    const service = new HostService({ host: 'web', runner: createHostRunner({ env: { ...process.env } }), trust: trustAll });
    try {
      // The run is another process's: a worker started by a runner of its own, as on another machine.
      const run = new Runner({ root: url, actor: 'ci' }).startRun({
        agent: slowAgent,
        taskId: 'slow',
        mode: 'auto',
        options: { stepMs: 600, publishUrl: publish.url },
      });
      for (let i = 0; ; i++) {
        const started = (await store.readEvents('slow').catch(() => [])).some((e) => e.type === 'step-start');
        if (started && (await store.readLease('slow')).info.held) break;
        if (i > 1200) throw new Error('the task never started');
        await sleep(25);
      }
      await service.open(url);
      const result = await service.stopTask({ taskId: 'slow', by: 'grace', reason: 'wrong input' });
      expect(JSON.stringify(result)).not.toContain(TEST_PASSWORD);
      expect((await run).stopped).toBe(true);
      const cp = (await store.getTask('slow'))!.checkpoint!;
      expect(cp.recovery.stopped).toMatchObject({ by: 'grace', reason: 'wrong input' });
      expect((await store.readLease('slow')).info.held).toBe(false);
    } finally {
      await service.close();
      await store.close();
      await publish.close();
    }
  }, 60_000);

  it('opens a database named by the app (openDirectory) on the desktop, keeps it out of the recent folders, and the web host refuses one', async () => {
    const url = await createDatabase('hostopen');
    const writer = openPostgresStore(url);
    await writer.create(makeCheckpoint('t1'));
    await writer.close();
    const remembered: string[] = [];
    const desktop = new HostService({
      host: 'desktop',
      runner: null,
      recent: { list: () => [...remembered], readOnly: () => [], remember: async (root) => void remembered.push(root) },
    });
    const web = new HostService({ host: 'web', runner: null });
    try {
      const info = await desktop.openDirectory({ path: url });
      expect(info.root).toBe(url.replace(`:${TEST_PASSWORD}`, ''));
      expect((await desktop.listTasks()).map((t) => t.task_id)).toEqual(['t1']);
      expect(remembered).toEqual([]);

      const other = await createDatabase('hostother');
      const init = openPostgresStore(other);
      await init.prepareForWrites();
      await init.close();
      await web.open(other);
      // The same database again is fine; another one would widen what the web host's token opens.
      expect((await web.openDirectory({ path: other })).root).toBe(other.replace(`:${TEST_PASSWORD}`, ''));
      const refused = await web.openDirectory({ path: url }).then(
        () => null,
        (err: unknown) => err as Error,
      );
      expect(refused?.message).toMatch(/this web host serves .* only; start `waystation serve postgres:\/\/postgres@/);
      expect(refused?.message).not.toContain(TEST_PASSWORD);
    } finally {
      await desktop.close();
      await web.close();
    }
  });
  it('sums the overview from the rows of the list: a row’s summary holds the run’s totals, and only a row written without them is read whole', async () => {
    const url = await createDatabase('hostoverview');
    const writer = openPostgresStore(url);
    const timed = (
      taskId: string,
      steps: number,
      run: { tokens_in: number; tokens_out: number; cost_usd: number },
      slow: Record<number, number>,
    ) => {
      const cp = makeCheckpoint(taskId, steps);
      return {
        ...cp,
        plan: cp.plan.map((s, i) => (slow[i] !== undefined ? { ...s, status: 'done' as const, elapsed_ms: slow[i] } : s)),
        run: { ...cp.run, ...run },
      };
    };
    await writer.create(timed('a', 3, { tokens_in: 100, tokens_out: 10, cost_usd: 0.5 }, { 0: 3000, 1: 50 }));
    await writer.create(timed('b', 3, { tokens_in: 20, tokens_out: 2, cost_usd: 0.25 }, { 2: 9000 }));
    // Too long for a summary (pg-summary.ts): the listing reads it from its head, whole.
    await writer.create(timed('long', 400, { tokens_in: 1, tokens_out: 1, cost_usd: 0 }, { 399: 5000 }));
    // A row as a build before the totals wrote it: its summary without them.
    await writer.create(timed('older', 3, { tokens_in: 7, tokens_out: 7, cost_usd: 0 }, { 1: 800 }));
    await writer.close();
    await withClient(url, async (c) => {
      const { rows } = await c.query<{ summary: string | null }>(`SELECT summary FROM waystation_tasks WHERE task_id = $1`, ['long']);
      expect(rows[0].summary).toBeNull();
      await c.query(
        `UPDATE waystation_tasks SET summary = (summary::jsonb #- '{run,tokens_in}' #- '{run,tokens_out}' #- '{run,cost_usd}')::text WHERE task_id = 'older'`,
      );
    });
    const opened: string[] = [];
    const service = new HostService({
      host: 'web',
      runner: null,
      openStore: (location) => {
        const store = openPostgresStore(location);
        const getTask = store.getTask.bind(store);
        store.getTask = (taskId) => (opened.push(taskId), getTask(taskId));
        return store;
      },
    });
    try {
      await service.open(url);
      const overview = await service.getOverview();
      expect(opened).toEqual(['older']);
      expect(overview).toMatchObject({ tasks_read: 4, tasks_total: 4, tokens_in: 128, tokens_out: 20, cost_usd: 0.75 });
      expect(overview.slowest_steps.map((s) => [s.task_id, s.elapsed_ms])).toEqual([
        ['b', 9000],
        ['long', 5000],
        ['a', 3000],
        ['older', 800],
        ['a', 50],
      ]);
    } finally {
      await service.close();
    }
  });
});

describe('the host over a database that also holds LangGraph’s checkpointer tables', () => {
  it('opens it as the Waystation store and says through the API that its LangGraph threads are not shown; a store of its own says nothing of LangGraph', async () => {
    const both = await databaseWithBoth();
    const writer = openPostgresStore(both);
    await writer.create(makeCheckpoint('t1'));
    await writer.close();
    const plain = await createDatabase('hostplain');
    const init = openPostgresStore(plain);
    await init.create(makeCheckpoint('t2'));
    await init.close();
    // The desktop app opens it with Open database…; `serve` opens it when it starts, with what it detected.
    const desktop = new HostService({ host: 'desktop', runner: null });
    const web = new HostService({ host: 'web', runner: null });
    try {
      // Answers as they cross the API, checked against the contract.
      const opened = await dispatch(desktop, 'openDirectory', { path: both }, true);
      expect(opened).toMatchObject({ root: both.replace(`:${TEST_PASSWORD}`, ''), also_holds_langgraph: true });
      expect(await dispatch(desktop, 'getDirectory', {}, true)).toMatchObject({ also_holds_langgraph: true });
      expect((await desktop.listTasks()).map((t) => t.task_id)).toEqual(['t1']);
      await web.open(both, { detected: await detectLocation(both) });
      expect(await dispatch(web, 'getDirectory', {}, true)).toMatchObject({ also_holds_langgraph: true });

      // Another database opened in its place: the note was that database's.
      expect(await dispatch(desktop, 'openDirectory', { path: plain }, true)).toMatchObject({ also_holds_langgraph: false });
      expect(await dispatch(desktop, 'getDirectory', {}, true)).toMatchObject({ also_holds_langgraph: false });
    } finally {
      await desktop.close();
      await web.close();
    }
  });
});
