/**
 * A worker started before its job is known (what `waystation run` does while
 * it loads) is adopted by the runner only when it is the process the runner
 * would have started, and only while it lives; a standby let go exits having
 * written nothing, and a crash of an adopted one is reported like any other.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Runner, type RunnerEvent } from '../../../electron/runtime/runner.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { standbyWorkerPid, startStandbyWorker, stopStandbyWorker } from '../../../electron/runtime/worker-standby.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { bundleWorker, type WorkerBundle } from '../../fakes/worker-bundle.js';
import '../../../electron/agents/registry.js';

let bundle: WorkerBundle;
let root: string;
const env = { ...process.env, SKIP_FAILURE: '1', WAYSTATION_OFFLINE_LATENCY_MS: '0' };

beforeAll(async () => {
  bundle = await bundleWorker();
});
afterAll(() => bundle.dispose());
beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-standby-')));
});
afterEach(async () => {
  stopStandbyWorker();
  await fs.rm(root, { recursive: true, force: true });
});

/** Resolves once the process `pid` has gone. */
async function gone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Start the demo in `root` with a runner of `runnerEnv`; resolves to its outcome and the pids of the workers it spawned. */
async function runDemo(runnerEnv: NodeJS.ProcessEnv, taskId: string) {
  const runner = new Runner({ root, env: runnerEnv, workerLaunch: bundle.workerLaunch });
  const pids: number[] = [];
  runner.onEvent((e: RunnerEvent) => {
    if (e.type === 'spawned') pids.push(e.pid);
  });
  const outcome = await runner.startRun({ agent: 'checkpoint-demo', taskId });
  return { outcome, pids };
}

describe('a standby worker', () => {
  it('is adopted by a runner that would start the same process, and runs the task to the end', async () => {
    startStandbyWorker(bundle.workerLaunch, env);
    const pid = standbyWorkerPid();
    expect(pid).toBeGreaterThan(0);
    const { outcome, pids } = await runDemo(env, 'adopted');
    expect(pids).toEqual([pid]);
    expect(outcome).toMatchObject({ task_id: 'adopted', status: 'done', exitCode: RunExit.done });
    expect(standbyWorkerPid()).toBeNull();
    const cp = (await openStore(root).getTask('adopted'))!.checkpoint!;
    expect(cp.status).toBe('done');
    expect(cp.plan.every((s) => s.status === 'done')).toBe(true);
  });

  it("started by another copy of this module is adopted, as the compiled CLI's loader starts it and its script adopts it", async () => {
    // A second instance of the module, as the loader's bundle and the CLI's script each hold one.
    const specifier = new URL('../../../electron/runtime/worker-standby.ts?second-copy', import.meta.url).href;
    const loaderCopy = (await import(/* @vite-ignore */ specifier)) as typeof import('../../../electron/runtime/worker-standby.js');
    expect(loaderCopy.startStandbyWorker).not.toBe(startStandbyWorker);
    loaderCopy.startStandbyWorker(bundle.workerLaunch, env);
    const pid = standbyWorkerPid();
    expect(pid).toBeGreaterThan(0);
    const { outcome, pids } = await runDemo(env, 'from-the-loader');
    expect(pids).toEqual([pid]);
    expect(outcome).toMatchObject({ task_id: 'from-the-loader', status: 'done', exitCode: RunExit.done });
    expect(loaderCopy.standbyWorkerPid()).toBeNull();
  });

  it('is let go when the runner gives its workers another environment, and a worker of its own runs the task', async () => {
    startStandbyWorker(bundle.workerLaunch, { ...env, WAYSTATION_SOMETHING_ELSE: '1' });
    const pid = standbyWorkerPid()!;
    const { outcome, pids } = await runDemo(env, 'fresh');
    expect(pids).toHaveLength(1);
    expect(pids[0]).not.toBe(pid);
    expect(outcome).toMatchObject({ status: 'done', exitCode: RunExit.done });
    await gone(pid);
  });

  it('that died before its job is not adopted: the runner starts another and the task runs', async () => {
    startStandbyWorker(bundle.workerLaunch, env);
    const pid = standbyWorkerPid()!;
    process.kill(pid, 'SIGKILL');
    await gone(pid);
    const { outcome, pids } = await runDemo(env, 'after-death');
    expect(pids).toHaveLength(1);
    expect(pids[0]).not.toBe(pid);
    expect(outcome).toMatchObject({ status: 'done', exitCode: RunExit.done });
  });

  it('let go without a job exits having written nothing', async () => {
    startStandbyWorker(bundle.workerLaunch, { ...env, WAYSTATION_ARTIFACT_ROOT: root });
    const pid = standbyWorkerPid()!;
    // Long enough for it to have loaded the runtime and be waiting for its job.
    await new Promise((r) => setTimeout(r, 300));
    stopStandbyWorker();
    await gone(pid);
    expect(standbyWorkerPid()).toBeNull();
    expect(await fs.readdir(root)).toEqual([]);
  });

  it('adopted and then killed is reported as any worker is: a crash once it created the task, a refused start before', async () => {
    startStandbyWorker(bundle.workerLaunch, env);
    const runner = new Runner({ root, env, workerLaunch: bundle.workerLaunch });
    runner.onEvent((e) => {
      if (e.type === 'spawned') process.kill(e.pid, 'SIGKILL');
    });
    const outcome = await runner.startRun({ agent: 'checkpoint-demo', taskId: 'killed' });
    const entry = await openStore(root).getTask('killed');
    if (entry?.checkpoint) {
      // Nothing it did is taken for done: the task it got as far as creating is left interrupted.
      expect(outcome).toMatchObject({ task_id: 'killed', crashed: true, signal: 'SIGKILL', exitCode: RunExit.crashed });
      expect(entry.checkpoint.status).toBe('running');
    } else {
      expect(outcome).toMatchObject({ task_id: 'killed', error: 'agent-unavailable', exitCode: RunExit.usage });
      expect(outcome.message).toContain('was killed by SIGKILL before it wrote task killed; nothing was written');
    }
  });
});
