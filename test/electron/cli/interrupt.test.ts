/**
 * Ctrl-C at a terminal running `waystation run`: the signal reaches the CLI
 * and its worker together (one process group), as a terminal sends it. The
 * first stops the task at its next step (the step in flight finishes, a stop
 * version is saved, the command says how to continue and exits 8); the second
 * ends the worker now. Either way the task resumes without redoing done work.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { readLeaseState } from '../../../electron/store/file-lease-state.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { captureCli } from './capture-cli.js';

useOfflineWorkers();

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = path.join(repo, 'bin', 'waystation.mjs');
const agentModule = path.join(repo, 'test', 'fakes', 'slow-agent.ts');
const TASK = 'slow';

let root: string;
let service: FakePublishService;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-interrupt-'));
  service = await startFakePublishService();
});
afterEach(async () => {
  await service.close();
  await fs.rm(root, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** `waystation run` of the slow agent in a process group of its own, as a shell runs a command at a terminal. */
function startRun(stepMs: number): { pid: number; ended: Promise<Ended> } {
  return startCommand(['run', root, agentModule, '--task', TASK, '--stepMs', String(stepMs), '--publishUrl', service.url]);
}

function startCommand(args: string[], env: NodeJS.ProcessEnv = process.env): { pid: number; ended: Promise<Ended> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd: repo, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ended = new Promise<Ended>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, out, err })));
  return { pid: child.pid!, ended };
}

/** Wait until step `id` of `task` has started under a live lease: the agent is inside it. */
async function untilInside(id: string, run: { ended: Promise<Ended> }, task = TASK): Promise<void> {
  const store = openStore(root);
  let gone: Ended | null = null;
  void run.ended.then((e) => (gone = e));
  for (let i = 0; i < 2400; i++) {
    if (gone) throw new Error(`the run ended before step ${id} started: ${JSON.stringify(gone)}`);
    const started = (await store.readEvents(task).catch(() => [])).some((e) => e.type === 'step-start' && e.step_id === id);
    if (started && (await readLeaseState(path.join(root, task))).held) return;
    await sleep(25);
  }
  throw new Error(`step ${id} never started`);
}

/** Ctrl-C as a terminal sends it: to every process of the foreground group. */
const ctrlC = (pid: number) => process.kill(-pid, 'SIGINT');

describe('Ctrl-C while `waystation run` drives a task', () => {
  it('stops at the next step: the step in flight finishes, a stop is saved, and the command says how to continue', async () => {
    const run = startRun(1_500);
    await untilInside('one', run);
    ctrlC(run.pid);
    const ended = await run.ended;
    expect(ended.err).toContain(`stopping ${TASK} at its next step or effect (Ctrl-C again ends it now)`);
    expect(ended.out).toContain(`next: continue: waystation resume ${root} ${TASK}`);
    expect(ended.code).toBe(RunExit.stopped);

    const cp = (await openStore(root).getTask(TASK))!.checkpoint!;
    // The worker was not ended by the key: it finished step one, then stopped before step two.
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
    expect(cp.recovery.stopped).toMatchObject({ reason: 'interrupted at the terminal' });
    expect(cp.source.kind).toBe('stop');
    expect((await readLeaseState(path.join(root, TASK))).held).toBe(false);

    const resumed = await captureCli('resume', root, TASK, '--json');
    expect(resumed.code).toBe(RunExit.done);
    const after = (await openStore(root).getTask(TASK))!.checkpoint!;
    expect(after.plan.map((s) => [s.status, s.attempts])).toEqual([
      ['done', 1],
      ['done', 1],
      ['done', 1],
    ]);
    expect([...service.applied.values()]).toEqual([1]);
  }, 60_000);

  it('a second Ctrl-C ends the step in flight now, and the stop is recorded all the same', async () => {
    const run = startRun(30_000);
    await untilInside('one', run);
    ctrlC(run.pid);
    await sleep(300);
    ctrlC(run.pid);
    const ended = await run.ended;
    expect(ended.err).toContain(`ending the process that runs ${TASK}`);
    expect(ended.out).toContain(`next: continue: waystation resume ${root} ${TASK}`);
    expect(ended.code).toBe(RunExit.stopped);

    const cp = (await openStore(root).getTask(TASK))!.checkpoint!;
    expect(cp.plan[0].status).not.toBe('done');
    expect(cp.recovery.stopped).toMatchObject({ reason: 'interrupted at the terminal' });
    expect((await readLeaseState(path.join(root, TASK))).held).toBe(false);
  }, 60_000);

  it('the terminal closed (SIGHUP) stops the run the same way: the agent does not go on alone', async () => {
    const run = startRun(1_500);
    await untilInside('one', run);
    process.kill(run.pid, 'SIGHUP');
    const ended = await run.ended;
    expect(ended.code).toBe(RunExit.stopped);
    const cp = (await openStore(root).getTask(TASK))!.checkpoint!;
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
    expect(cp.recovery.stopped).toMatchObject({ reason: 'interrupted at the terminal' });
    expect((await readLeaseState(path.join(root, TASK))).held).toBe(false);
  }, 60_000);

  it('stops a Python command agent the same way: the key reaches the CLI alone, and the agent honours the stop', async () => {
    await fs.writeFile(
      path.join(root, 'slow.py'),
      [
        'import sys, time',
        'import waystation',
        'from waystation import PlannedStep',
        'def run(t):',
        '    for sid in ("one", "two"):',
        '        t.step(sid, lambda: time.sleep(1.5) or sid)',
        'agent = waystation.Agent(name="py-slow", description="two slow steps", plan=[PlannedStep("one", "one"), PlannedStep("two", "two")], run=run)',
        'sys.exit(waystation.main(agent))',
        '',
      ].join('\n'),
    );
    await fs.writeFile(
      path.join(root, 'waystation.config.json'),
      JSON.stringify({ agents: [{ name: 'py-slow', command: ['python3', 'slow.py'], description: 'two slow steps' }] }),
    );
    const run = startCommand(['run', root, 'py-slow', '--task', 'py', '--trust'], {
      ...process.env,
      PYTHONPATH: path.join(repo, 'python'),
    });
    await untilInside('one', run, 'py');
    ctrlC(run.pid);
    const ended = await run.ended;
    expect(ended.err).toContain('stopping py at its next step or effect');
    expect(ended.code).toBe(RunExit.stopped);
    const cp = (await openStore(root).getTask('py'))!.checkpoint!;
    // Python saw no KeyboardInterrupt: step one finished, and the stop was saved before step two.
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'pending']);
    expect(cp.recovery.stopped).toMatchObject({ reason: 'interrupted at the terminal' });
    expect(cp.source.kind).toBe('stop');
  }, 60_000);
});
