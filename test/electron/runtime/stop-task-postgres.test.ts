/**
 * Stopping a task whose runner saves to a PostgreSQL database: the request
 * is stored in the lease row for that run, the runner honours it at its next
 * step, and `waystation stop URL TASK` works as on a directory. A stopped
 * task is not resumed automatically, and a person's resume finishes it
 * without repeating done work.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openLocation } from '../../../electron/store/open-location.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { stopTask } from '../../../electron/runtime/stop-task.js';
import { startFakePublishService } from '../../fakes/fake-publish-service.js';
import { createDatabase, TEST_PASSWORD } from '../../support/postgres-cluster.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { captureCli } from '../cli/capture-cli.js';

useOfflineWorkers();

const agentModule = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fakes/slow-agent.ts');

/** Wait until step `id` of the task has started under a live lease. */
async function untilRunning(store: CheckpointStore, taskId: string, id: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const started = (await store.readEvents(taskId).catch(() => [])).some((e) => e.type === 'step-start' && e.step_id === id);
    if (started && (await store.readLease(taskId)).info.held) return;
    await sleep(25);
  }
  throw new Error(`step ${id} of ${taskId} never started`);
}

describe('stopping a task that runs against a database', () => {
  it('stops it at the next step through the API and through `waystation stop URL TASK`, and a resume finishes it', async () => {
    const url = await createDatabase('stop');
    const store = openLocation(url);
    const service = await startFakePublishService();
    const runner = () => new Runner({ root: url, actor: 'grace', backoffMs: 10 });
    try {
      const run = runner().startRun({
        agent: agentModule,
        taskId: 'slow',
        mode: 'auto',
        options: { stepMs: 600, publishUrl: service.url },
      });
      await untilRunning(store, 'slow', 'one');
      const stopped = await stopTask({ store, root: store.artifactRoot, actor: 'grace' }, 'slow', {
        reason: 'wrong input',
        waitMs: 20_000,
      });
      expect(stopped).toMatchObject({ how: 'stopped', stopped: true, status: 'running' });
      expect(await run).toMatchObject({ stopped: true, exitCode: RunExit.stopped });
      const cp = (await store.getTask('slow'))!.checkpoint!;
      expect(cp.recovery.stopped).toMatchObject({ by: 'grace', reason: 'wrong input' });
      expect(cp.source).toMatchObject({ kind: 'stop', actor: 'grace' });
      expect(cp.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
      expect((await store.readLease('slow')).info.held).toBe(false);
      expect(await runner().recoverInterrupted()).toEqual([]);

      // Resumed, it runs on; the CLI stops it again, by the URL.
      const again = runner().resume('slow');
      await untilRunning(store, 'slow', 'two');
      const cli = await captureCli('stop', url, 'slow', '--by', 'ada', '--wait', '20');
      expect(cli.code).toBe(0);
      expect(cli.out).toContain('task slow stopped by ada');
      expect(cli.out + cli.err).not.toContain(TEST_PASSWORD);
      expect((await again).stopped).toBe(true);
      expect((await store.getTask('slow'))!.checkpoint!.recovery.stopped).toMatchObject({ by: 'ada' });

      const done = await runner().resume('slow');
      expect(done.status).toBe('done');
      const final = (await store.getTask('slow'))!.checkpoint!;
      expect(final.recovery.stopped ?? null).toBeNull();
      expect(final.plan.map((s) => s.status)).toEqual(['done', 'done', 'done']);
      expect(service.applied.get('slow:two')).toBe(1);
    } finally {
      await service.close();
      await store.close();
    }
  }, 90_000);
});
