/**
 * A connection lost at the commit of a save, against the real server: the
 * save is reported as it ended (committed, or not and never later), so a
 * runner knows before it goes on, no version is written twice and none is
 * lost. The connection goes through a proxy that cuts it as the COMMIT
 * passes (test/support/pg-cut-proxy.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openPostgresStore, type PostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { PostgresStoreError } from '../../../../electron/store/postgres/pg-errors.js';
import { createDatabase, TEST_PASSWORD, testCluster } from '../../../support/postgres-cluster.js';
import { startCutProxy, type CutProxy } from '../../../support/pg-cut-proxy.js';
import { makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

let url: string;
let proxy: CutProxy;
let store: PostgresStore;

beforeEach(async () => {
  url = await createDatabase('cut');
  proxy = await startCutProxy((await testCluster()).port);
  store = openPostgresStore(proxy.url(url));
});
afterEach(async () => {
  await store.close();
  await proxy.close();
});

/** The rows of `waystation_versions` of a task, read directly (not through the proxy). */
async function versionRows(taskId: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ version: number }>(`SELECT version FROM waystation_versions WHERE task_id = $1 ORDER BY version`, [
      taskId,
    ]);
    return rows.map((r) => r.version);
  } finally {
    await c.end();
  }
}

describe('a connection lost at the commit of a save', () => {
  it('after the server committed: the save is found committed, returns its version, and the next save follows it', async () => {
    const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const lease = await store.acquireLease('t1', { owner: 'runner', heartbeatMs: 0 });
    const cut = proxy.armCommitCut('deliver');
    const saved = await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' }, lease });
    await cut;
    expect(saved.checkpoint.version).toBe(2);
    expect(await versionRows('t1')).toEqual([1, 2]);
    // The writer goes on from the version it now knows was saved: no conflict, no second version 2.
    const v3 = await store.save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(saved.checkpoint), phase: 'three' }, lease });
    expect(v3.checkpoint.version).toBe(3);
    expect(await versionRows('t1')).toEqual([1, 2, 3]);
    expect((await store.readVersion('t1', 2)).phase).toBe('two');
    expect((await store.readEvents('t1')).filter((e) => e.type === 'version').map((e) => e.version)).toEqual([1, 2, 3]);
    await lease.release();
  });

  it('with the COMMIT still on its way: the save says nothing was written, and the late COMMIT cannot change that', async () => {
    const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const lease = await store.acquireLease('t1', { owner: 'runner', heartbeatMs: 0 });
    const cut = proxy.armCommitCut('withhold');
    const err = await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'lost' }, lease }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    await cut;
    // A fault of the database, as the server out of reach is: whoever drives the task stops at version 1 (worker-main.ts).
    expect(err).toBeInstanceOf(PostgresStoreError);
    expect((err as PostgresStoreError).fault).toBe('connection-lost');
    expect(err!.message).toMatch(/before version 2 of task t1 was committed; nothing was written and version 1 is intact/);
    expect(err!.message).not.toContain(TEST_PASSWORD);
    // The COMMIT arrives after the writer was told: the server process it was for is gone, so nothing commits.
    await proxy.release();
    await new Promise((r) => setTimeout(r, 200));
    expect(await versionRows('t1')).toEqual([1]);
    // The runner saves again and gets version 2, once.
    const again = await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' }, lease });
    expect(again.checkpoint.version).toBe(2);
    expect(await versionRows('t1')).toEqual([1, 2]);
    expect((await store.readVersion('t1', 2)).phase).toBe('two');
    await lease.release();
  });
});
