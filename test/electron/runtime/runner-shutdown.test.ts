/**
 * A host that shuts down while an auto-mode task waits out its backoff
 * leaves the task interrupted: no new worker is spawned after killAll.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';

let dir: string;

useOfflineWorkers({ SKIP_FAILURE: undefined });
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-shutdown-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

it('drops a pending automatic retry when the runner is shut down', async () => {
  // A minute of backoff: the test only ends quickly if killAll cuts the wait short.
  const runner = new Runner({ root: dir, backoffMs: 60_000, maxBackoffMs: 60_000 });
  const spawned: string[] = [];
  let retrying: () => void = () => {};
  const retryAnnounced = new Promise<void>((resolve) => (retrying = resolve));
  runner.on('event', (e: { type: string; taskId: string }) => {
    if (e.type === 'spawned') spawned.push(e.taskId);
    if (e.type === 'retrying') retrying();
  });

  const run = runner.startRun({ agent: 'checkpoint-demo', taskId: 'auto-demo', mode: 'auto' });
  await retryAnnounced;
  runner.killAll();
  const outcome = await run;

  expect(spawned).toEqual(['auto-demo']);
  expect(outcome.next).toContain('waystation resume');
  const cp = (await openStore(dir).getTask('auto-demo'))!.checkpoint!;
  expect(cp.status).toBe('failed');
  expect(cp.recovery.mode).toBe('auto');
});
