/**
 * Stopping a task a worker process drives: at its next step or effect it
 * saves a `stop` version and lets the lease go; a forced stop ends the
 * process. Either way the task is left interrupted, automatic recovery leaves
 * it alone, and a person's resume continues it without repeating done work.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { Runner, type RunnerEvent } from '../../../electron/runtime/runner.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { stopTask } from '../../../electron/runtime/stop-task.js';
import { OperationError, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { readLeaseState } from '../../../electron/store/file-lease-state.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { captureCli } from '../cli/capture-cli.js';

useOfflineWorkers();

const agentModule = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fakes/slow-agent.ts');
let root: string;
let store: CheckpointStore;
let service: FakePublishService;
let env: OperationEnv;
let events: RunnerEvent[];

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-stop-'));
  store = openStore(root);
  service = await startFakePublishService();
  env = { store, root, actor: 'grace' };
  events = [];
});
afterEach(async () => {
  await service.close();
  await fs.rm(root, { recursive: true, force: true });
});

function runner(): Runner {
  const r = new Runner({ root, actor: 'grace', backoffMs: 10 });
  r.onEvent((e) => events.push(e));
  return r;
}

/** Wait until step `id` of the task has started (its step-start event) under a live lease. */
async function untilRunning(taskId: string, id: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const started = (await store.readEvents(taskId).catch(() => [])).some((e) => e.type === 'step-start' && e.step_id === id);
    if (started && (await readLeaseState(path.join(root, taskId))).held) return;
    await sleep(25);
  }
  throw new Error(`step ${id} of ${taskId} never started`);
}

describe('stopping a running task', () => {
  it('stops it at the next step, records who stopped it, and the auto mode does not retry it', async () => {
    const r = runner();
    const run = r.startRun({ agent: agentModule, taskId: 'slow', mode: 'auto', options: { stepMs: 600, publishUrl: service.url } });
    await untilRunning('slow', 'one');
    const stopped = await stopTask(env, 'slow', { reason: 'wrong input', waitMs: 20_000 });
    expect(stopped).toMatchObject({ how: 'stopped', stopped: true, status: 'running' });
    const outcome = await run;
    expect(outcome).toMatchObject({ stopped: true, exitCode: RunExit.stopped });
    expect(events.some((e) => e.type === 'retrying')).toBe(false);

    const cp = (await store.getTask('slow'))!.checkpoint!;
    expect(cp.status).toBe('running');
    expect(cp.recovery.stopped).toMatchObject({ by: 'grace', reason: 'wrong input' });
    expect(cp.source).toMatchObject({ kind: 'stop', actor: 'grace' });
    // Step one finished; the stop landed before step two started, so its effect was never asked for.
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
    expect(cp.side_effects).toEqual([]);
    expect((await readLeaseState(path.join(root, 'slow'))).held).toBe(false);

    // A host opening the directory leaves it alone.
    expect(await runner().recoverInterrupted()).toEqual([]);

    // A person's resume continues it, and ends the stop.
    const resumed = await runner().resume('slow');
    expect(resumed.status).toBe('done');
    const final = (await store.getTask('slow'))!.checkpoint!;
    expect(final.recovery.stopped ?? null).toBeNull();
    expect(final.plan.map((s) => s.attempts)).toEqual([1, 1, 1]);
    expect(service.applied.get('slow:two')).toBe(1);
  }, 60_000);

  it('ends the process when forced, and the effect in flight is probed on resume instead of repeated', async () => {
    const r = runner();
    const run = r.startRun({ agent: agentModule, taskId: 'slow', mode: 'auto', options: { stepMs: 300, publishUrl: service.url } });
    // Wait until the effect of step two is recorded as an intent: the stop then lands mid-effect or just after it.
    for (let i = 0; i < 600; i++) {
      const e = (await store.getTask('slow'))?.checkpoint?.side_effects[0];
      if (e) break;
      await sleep(10);
    }
    const stopped = await stopTask(env, 'slow', { force: true });
    expect(stopped.stopped).toBe(true);
    expect(['ended', 'stopped']).toContain(stopped.how);
    const outcome = await run;
    expect(events.some((e) => e.type === 'retrying')).toBe(false);
    // The run a person stopped says so, whether its worker recorded the stop or was ended first (RUNTIME.md).
    expect(outcome).toMatchObject({ stopped: true, exitCode: RunExit.stopped });
    expect(outcome.crashed).toBeUndefined();
    const cp = (await store.getTask('slow'))!.checkpoint!;
    expect(cp.recovery.stopped).toMatchObject({ by: 'grace' });
    expect(await runner().recoverInterrupted()).toEqual([]);

    expect((await runner().resume('slow')).status).toBe('done');
    const total = [...service.applied.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(1);
  }, 60_000);

  it('records a stop on an interrupted task, so no host resumes it by itself, and refuses one on a task that is not running', async () => {
    const r = runner();
    const run = r.startRun({ agent: agentModule, taskId: 'slow', mode: 'auto', options: { stepMs: 1500, publishUrl: service.url } });
    await untilRunning('slow', 'one');
    r.killAll('SIGKILL');
    await run;
    expect((await readLeaseState(path.join(root, 'slow'))).held).toBe(false);
    const recorded = await stopTask(env, 'slow');
    expect(recorded).toMatchObject({ how: 'recorded', status: 'running' });
    expect(await runner().recoverInterrupted()).toEqual([]);

    // Stopped again: the first stop stands, nothing is written, and the line names the task as the list does.
    const stoppedAt = (await store.getTask('slow'))?.checkpoint?.recovery.stopped?.at;
    const again = await captureCli('stop', root, 'slow', '--by', 'ada');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/^slow interrupted \(version \d+\)\n/);
    expect(again.out).toContain(`task slow was already stopped by grace at ${stoppedAt}; nothing was written`);
    expect((await store.getTask('slow'))?.checkpoint?.version).toBe(recorded.version);

    const done = await runner().resume('slow');
    expect(done.status).toBe('done');
    const refused = await stopTask(env, 'slow').then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(OperationError);
    expect((refused as OperationError).message).toMatch(/is not running \(it is done\); there is nothing to stop/);
    const cli = await captureCli('stop', root, 'slow');
    expect(cli.code).toBe(2);
    expect(cli.err).toContain('there is nothing to stop');
  }, 60_000);
});
