/**
 * The host service with the real runner on a real temporary directory: what
 * happens when a directory is opened (interrupted auto-mode tasks resume by
 * themselves), who is recorded for an approval or a rejection made
 * through the API, and the app's Resume of an agent that is a module.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HostEvent } from '../../../shared/api/contract.js';
import type { RecoveryMode } from '../../../shared/checkpoint/schema.js';
import { builtInAgent } from '../../../electron/agents/registry.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { startTask } from '../../../electron/runtime/task-operations.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { runCli } from '../../../electron/cli/main.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { bundleWorker, type WorkerBundle } from '../../fakes/worker-bundle.js';
import { GATED_AGENT as GATED, writeAgentProject } from '../runtime/agent-project.js';
import { trustAll } from '../../support/trust-all.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let bundle: WorkerBundle;
let root: string;
let service: HostService | null = null;
let events: HostEvent[] = [];

beforeAll(async () => {
  // One plain-JavaScript worker for the file: no TypeScript loader at every spawn.
  bundle = await bundleWorker();
}, 60_000);
afterAll(async () => {
  await bundle?.dispose();
});
beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-host-runner-')));
  events = [];
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

/** Workers: offline model without latency, step 3 of checkpoint-demo passing, quick auto backoff. */
const workerEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WAYSTATION_OFFLINE_LATENCY_MS: '0',
    WAYSTATION_AUTO_BACKOFF_MS: '10',
    SKIP_FAILURE: '1',
  };
  delete env.OPENAI_API_KEY;
  return env;
};

async function openService(): Promise<HostService> {
  service = new HostService({
    host: 'web',
    runner: createHostRunner({ env: workerEnv(), workerLaunch: bundle.workerLaunch }),
    trust: trustAll,
  });
  service.subscribe((e) => void events.push(e));
  await service.open(root);
  return service;
}

/** Run an agent in this process, as an earlier session would have, leaving the task where its run stopped. */
async function runInProcess(agentName: string, taskId: string, mode: RecoveryMode, options: Record<string, unknown> = {}): Promise<void> {
  const agent = builtInAgent(agentName)!;
  const store = openStore(root);
  const before = process.env.SKIP_FAILURE;
  // checkpoint-demo fails its third step unless SKIP_FAILURE is set.
  delete process.env.SKIP_FAILURE;
  try {
    await startTask({ store, root, llm: new OfflineProvider(0), actor: 'earlier-session', report: () => {} }, agent, {
      taskId,
      options,
      mode,
    });
  } finally {
    if (before !== undefined) process.env.SKIP_FAILURE = before;
  }
}

/** Rewrite the latest version as `running`, as a process killed mid-step leaves it. */
async function markInterrupted(taskId: string): Promise<void> {
  const store = openStore(root);
  const cp = (await store.getTask(taskId))!.checkpoint!;
  const { version: _version, ...rest } = cp;
  await store.save(taskId, { expectedVersion: cp.version, checkpoint: { ...rest, status: 'running' } });
}

const latest = async (taskId: string) => (await openStore(root).getTask(taskId))!.checkpoint!;

/** Resolves when the runner reports that the worker of `taskId` exited. */
function exited(taskId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no worker of ${taskId} exited; events: ${JSON.stringify(events.slice(-5))}`)), 30_000);
    const stop = service!.subscribe((e) => {
      if (e.type === 'runner' && e.taskId === taskId && e.state === 'exited') {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  });
}

describe('opening a directory resumes interrupted auto-mode tasks', () => {
  it('finishes an interrupted auto-mode task by itself, and leaves an interrupted manual task alone', async () => {
    await runInProcess('checkpoint-demo', 'auto-task', 'auto');
    await markInterrupted('auto-task');
    await runInProcess('checkpoint-demo', 'manual-task', 'manual');
    await markInterrupted('manual-task');
    const manualVersion = (await latest('manual-task')).version;

    const host = await openService();
    await host.recovered();

    const auto = await latest('auto-task');
    expect(auto.status).toBe('done');
    expect(auto.plan.every((s) => s.status === 'done')).toBe(true);
    // The steps done before the interruption were not run again.
    expect(auto.plan[0].attempts).toBe(1);
    expect(events.some((e) => e.type === 'runner' && e.taskId === 'auto-task' && e.state === 'started')).toBe(true);
    const manual = await latest('manual-task');
    expect(manual.version).toBe(manualVersion);
    expect(manual.status).toBe('running');
    expect((await host.listTasks()).find((t) => t.task_id === 'manual-task')?.display_status).toBe('interrupted');
  }, 60_000);

  it('falls back to waiting for a human when the interrupted task no longer verifies', async () => {
    const notes = path.join(root, 'notes');
    await fs.mkdir(notes);
    await fs.writeFile(path.join(notes, 'a.md'), '# A\n\nThe first note.\n');
    await fs.writeFile(path.join(notes, 'b.md'), '# B\n\nThe second note.\n');
    await runInProcess('md-summarizer', 'md-task', 'auto', { input: notes });
    const done = await latest('md-task');
    expect(done.artifacts.length).toBeGreaterThan(0);
    await markInterrupted('md-task');
    const artifact = done.artifacts[0];
    await fs.appendFile(path.isAbsolute(artifact.path) ? artifact.path : path.join(root, artifact.path), '\nedited by hand\n');

    const host = await openService();
    await host.recovered();

    const after = await latest('md-task');
    expect(after.status).toBe('waiting_human');
    expect(after.resume_hint).toMatch(/artifacts changed/);
  }, 60_000);
});

/**
 * Run `body` with a folder outside the directory that holds a note no page may read, and a folder of notes inside
 * the directory (`notes`); the outside folder is removed after.
 */
async function withOutsideFolder(body: (outside: string) => Promise<void>): Promise<void> {
  const outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-outside-')));
  try {
    await fs.writeFile(path.join(outside, 'secret.md'), '# Secret\n\nNot for the page to read.\n');
    await fs.mkdir(path.join(root, 'notes'));
    await fs.writeFile(path.join(root, 'notes', 'a.md'), '# A\n\nThe first note.\n');
    await body(outside);
  } finally {
    await fs.rm(outside, { recursive: true, force: true });
  }
}

describe('the options of a task the inspector starts', () => {
  it('name folders inside the directory only: ../, an absolute path and a symbolic link out are refused, nothing written', async () => {
    await withOutsideFolder(async (outside) => {
      await fs.symlink(outside, path.join(root, 'link-out'));
      const host = await openService();
      const refusals: [Record<string, unknown>, RegExp][] = [
        [{ input: path.relative(root, outside) }, /--input folder .* is refused: it climbs out with ".."/],
        [{ input: outside }, /--input folder .* is refused: it names a folder outside the directory/],
        [{ input: 'link-out' }, /--input folder "link-out" is refused: it leads outside through a symbolic link/],
        [{ input: 'notes', output: '../escape-out' }, /--output folder "..\/escape-out" is refused/],
      ];
      for (const [options, message] of refusals) {
        await expect(host.startTask({ agent: 'md-summarizer', taskId: 'escape', options, mode: 'manual' })).rejects.toThrow(message);
        expect(await openStore(root).getTask('escape')).toBeNull();
      }
      expect(await fs.readdir(outside)).toEqual(['secret.md']);
      await expect(fs.stat(path.join(path.dirname(root), 'escape-out'))).rejects.toMatchObject({ code: 'ENOENT' });

      // A folder inside it is read and written as ever, named relative to it or by its absolute path.
      for (const [taskId, input] of [
        ['inside', 'notes'],
        ['inside-absolute', path.join(root, 'notes')],
      ]) {
        const finished = exited(taskId);
        await host.startTask({ agent: 'md-summarizer', taskId, options: { input }, mode: 'manual' });
        await finished;
        expect((await latest(taskId)).status).toBe('done');
      }
    });
  }, 60_000);
});

describe('the options of a command agent the inspector starts', () => {
  it('are said to come from the inspector, and the Python md-summarizer refuses a folder outside the directory, writing nothing', async () => {
    await withOutsideFolder(async (outside) => {
      // The Python example under a name of its own: the built-in md-summarizer would take its name first.
      const program = [
        'import dataclasses, sys',
        `sys.path[:0] = [${JSON.stringify(path.join(repo, 'python', 'examples'))}, ${JSON.stringify(path.join(repo, 'python'))}]`,
        'import md_summarizer, waystation',
        'sys.exit(waystation.main(dataclasses.replace(md_summarizer.agent, name="md-summarizer-py")))',
      ].join('\n');
      await fs.writeFile(path.join(root, 'md_py.py'), program);
      await fs.writeFile(
        path.join(root, 'waystation.config.json'),
        JSON.stringify({ agents: [{ name: 'md-summarizer-py', command: ['python3', 'md_py.py'] }] }),
      );
      const host = await openService();
      for (const [options, message] of [
        [{ input: outside }, /--input folder .* is refused: it names a folder outside the directory/],
        [{ input: '../' + path.basename(outside) }, /--input folder .* is refused: it climbs out with ".."/],
        [{ input: 'notes', output: outside }, /--output folder .* is refused: it names a folder outside the directory/],
      ] as const) {
        await expect(host.startTask({ agent: 'md-summarizer-py', taskId: 'escape', options, mode: 'manual' })).rejects.toThrow(message);
        expect(await openStore(root).getTask('escape')).toBeNull();
      }
      expect(await fs.readdir(outside)).toEqual(['secret.md']);

      const finished = exited('inside');
      await host.startTask({ agent: 'md-summarizer-py', taskId: 'inside', options: { input: 'notes' }, mode: 'manual' });
      await finished;
      expect(await latest('inside')).toMatchObject({
        status: 'done',
        agent: { name: 'md-summarizer-py', command: ['python3', 'md_py.py'] },
      });
    });
  }, 60_000);
});

describe('a resume or an approval that cannot run', () => {
  it('is refused at once with the reason, no process started: done, halted, no plan waiting, driven by a live runner', async () => {
    await openStore(root).create(makeCheckpoint('finished', 2, { status: 'done' }));
    await runInProcess('checkpoint-demo', 'rejected', 'confirm');
    await runInProcess('checkpoint-demo', 'busy', 'manual');
    const host = await openService();
    await host.rejectResume({ taskId: 'rejected', reason: 'not this plan' });
    await expect.poll(async () => (await latest('rejected')).status, { timeout: 20_000 }).toBe('halted');
    const held = await openStore(root).acquireLease('busy', { owner: 'another-runner', heartbeatMs: 0 });
    events = [];

    await expect(host.resumeTask({ taskId: 'finished' })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('already done'),
    });
    await expect(host.approveResume({ taskId: 'finished' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(host.resumeTask({ taskId: 'rejected' })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('is halted'),
    });
    await expect(host.approveResume({ taskId: 'busy' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(host.resumeTask({ taskId: 'busy' })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('being driven by another runner'),
    });
    // Not one worker was started for them.
    expect(events.filter((e) => e.type === 'runner' && e.state === 'started')).toEqual([]);
    await held.release();
  }, 60_000);
});

describe('approvals through the API record who decided', () => {
  it('records the `by` of approveResume and rejectResume in the decisions', async () => {
    await runInProcess('checkpoint-demo', 'to-approve', 'confirm');
    await runInProcess('checkpoint-demo', 'to-reject', 'confirm');
    expect((await latest('to-approve')).recovery.pending_approval).not.toBeNull();
    const host = await openService();

    const finished = exited('to-approve');
    await host.approveResume({ taskId: 'to-approve', by: 'dana' });
    await finished;
    const approved = await latest('to-approve');
    expect(approved.recovery.decisions.at(-1)).toMatchObject({ decision: 'approved', by: 'dana' });
    expect(approved.status).toBe('done');

    await host.rejectResume({ taskId: 'to-reject', reason: 'the plan reruns too much', by: 'eli' });
    const rejected = await latest('to-reject');
    expect(rejected.status).toBe('halted');
    expect(rejected.recovery.decisions.at(-1)).toMatchObject({ decision: 'rejected', by: 'eli', reason: 'the plan reruns too much' });
  }, 60_000);
});

describe('an edit chosen on an older version', () => {
  it('is refused by the runner under the task lock, and writes nothing', async () => {
    await runInProcess('checkpoint-demo', 'edited', 'manual');
    const failed = await latest('edited');
    expect(failed.status).toBe('failed');
    const runner = createHostRunner({ env: workerEnv(), workerLaunch: bundle.workerLaunch });
    try {
      const stepId = failed.plan.find((s) => s.status === 'failed')!.id;
      await expect(runner.edit(root, 'edited', stepId, 'no errors found', { expectedVersion: failed.version - 1 })).rejects.toMatchObject({
        code: 'moved',
        message: expect.stringContaining('Nothing was written'),
      });
      expect((await latest('edited')).version).toBe(failed.version);
      // At the version it was chosen on, the same edit goes through.
      const written = await runner.edit(root, 'edited', stepId, 'no errors found', { expectedVersion: failed.version });
      expect(written.version).toBe(failed.version + 1);
    } finally {
      await runner.shutdown();
    }
  }, 60_000);
});

describe("the app's Resume of a module agent", () => {
  it('relaunches the recorded module in a worker and finishes the task', async () => {
    const agentProject = await writeAgentProject(root, 'gated.ts', GATED);
    let err = '';
    const code = await runCli(['run', agentProject.root, agentProject.moduleFile, '--task', 'g', '--gate', agentProject.gate], {
      out: () => {},
      err: (s) => void (err += s),
      color: false,
    });
    expect(code, err).toBe(RunExit.failed);
    await fs.writeFile(agentProject.gate, 'open');

    // The module is TypeScript: these workers start from the sources, not the bundle.
    service = new HostService({ host: 'web', runner: createHostRunner({ env: workerEnv() }), trust: trustAll, recoverOnOpen: false });
    service.subscribe((e) => void events.push(e));
    await service.open(agentProject.root);
    const before = (await openStore(agentProject.root).getTask('g'))!.checkpoint!;
    expect(before.status).toBe('failed');

    const finished = exited('g');
    const result = await service.resumeTask({ taskId: 'g' });
    expect(result.taskId).toBe('g');
    await finished;

    const after = (await openStore(agentProject.root).getTask('g'))!.checkpoint!;
    expect(after.status).toBe('done');
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.agent).toEqual(before.agent);
    expect(events.some((e) => e.type === 'runner' && e.taskId === 'g' && e.state === 'exited' && !/refused|cannot/i.test(e.detail))).toBe(
      true,
    );
    expect((await service.getTask({ taskId: 'g' })).agent_status).toMatchObject({ origin: 'module', available: true });
  }, 60_000);
});
