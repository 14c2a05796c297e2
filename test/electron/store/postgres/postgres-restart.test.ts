import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import type { StoreChange } from '../../../../electron/store/store-types.js';
import { clusterUrl, restartCluster, startCluster, stopClusterSync, type ClusterInfo } from '../../../support/postgres-cluster.js';
import { makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

// A cluster of this file's own: restarting the shared one would cut the other files' connections.
let info: ClusterInfo;
let url: string;
beforeAll(async () => {
  info = await startCluster();
  const admin = new pg.Client({ connectionString: clusterUrl(info, 'postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE restart');
  await admin.end();
  url = clusterUrl(info, 'restart');
});
afterAll(() => stopClusterSync(info));

describe('a server restarted under a running store', () => {
  it('reads and saves go on after it, and the change feed reconnects and delivers what was missed, once', async () => {
    const store = openPostgresStore(url);
    const writer = openPostgresStore(url);
    const v1 = (await writer.create(makeCheckpoint('t1'))).checkpoint;
    const changes: StoreChange[] = [];
    const sub = await store.subscribe(
      (c) => changes.push(c),
      () => undefined,
    );
    await restartCluster(info);
    // The writer's pooled connection was cut: its next save reconnects.
    const v2 = await writer.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'after restart' } });
    expect(v2.checkpoint.version).toBe(2);
    await writer.appendEvent('t1', { type: 'log', data: { line: 'still here' } });
    await vi.waitFor(() => expect(changes.flatMap((c) => c.events).map((e) => e.id)).toEqual([2, 3]), { timeout: 15_000, interval: 100 });
    expect((await store.getTask('t1'))?.checkpoint?.phase).toBe('after restart');
    await sub.close();
    await Promise.all([store.close(), writer.close()]);
  });
});
