import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostRunner } from '../../../electron/host/host-ports.js';
import { EventHub } from '../../../electron/host/event-hub.js';
import { HostOperations } from '../../../electron/host/host-operations.js';
import { OpenDirectory } from '../../../electron/host/open-directory.js';
import { ModuleHashCache } from '../../../electron/host/task-agent-status.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

let root: string;
let calls: string[];
beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-operations-')));
  calls = [];
  await openStore(root).create(makeCheckpoint('t1'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const result = (taskId: string) => ({ taskId, version: null, message: 'ok' });
const runner: HostRunner = {
  start: async (_root, req) => (calls.push(`start ${req.taskId ?? ''}`), result(req.taskId ?? 'new')),
  resume: async (_root, taskId) => (calls.push(`resume ${taskId}`), result(taskId)),
  approve: async (_root, taskId) => (calls.push(`approve ${taskId}`), result(taskId)),
  reject: async (_root, taskId) => (calls.push(`reject ${taskId}`), result(taskId)),
  edit: async (_root, taskId) => (calls.push(`edit ${taskId}`), result(taskId)),
  stop: async (_root, taskId) => (calls.push(`stop ${taskId}`), result(taskId)),
  fork: async (_root, taskId) => (calls.push(`fork ${taskId}`), result(taskId)),
  rewind: async (_root, taskId) => (calls.push(`rewind ${taskId}`), result(taskId)),
  onEvent: () => () => {},
  shutdown: async () => {},
};

function directory(readOnly: boolean): OpenDirectory {
  return new OpenDirectory({ root, readOnly, store: openStore(root), hub: new EventHub(), hashes: new ModuleHashCache() });
}

describe('the host operations', () => {
  it('hand a checked operation to the runner', async () => {
    const ops = new HostOperations(runner);
    await ops.resume(directory(false), { taskId: 't1' });
    await ops.reject(directory(false), { taskId: 't1', reason: 'wrong plan' });
    expect(calls).toEqual(['resume t1', 'reject t1']);
  });

  it('refuse in a directory open read-only, saying how to run its tasks, before the runner sees anything', async () => {
    const ops = new HostOperations(runner);
    await expect(ops.resume(directory(true), { taskId: 't1' })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('is open read-only'),
    });
    expect(calls).toEqual([]);
  });

  it('refuse on a host without a runner', async () => {
    const ops = new HostOperations(null);
    await expect(ops.approve(directory(false), { taskId: 't1' })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('this host runs no tasks'),
    });
  });

  it('refuse a task that does not exist as not found, and a task id that would leave the root as forbidden', async () => {
    const ops = new HostOperations(runner);
    await expect(ops.edit(directory(false), { taskId: 'nope', stepId: 's1', value: 1 })).rejects.toMatchObject({ code: 'not-found' });
    await fs.symlink(os.tmpdir(), path.join(root, 'escape'));
    await expect(
      ops.start(directory(false), { taskId: 'escape', agent: 'checkpoint-demo', options: {}, mode: 'manual' }),
    ).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(calls).toEqual([]);
  });
});
