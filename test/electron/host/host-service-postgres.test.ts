import { describe, expect, it, vi } from 'vitest';
import { HostService } from '../../../electron/host/host-service.js';
import type { HostEvent } from '../../../shared/api/contract.js';
import { openPostgresStore } from '../../../electron/store/postgres/postgres-store.js';
import { createDatabase, TEST_PASSWORD } from '../../support/postgres-cluster.js';
import { makeCheckpoint, withoutVersion } from '../store/store-test-helpers.js';

describe('the host over a PostgreSQL store', () => {
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
});
