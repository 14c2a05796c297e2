/**
 * The listing of a PostgreSQL store reads each task's row alone: the
 * summary kept by every save (or, for a task too long to keep one, its head
 * and the deltas after it) and its lease entry, in one query; a history
 * chain is read in one query; and changes are announced after the commit,
 * with a catch-up for a notification that never went out.
 */
import { describe, expect, it, vi } from 'vitest';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { subscribePg } from '../../../../electron/store/postgres/pg-events.js';
import { LISTING_QUERY, LIST_PAGE_ROWS } from '../../../../electron/store/postgres/pg-reads.js';
import { CHANGES_CHANNEL, migrate, SCHEMA_VERSION } from '../../../../electron/store/postgres/pg-schema.js';
import { SYNC_SLICE } from '../../../../electron/store/directory-scan.js';
import { SUMMARY_MAX_ITEMS } from '../../../../electron/store/postgres/pg-summary.js';
import type { StoreChange } from '../../../../electron/store/store-types.js';
import { createDatabase, withClient } from '../../../support/postgres-cluster.js';
import { makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

const summaryOfRow = (url: string, taskId: string) =>
  withClient(
    url,
    async (c) =>
      (await c.query<{ summary: string | null }>(`SELECT summary FROM waystation_tasks WHERE task_id = $1`, [taskId])).rows[0].summary,
  );

describe('the listing of a PostgreSQL store', () => {
  it('reads the summary every save keeps, with the lease entry, and a long task from its head and deltas', async () => {
    const url = await createDatabase('summary');
    const store = openPostgresStore(url);
    try {
      const small = (await store.create(makeCheckpoint('small'))).checkpoint;
      const lease = await store.acquireLease('small', { owner: 'lister', heartbeatMs: 0 });
      await store.save('small', { expectedVersion: 1, checkpoint: { ...withoutVersion(small), phase: 'two' }, lease });
      const summary = JSON.parse((await summaryOfRow(url, 'small'))!) as Record<string, unknown>;
      expect(summary).toMatchObject({ task_id: 'small', version: 2, phase: 'two' });
      // Only the listing's fields and the overview's totals: no results, no run log.
      expect(Object.keys(summary.run as object).sort()).toEqual(['cost_usd', 'created_at', 'tokens_in', 'tokens_out', 'updated_at']);

      let long = (await store.create(makeCheckpoint('long', SUMMARY_MAX_ITEMS + 1))).checkpoint;
      for (let i = 2; i <= 4; i++)
        long = (await store.save('long', { expectedVersion: long.version, checkpoint: { ...withoutVersion(long), phase: `p${i}` } }))
          .checkpoint;
      expect(await summaryOfRow(url, 'long')).toBeNull();

      const reader = openPostgresStore(url);
      const listed = await reader.listTasks();
      await reader.close();
      expect(listed.map((t) => [t.task_id, t.checkpoint?.version, t.checkpoint?.phase, t.problems])).toEqual([
        ['long', 4, 'p4', []],
        ['small', 2, 'two', []],
      ]);
      expect(listed[1].lease?.owner).toMatch(/^lister/);
      expect(listed[0]).toMatchObject({ has_lease: false, lease: null });
      await lease.release();
    } finally {
      await store.close();
    }
  });

  it('lists more tasks than a page, a slice at a time, from one snapshot, and leaves its connection out of any transaction', async () => {
    const url = await createDatabase('pages');
    const store = openPostgresStore(url);
    try {
      const ids = Array.from({ length: LIST_PAGE_ROWS + 5 }, (_, i) => `t${String(i).padStart(5, '0')}`);
      for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => store.create(makeCheckpoint(id, 1))));
      const reader = openPostgresStore(url);
      const slices: number[] = [];
      let createdMeanwhile = false;
      const listed = await reader.listTasks(async (entries) => {
        slices.push(entries.length);
        if (!createdMeanwhile) {
          createdMeanwhile = true;
          // Committed by another connection after the listing began: not in this listing, which reads one snapshot.
          await store.create(makeCheckpoint('u-late', 1));
        }
        return entries.map((e) => e.task_id);
      });
      expect(listed).toEqual(ids);
      expect(Math.max(...slices)).toBeLessThanOrEqual(SYNC_SLICE);
      expect(slices.reduce((a, b) => a + b, 0)).toBe(ids.length);

      // A keep that fails fails the listing, and the connection goes back clean: the next listing sees the late task.
      await expect(
        reader.listTasks(() => {
          throw new Error('the caller gave up');
        }),
      ).rejects.toThrow('the caller gave up');
      const again = await reader.listTasks();
      expect(again.map((t) => t.task_id)).toEqual([...ids, 'u-late']);
      await reader.close();
    } finally {
      await store.close();
    }
  });

  it('reads 10,000 tasks in order through the index of that order, sorting nothing before the first row', async () => {
    const url = await createDatabase('order');
    const store = openPostgresStore(url);
    try {
      await store.init();
      const plan = await withClient(url, async (c) => {
        await c.query(
          `INSERT INTO waystation_tasks (task_id, last_version, head, head_version, summary, last_event_id)
           SELECT 'task-' || lpad(i::text, 6, '0'), 1, repeat('h', 1000), 1, repeat('s', 1000), 1 FROM generate_series(1, 10000) AS i`,
        );
        await c.query('ANALYZE waystation_tasks');
        return JSON.stringify((await c.query(`EXPLAIN (FORMAT JSON) ${LISTING_QUERY}`)).rows[0]);
      });
      expect(plan).toContain('"Index Name":"waystation_tasks_listing_order"');
      expect(plan).not.toContain('"Node Type":"Sort"');
    } finally {
      await store.close();
    }
  });

  it('migrated from schema 3: a head holding the newest version becomes the summary; a lagging one is read with its deltas', async () => {
    const url = await createDatabase('summary3');
    await withClient(url, (c) => migrate(c, 'test', 3));
    await withClient(url, async (c) => {
      const v1 = JSON.stringify({ ...makeCheckpoint('settled'), version: 1 });
      await c.query(`INSERT INTO waystation_tasks (task_id, last_version, head, head_version) VALUES ('settled', 1, $1, 1)`, [v1]);
      await c.query(
        `INSERT INTO waystation_versions (task_id, version, kind, body, bytes, source, updated_at, writer) VALUES ('settled', 1, 'full', $1, 1, '{"kind":"runtime"}', 'x', 'w')`,
        [v1],
      );
      expect(await migrate(c, 'test')).toEqual({ from: 3, to: SCHEMA_VERSION });
    });
    expect(JSON.parse((await summaryOfRow(url, 'settled'))!)).toMatchObject({ task_id: 'settled', version: 1 });
    await withClient(url, (c) => c.query(`UPDATE waystation_tasks SET summary = NULL`));
    const store = openPostgresStore(url);
    try {
      expect((await store.listTasks()).map((t) => [t.task_id, t.checkpoint?.version])).toEqual([['settled', 1]]);
    } finally {
      await store.close();
    }
  });
});

describe('the history chain', () => {
  it('is read whole in one query, and a chunk that is not JSON is still named as the walk names it', async () => {
    const url = await createDatabase('chain');
    const store = openPostgresStore(url);
    try {
      let cp = (await store.create(makeCheckpoint('t'), { appendHistory: [{ role: 'user', content: 'm0' }] })).checkpoint;
      for (let i = 1; i <= 40; i++)
        cp = (
          await store.save('t', {
            expectedVersion: cp.version,
            checkpoint: withoutVersion(cp),
            appendHistory: [{ role: 'assistant', content: `m${i}` }],
          })
        ).checkpoint;
      expect((await store.readHistory('t')).map((m) => m.content)).toEqual(Array.from({ length: 41 }, (_, i) => `m${i}`));
      expect((await store.readHistory('t', 11)).map((m) => m.content)).toEqual(Array.from({ length: 11 }, (_, i) => `m${i}`));
      const mark = { head: (await store.readVersion('t', 31)).history.head!, count: 31 };
      expect(await store.readHistoryAfter('t', undefined, mark)).toMatchObject({ from: 31 });
      expect((await store.readHistoryAfter('t', undefined, mark)).messages.map((m) => m.content)).toEqual(
        Array.from({ length: 10 }, (_, i) => `m${31 + i}`),
      );

      // A middle chunk overwritten with bytes that are not JSON: the walk reports it by its reference.
      const middle = (await store.readVersion('t', 21)).history.head!;
      await withClient(url, (c) => c.query(`UPDATE waystation_blobs SET bytes = '\\xff00'::bytea WHERE hex = $1`, [middle.slice(7, 71)]));
      await expect(store.readHistory('t')).rejects.toThrow(/do not hash to its name/);
    } finally {
      await store.close();
    }
  });
});

describe('change notifications', () => {
  it('a save is announced once it has committed, and a store closed right after it still announces it', async () => {
    const url = await createDatabase('announce');
    const watcher = openPostgresStore(url);
    const seen: StoreChange[] = [];
    try {
      const writer = openPostgresStore(url);
      const v1 = (await writer.create(makeCheckpoint('t'))).checkpoint;
      // No catch-up within the test: only the notification can deliver the save.
      const sub = await subscribePg(watcher.conn, (c) => seen.push(c), undefined, { catchUpMs: 600_000 });
      await writer.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' } });
      await writer.close();
      await vi.waitFor(() => expect(seen.flatMap((c) => c.events.filter((e) => e.type === 'version').map((e) => e.version))).toEqual([2]), {
        timeout: 5_000,
        interval: 20,
      });
      await sub.close();
    } finally {
      await watcher.close();
    }
  });

  it('saves close together are announced together: every version delivered once, in one notification after the first', async () => {
    const url = await createDatabase('coalesce');
    const watcher = openPostgresStore(url);
    const seen: StoreChange[] = [];
    const notifications: string[] = [];
    try {
      await withClient(url, async (listener) => {
        listener.on('notification', (n) => notifications.push(n.payload ?? ''));
        await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
        // An interval longer than the test: the create is announced at once, every save after it when the writer closes.
        const writer = openPostgresStore(url, { announceEveryMs: 60_000 });
        let cp = (await writer.create(makeCheckpoint('t'))).checkpoint;
        const sub = await subscribePg(watcher.conn, (c) => seen.push(c), undefined, { catchUpMs: 600_000 });
        const saves = 30;
        for (let i = 0; i < saves; i++)
          cp = (await writer.save('t', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: `p${i}` } })).checkpoint;
        await writer.close();
        const versions = () => seen.flatMap((c) => c.events.filter((e) => e.type === 'version').map((e) => e.version));
        await vi.waitFor(() => expect(versions()).toEqual(Array.from({ length: saves }, (_, i) => i + 2)), {
          timeout: 5_000,
          interval: 20,
        });
        // The listener's own connection has seen every notification the writer sent by now (they precede the last version's).
        await listener.query('SELECT 1');
        expect(notifications).toEqual(['t', 't']);
        await sub.close();
      });
    } finally {
      await watcher.close();
    }
  });

  it('a change committed without its notification (its writer died in between) is delivered by the catch-up, once', async () => {
    const url = await createDatabase('catchup');
    const store = openPostgresStore(url);
    const seen: StoreChange[] = [];
    try {
      await store.create(makeCheckpoint('t'));
      const sub = await subscribePg(store.conn, (c) => seen.push(c), undefined, { catchUpMs: 100 });
      // What a save's transaction commits, without the NOTIFY sent after it.
      await withClient(url, async (c) => {
        const { rows } = await c.query<{ id: string }>(
          `UPDATE waystation_tasks SET last_event_id = last_event_id + 1 WHERE task_id = 't' RETURNING last_event_id AS id`,
        );
        await c.query(`INSERT INTO waystation_events (task_id, id, body) VALUES ('t', $1, $2)`, [
          rows[0].id,
          JSON.stringify({ id: Number(rows[0].id), task_id: 't', type: 'note', at: '2026-01-01T00:00:00Z' }),
        ]);
      });
      await vi.waitFor(() => expect(seen.flatMap((c) => c.events.map((e) => e.type))).toEqual(['note']), { timeout: 5_000, interval: 50 });
      // A notified save after it is delivered at once, and nothing twice.
      const latest = (await store.getTask('t'))!.checkpoint!;
      await store.save('t', { expectedVersion: latest.version, checkpoint: withoutVersion(latest) });
      await vi.waitFor(() => expect(seen.flatMap((c) => c.events.map((e) => e.type))).toEqual(['note', 'version']), {
        timeout: 5_000,
        interval: 50,
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.flatMap((c) => c.events.map((e) => e.id))).toEqual([2, 3]);
      await sub.close();
    } finally {
      await store.close();
    }
  });
});
