/**
 * The task row's head, the checkpoint a listing shows, is not rewritten by
 * every save: it is brought up to date at a full snapshot, every
 * HEAD_EVERY versions and when the lease is let go, and readers apply the
 * deltas after it. Whatever it lags by, the listing and getTask show the
 * newest version, and a resumed writer continues from it.
 */
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { HEAD_DELTA_RATIO, HEAD_EVERY } from '../../../../electron/store/postgres/pg-writes.js';
import { createDatabase, withClient } from '../../../support/postgres-cluster.js';
import { makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

async function headRow(url: string, taskId: string): Promise<{ head_version: number; last_version: number }> {
  return withClient(
    url,
    async (c) =>
      (
        await c.query<{ head_version: number; last_version: number }>(
          `SELECT head_version, last_version FROM waystation_tasks WHERE task_id = $1`,
          [taskId],
        )
      ).rows[0],
  );
}

describe('the head of a task row', () => {
  it('lags by fewer than HEAD_EVERY versions while a runner saves, is read as the newest version, and is brought up to date by settle', async () => {
    const url = await createDatabase('head');
    const store = openPostgresStore(url);
    let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const lease = await store.acquireLease('t1', { owner: 'runner', heartbeatMs: 0 });
    const lags: number[] = [];
    for (let i = 2; i <= HEAD_EVERY * 2 + 5; i++) {
      cp = (await store.save('t1', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: `phase ${i}` }, lease }))
        .checkpoint;
      const row = await headRow(url, 't1');
      lags.push(row.last_version - row.head_version);
      // Another process's view: the newest version, whatever the head holds.
      const reader = openPostgresStore(url);
      expect((await reader.getTask('t1'))?.checkpoint).toMatchObject({ version: i, phase: `phase ${i}` });
      expect((await reader.listTasks()).map((t) => [t.task_id, t.checkpoint?.version, t.checkpoint?.phase])).toEqual([
        ['t1', i, `phase ${i}`],
      ]);
      await reader.close();
    }
    // Full snapshots also bring it up to date, so the lag stays under HEAD_EVERY without reaching it every time.
    expect(Math.max(...lags)).toBeLessThan(HEAD_EVERY);
    expect(lags.some((l) => l > 0)).toBe(true);
    // A new writer (a resumed runner) continues after the newest version, not after the head.
    const resumed = openPostgresStore(url);
    const next = await resumed.save('t1', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: 'resumed' } });
    expect(next.checkpoint.version).toBe(cp.version + 1);
    await resumed.close();
    await lease.release();
    await store.close();

    const settler = openPostgresStore(url);
    const latest = (await settler.getTask('t1'))!.checkpoint!;
    const l2 = await settler.acquireLease('t1', { owner: 'runner', heartbeatMs: 0 });
    await settler.save('t1', { expectedVersion: latest.version, checkpoint: { ...withoutVersion(latest), phase: 'last' }, lease: l2 });
    expect(await settler.settle('t1')).toEqual([]);
    await l2.release();
    expect(await headRow(url, 't1')).toEqual({ head_version: latest.version + 1, last_version: latest.version + 1 });
    expect((await settler.getTask('t1'))?.checkpoint?.phase).toBe('last');
    await settler.close();
  });

  it('of a long task lags past HEAD_EVERY until its deltas reach a quarter of its size, and is read as the newest version all along', async () => {
    const url = await createDatabase('headlong');
    const store = openPostgresStore(url);
    let cp = (await store.create(makeCheckpoint('long', 2_000))).checkpoint;
    const lease = await store.acquireLease('long', { owner: 'runner', heartbeatMs: 0 });
    for (let i = 2; i <= HEAD_EVERY * 3; i++)
      cp = (await store.save('long', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: `phase ${i}` }, lease }))
        .checkpoint;
    const row = await headRow(url, 'long');
    expect(row.last_version - row.head_version).toBeGreaterThan(HEAD_EVERY);
    const sizes = await withSizes(url, 'long', row.head_version);
    expect(sizes.sinceHead * HEAD_DELTA_RATIO).toBeLessThan(sizes.full);
    const reader = openPostgresStore(url);
    expect((await reader.getTask('long'))?.checkpoint).toMatchObject({ version: cp.version, phase: cp.phase });
    expect((await reader.listTasks()).map((t) => t.checkpoint?.phase)).toEqual([cp.phase]);
    // A resumed writer continues after the newest version.
    const next = await reader.save('long', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: 'resumed' } });
    expect(next.checkpoint.version).toBe(cp.version + 1);
    await reader.close();
    await lease.release();
    await store.close();
  });
});

/** Bytes of the deltas after the head's version, and of the newest full snapshot. */
async function withSizes(url: string, taskId: string, headVersion: number): Promise<{ sinceHead: number; full: number }> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ since: string; full: number }>(
      `SELECT (SELECT COALESCE(sum(bytes), 0) FROM waystation_versions WHERE task_id = $1 AND version > $2) AS since,
              (SELECT bytes FROM waystation_versions WHERE task_id = $1 AND kind = 'full' ORDER BY version DESC LIMIT 1) AS full`,
      [taskId, headVersion],
    );
    return { sinceHead: Number(rows[0].since), full: rows[0].full };
  });
}
