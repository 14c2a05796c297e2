/**
 * A task whose first save failed (the disk full while version 1 was being
 * written, at any of the writes a creation makes): resuming it says it was
 * never saved and how to start it, and starting it again under its id works.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { FaultyFs } from '../../torture/lib/faulty-fs.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

let root: string;
useOfflineWorkers({ SKIP_FAILURE: '1' });

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-failed-create-')));
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

describe('a task whose creation hit a full disk', () => {
  it('can be resumed only to be told to start it again, and starts again under its id', async () => {
    // The folder made and version 1 not (the second write), and version 1's own file failing (a later one).
    for (const nth of [1, 4]) {
      const taskId = `t${nth}`;
      const faulty = new FaultyFs({ group: 'write', nth, code: 'ENOSPC', persistent: true });
      const failed = await openStore(root, { fs: faulty })
        .create(makeCheckpoint(taskId))
        .then(
          () => false,
          () => true,
        );
      expect(failed, `write ${nth} fails the creation`).toBe(true);
      await fs.rm(path.join(root, taskId, 'lease'), { recursive: true, force: true });
      const runner = new Runner({ root });
      const resumed = await runner.resume(taskId);
      const folderLeft = await fs.stat(path.join(root, taskId)).then(
        () => true,
        () => false,
      );
      if (!folderLeft) expect(resumed.message).toContain('there is no task');
      else if (resumed.status === null) {
        expect(resumed.message, `write ${nth}`).toContain('was never saved');
        expect(resumed.message).toContain(`--task ${taskId}`);
      }
      const started = await runner.startRun({ agent: 'checkpoint-demo', taskId });
      expect(started.error ?? null, `write ${nth}: ${started.message}`).toBeNull();
      expect(started.status, `write ${nth}: ${started.message}`).toBe('done');
      expect((await openStore(root).getTask(taskId))!.checkpoint!.task_name).toBe('checkpoint-demo');
    }
  }, 120_000);
});
