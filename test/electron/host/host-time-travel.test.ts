/**
 * Going back through the API: the host forks, previews and performs a rerun
 * from a step, and stops a task, with the real runner on a real directory;
 * refusals arrive as typed API errors, and a directory open read-only
 * previews but never writes.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointDemo } from '../../../electron/agents/checkpoint-demo.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { startTask } from '../../../electron/runtime/task-operations.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { ApiInput, ApiMethod, ApiOutputs } from '../../../shared/api/contract.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { dispatch } from '../../../shared/api/dispatch.js';
import { trustAll } from '../../support/trust-all.js';

let root: string;
let service: HostService | null = null;

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-host-tt-')));
  // Step 3 of the demo fails, as in the article: a failed task with two done steps.
  const out = await startTask({ store: openStore(root), root, llm: new OfflineProvider(0) }, checkpointDemo, { taskId: 'demo' });
  expect(out.status).toBe('failed');
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

async function open(readOnly = false): Promise<HostService> {
  service = new HostService({ host: 'web', trust: trustAll, runner: createHostRunner({ actor: 'host-user' }) });
  await service.open(root, { readOnly });
  return service;
}

/** A call as the API serves it: input validated, the answer checked against the contract, errors mapped to their codes. */
const call = <M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutputs[M]> => dispatch(service!, method, input, true);

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => (err instanceof ApiError ? err.code : `not an ApiError: ${String(err)}`),
  );

describe('the host, going back', () => {
  it('forks a version into a new task, previews a rerun and writes it at the version it showed', async () => {
    await open();
    const demo = await call('getTask', { taskId: 'demo' });
    const fork = await call('forkTask', { taskId: 'demo', version: demo.checkpoint!.version, newTaskId: 'demo-b', by: 'ada' });
    expect(fork).toMatchObject({ taskId: 'demo-b', version: 1 });
    const child = await call('getTask', { taskId: 'demo-b' });
    expect(child.checkpoint!.source).toMatchObject({
      kind: 'fork',
      actor: 'ada',
      forked_from: { task_id: 'demo', version: demo.checkpoint!.version },
    });
    // The list names the fork's parent, so a view of the parent finds its forks without opening every task.
    // (The host lists the new task once its watcher has seen the folder.)
    await expect
      .poll(async () => (await call('listTasks', {})).find((t) => t.task_id === 'demo-b')?.forked_from, { timeout: 15_000 })
      .toEqual({ task_id: 'demo', version: demo.checkpoint!.version });
    expect((await call('listTasks', {})).find((t) => t.task_id === 'demo')).not.toHaveProperty('forked_from');

    const second = child.checkpoint!.plan[1].id;
    const plan = await call('previewRewind', { taskId: 'demo-b', stepId: second });
    expect(plan.rerun.map((r) => r.id)).toEqual(child.checkpoint!.plan.slice(1).map((p) => p.id));
    expect(plan.version).toBe(1);
    const rewound = await call('rewindTask', { taskId: 'demo-b', stepId: second, expectedVersion: plan.version, by: 'ada' });
    expect(rewound.version).toBe(2);
    const after = await call('getTask', { taskId: 'demo-b' });
    expect(after.checkpoint!.status).toBe('waiting_human');
    expect(after.checkpoint!.source).toMatchObject({ kind: 'rewind', actor: 'ada' });
    // Shown for version 1, written over version 2: refused, nothing written.
    expect(await codeOf(call('rewindTask', { taskId: 'demo-b', stepId: second, expectedVersion: 1 }))).toBe('conflict');
    expect((await call('getTask', { taskId: 'demo-b' })).checkpoint!.version).toBe(2);
  });

  it('refuses with typed errors what cannot be done, and an edit can keep the steps after it', async () => {
    await open();
    expect(await codeOf(call('stopTask', { taskId: 'demo' }))).toBe('invalid-input');
    expect(await codeOf(call('previewRewind', { taskId: 'demo', stepId: 'no-such-step' }))).toBe('not-found');
    // A version past the newest is not there, whether it is read or forked.
    expect(await codeOf(call('forkTask', { taskId: 'demo', version: 99 }))).toBe('not-found');
    expect(await codeOf(call('getTask', { taskId: 'demo', version: 99 }))).toBe('not-found');
    expect(await codeOf(call('forkTask', { taskId: 'demo', version: 1, newTaskId: 'demo' }))).toBe('conflict');
    const demo = await call('getTask', { taskId: 'demo' });
    const first = demo.checkpoint!.plan[0];
    const value = (await call('getStepResult', { taskId: 'demo', stepId: first.id })).value;
    await call('editStepResult', { taskId: 'demo', stepId: first.id, value, later: 'keep', expectedVersion: demo.checkpoint!.version });
    const edited = await call('getTask', { taskId: 'demo' });
    expect(edited.checkpoint!.plan[1].status).toBe('done');
  });

  it('previews in a directory open read-only, and refuses every write there', async () => {
    await open(true);
    const demo = await call('getTask', { taskId: 'demo' });
    const plan = await call('previewRewind', { taskId: 'demo', stepId: demo.checkpoint!.plan[0].id });
    expect(plan.rerun.length).toBe(demo.checkpoint!.plan.length);
    expect(await codeOf(call('rewindTask', { taskId: 'demo', stepId: demo.checkpoint!.plan[0].id }))).toBe('forbidden');
    expect(await codeOf(call('forkTask', { taskId: 'demo', version: 1 }))).toBe('forbidden');
    expect(await codeOf(call('stopTask', { taskId: 'demo' }))).toBe('forbidden');
    expect((await call('getTask', { taskId: 'demo' })).checkpoint!.version).toBe(demo.checkpoint!.version);
  });
});
