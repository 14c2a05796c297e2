/**
 * Actions never reach the runner for a task that leads out of the open
 * directory: a worker driving it would write outside the root.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HostService, type HostRunner } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { trustAll } from '../../support/trust-all.js';

let base: string;
let service: HostService;
const calls: string[] = [];

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-confine-'));
  await openStore(path.join(base, 'outside')).create(makeCheckpoint('escape'));
  await openStore(path.join(base, 'root')).create(makeCheckpoint('inside'));
  await fs.symlink(path.join(base, 'outside', 'escape'), path.join(base, 'root', 'escape'));
  const record = (what: string) => async (_root: string, taskId: unknown) => {
    calls.push(`${what} ${String(taskId)}`);
    return { taskId: String(taskId), version: null, message: 'recorded' };
  };
  const runner: HostRunner = {
    start: record('start'),
    resume: record('resume'),
    approve: record('approve'),
    reject: record('reject'),
    edit: record('edit'),
    stop: record('stop'),
    fork: record('fork'),
    rewind: record('rewind'),
    onEvent: () => () => {},
    shutdown: async () => {},
  };
  service = new HostService({ host: 'web', trust: trustAll, runner });
  await service.open(path.join(base, 'root'));
  calls.length = 0;
});
afterEach(async () => {
  await service.close();
  await fs.rm(base, { recursive: true, force: true });
});

describe('an action on a task symlinked out of the root', () => {
  it('is refused before the runner sees it, for every action', async () => {
    const attempts = [
      () => service.resumeTask({ taskId: 'escape' }),
      () => service.approveResume({ taskId: 'escape' }),
      () => service.rejectResume({ taskId: 'escape', reason: 'no' }),
      () => service.editStepResult({ taskId: 'escape', stepId: 's1', value: 'v' }),
      // A start naming an existing task resumes it: the same refusal.
      () => service.startTask({ agent: 'checkpoint-demo', taskId: 'escape', options: {}, mode: 'manual' }),
    ];
    for (const attempt of attempts) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('forbidden');
      expect((err as ApiError).message).toMatch(/outside the checkpoint directory/);
    }
    expect(calls).toEqual([]);
    await service.resumeTask({ taskId: 'inside' });
    expect(calls).toEqual(['resume inside']);
  });
});
