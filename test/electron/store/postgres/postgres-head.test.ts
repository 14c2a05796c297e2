/**
 * The task row's head, the checkpoint a listing shows, is not rewritten by
 * every save: it is brought up to date at a full snapshot, every
 * HEAD_EVERY versions and when the lease is let go, and readers apply the
 * deltas after it. Whatever it lags by, the listing and getTask show the
 * newest version, and a resumed writer continues from it.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { HEAD_EVERY } from '../../../../electron/store/postgres/pg-writes.js';
import { createDatabase } from '../../../support/postgres-cluster.js';
import { makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

async function headRow(url: string, taskId: string): Promise<{ head_version: number; last_version: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ head_version: number; last_version: number }>(
      `SELECT head_version, last_version FROM waystation_tasks WHERE task_id = $1`,
      [taskId],
    );
    return rows[0];
  } finally {
    await c.end();
  }
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
});
