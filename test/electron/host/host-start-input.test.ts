/**
 * startTask answers only what a worker will accept: task ids a worker
 * refuses are refused before anything starts, a name too long for the disk
 * is a 4xx naming no path, and options too large for a process's
 * environment reach the worker anyway, up to a stated cap.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/api/api-error.js';
import { dispatch, httpStatusOf } from '../../../shared/api/dispatch.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { MAX_OPTIONS_BYTES } from '../../../electron/runtime/worker-job-channel.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { trustAll } from '../../support/trust-all.js';

let root: string;
let service: HostService | null = null;
useOfflineWorkers({ SKIP_FAILURE: '1' });

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-start-input-')));
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('startTask', () => {
  it('refuses ids a worker would refuse, before anything runs, and names no path', async () => {
    service = new HostService({ host: 'web', runner: createHostRunner(), trust: trustAll, recoverOnOpen: false });
    await service.open(root);
    for (const taskId of ['é', 'x.json', 'a'.repeat(200), '🙂'.repeat(70), 'y.tmp']) {
      const err = await refusal(dispatch(service, 'startTask', { agent: 'checkpoint-demo', taskId }));
      expect(err.code, taskId).toBe('invalid-input');
      expect(err.message).toContain('cannot be a task id');
      expect(err.message).not.toContain(root);
      expect(err.message).not.toContain('ENAMETOOLONG');
    }
    expect(await fs.readdir(root)).toEqual([]);
  });

  it('refuses options over the cap by name, and hands large options under it to the worker', async () => {
    service = new HostService({ host: 'web', runner: createHostRunner(), trust: trustAll, recoverOnOpen: false });
    await service.open(root);
    const err = await refusal(
      dispatch(service, 'startTask', { agent: 'checkpoint-demo', taskId: 'big', options: { pad: 'x'.repeat(MAX_OPTIONS_BYTES + 10) } }),
    );
    // A size over a limit is its own refusal, answered over HTTP as 413 Content Too Large.
    expect(err.code).toBe('too-large');
    expect(httpStatusOf(err.code)).toBe(413);
    expect(err.message).toContain(`${MAX_OPTIONS_BYTES}-byte limit`);
    // 200 KB of options, past what one environment variable may hold on Linux (128 KiB), reach the worker.
    const runner = new Runner({ root });
    const outcome = await runner.startRun({ agent: 'checkpoint-demo', taskId: 'heavy', options: { topic: 'y'.repeat(200 * 1024) } });
    expect(outcome.message).not.toContain('E2BIG');
    expect(outcome.error ?? null).not.toBe('internal');
  });
});
