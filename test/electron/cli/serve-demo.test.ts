import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../electron/cli/main.js';
import { DEMO_MODEL_LATENCY_MS, demoRunEnv } from '../../../electron/host/demo-directory.js';

const bin = fileURLToPath(new URL('../../../bin/waystation.mjs', import.meta.url));
let tmp: string;

async function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await runCli(args, { out: (s) => (stdout += s), err: (s) => (stdout += s), color: false });
  return { code, stdout };
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-serve-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('waystation demo', () => {
  it('generates a task in each state and both article formats, once', async () => {
    const dir = path.join(tmp, 'demo');
    const first = await cli(['demo', dir]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('generated');
    const { stdout } = await cli(['ls', dir, '--json']);
    const tasks = JSON.parse(stdout) as Array<{
      task_id: string;
      display_status: string;
      mode: string | null;
      format: string;
      agent_name: string | null;
    }>;
    const byId = new Map(tasks.map((t) => [t.task_id, t]));
    expect(byId.get('demo-done')?.display_status).toBe('done');
    expect(byId.get('demo-failed')?.display_status).toBe('failed');
    expect(byId.get('demo-waiting-approval')?.display_status).toBe('waiting_approval');
    // Cut off mid-run in auto mode: interrupted until a host opens the directory and resumes it (see the serve test).
    expect(byId.get('notes-running')).toMatchObject({ display_status: 'interrupted', mode: 'auto' });
    // The summary edited after the run changed size: the listing's stat check shows it, no hashing needed.
    expect(byId.get('notes-drifted')?.display_status).toBe('drifted');
    expect(byId.get('notes-done')?.display_status).toBe('done');
    expect((await cli(['ls', dir])).stdout).toMatch(/notes-drifted\s+\S*drifted/);
    expect(tasks.map((t) => t.agent_name)).toEqual(expect.arrayContaining(['checkpoint-demo', 'md-summarizer']));
    expect(tasks.map((t) => t.format)).toEqual(expect.arrayContaining(['article-task-json', 'article-checkpoint-json']));
    const verify = await cli(['verify', dir, 'notes-drifted', '--json']);
    expect(JSON.parse(verify.stdout).drift).toBe(true);

    const before = await fs.readFile(path.join(dir, 'demo-done', 'checkpoint.json'), 'utf8');
    const again = await cli(['demo', dir]);
    expect(again.stdout).toContain('already exists');
    expect(await fs.readFile(path.join(dir, 'demo-done', 'checkpoint.json'), 'utf8')).toBe(before);
  });

  it('slows the offline model in a demo directory only, and only when no latency is set', async () => {
    const dir = path.join(tmp, 'demo-pace');
    await cli(['demo', dir]);
    expect(demoRunEnv(dir, { PATH: '/bin' }).WAYSTATION_OFFLINE_LATENCY_MS).toBe(String(DEMO_MODEL_LATENCY_MS));
    expect(demoRunEnv(dir, { WAYSTATION_OFFLINE_LATENCY_MS: '0' }).WAYSTATION_OFFLINE_LATENCY_MS).toBe('0');
    expect(demoRunEnv(tmp, { PATH: '/bin' }).WAYSTATION_OFFLINE_LATENCY_MS).toBeUndefined();
  });

  it('leaves an existing folder that is not a demo untouched', async () => {
    const dir = path.join(tmp, 'mine');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'notes.txt'), 'mine');
    expect((await cli(['demo', dir])).stdout).toContain('already exists');
    expect(await fs.readdir(dir)).toEqual(['notes.txt']);
  });
});

/**
 * How long one wait on the served host may take: each test waits for at most
 * three such things, well inside its timeout, so a failure names what never
 * happened and shows the server's output rather than only timing out.
 */
const WAIT_MS = 15_000;
const TEST_TIMEOUT_MS = 4 * WAIT_MS;

/** Resolves with `promise`, or rejects after WAIT_MS with `what` and the server's output so far. */
function within<T>(promise: Promise<T>, what: string, output: () => string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${WAIT_MS} ms; server output:\n${output()}`)), WAIT_MS);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e)),
    );
  });
}

/** `waystation serve DIR ...args` in a child process, once it printed its tokenised URL. */
async function serve(dir: string, args: string[] = []) {
  // A model answering in half a second keeps a resumed task running long enough to be seen, and the test short.
  const env = { ...process.env, NO_COLOR: '1', WAYSTATION_OFFLINE_LATENCY_MS: '500', OPENAI_API_KEY: '' };
  const child = spawn(process.execPath, [bin, 'serve', dir, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const state = { output: '' };
  child.stderr.on('data', (c: Buffer) => (state.output += c.toString()));
  const printed = new Promise<string>((resolve) => {
    child.stdout.on('data', (c: Buffer) => {
      state.output += c.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/.exec(state.output);
      if (m) resolve(m[0]);
    });
  });
  const url = await within(printed, 'no URL was printed', () => state.output);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, url, exited, state };
}

/** Resolves once the server's output holds a line matching `pattern`, or rejects after WAIT_MS with `what` and the output. */
async function printedLine(state: { output: string }, pattern: RegExp, what: string): Promise<void> {
  for (const deadline = Date.now() + WAIT_MS; !pattern.test(state.output); await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() > deadline) throw new Error(`${what} within ${WAIT_MS} ms; server output:\n${state.output}`);
}

type Listed = { task_id: string; display_status: string };
const statusOf = (tasks: Listed[]) => Object.fromEntries(tasks.map((t) => [t.task_id, t.display_status]));

/** GET /api/tasks of a served host, once or polled until a predicate holds. */
function servedList(url: string, output: () => string) {
  const { origin, searchParams } = new URL(url);
  const token = searchParams.get('token')!;
  const list = async () =>
    (await (
      await fetch(`${origin}/api/tasks`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(WAIT_MS) })
    ).json()) as Listed[];
  /** Poll the served list until `predicate` holds, and return that list. */
  const listUntil = async (predicate: (status: Record<string, string>) => boolean, what: string) => {
    let last: Record<string, string> = {};
    for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const tasks = await list();
      last = statusOf(tasks);
      if (predicate(last)) return tasks;
    }
    throw new Error(
      `the served demo showed no ${what} within ${WAIT_MS} ms; last list: ${JSON.stringify(last)}; server output:\n${output()}`,
    );
  };
  return { origin, token, list, listUntil };
}

describe('waystation serve', () => {
  it(
    "prints a tokenised URL, runs the demo's interrupted task to done, serves GET /api/tasks as ls --json prints it, and stops cleanly on SIGTERM",
    async () => {
      const dir = path.join(tmp, 'served-demo');
      await cli(['demo', dir]);
      const { child, url, exited, state } = await serve(dir);
      const output = () => state.output;
      try {
        const { origin, token, listUntil, list } = servedList(url, output);
        const unauthorised = await fetch(`${origin}/api/tasks`);
        expect(unauthorised.status).toBe(401);
        // The host resumes the auto-mode task it finds interrupted: a task in each state at once.
        const running = statusOf(await listUntil((s) => s['notes-running'] === 'running', 'notes-running as running'));
        expect(running).toMatchObject({
          'notes-running': 'running',
          'demo-done': 'done',
          'demo-failed': 'failed',
          'demo-waiting-approval': 'waiting_approval',
          'notes-drifted': 'drifted',
        });
        await listUntil((s) => s['notes-running'] === 'done', 'notes-running finished');
        const served = await list();
        expect(served).toEqual(JSON.parse((await cli(['ls', dir, '--json'])).stdout));
        const one = (await (await fetch(`${origin}/api/tasks/demo-done?token=${token}`)).json()) as { summary: { task_id: string } };
        expect(one.summary.task_id).toBe('demo-done');
        // The console says what the host ran, in order: the process, the agent's own lines, how it ended. The last
        // version is listed before the worker has exited, so the end's line may still be on its way.
        await printedLine(state, /notes-running exited: /, 'the host printed no exit of notes-running');
        expect(output()).toMatch(
          /notes-running started: resume in process \d+\n(.*\n)*.*notes-running publish-index: done\n(.*\n)*.*notes-running exited: task notes-running finished/,
        );
      } finally {
        child.kill('SIGTERM');
      }
      expect(await within(exited, 'the server did not exit on SIGTERM', output)).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    '--read-only resumes nothing, says it is read-only, and refuses every action with the reason',
    async () => {
      const dir = path.join(tmp, 'read-only-demo');
      await cli(['demo', dir]);
      const before = (await cli(['ls', dir, '--json'])).stdout;
      const { child, url, exited, state } = await serve(dir, ['--read-only']);
      try {
        const { origin, searchParams } = new URL(url);
        const headers = { Authorization: `Bearer ${searchParams.get('token')!}`, 'content-type': 'application/json' };
        const rpc = (method: string, body: unknown) =>
          fetch(`${origin}/api/rpc/${method}`, { method: 'POST', headers, body: JSON.stringify(body) });
        expect(await (await rpc('getDirectory', {})).json()).toMatchObject({ root: await fs.realpath(dir), host: 'web', read_only: true });
        const refused = await rpc('resumeTask', { taskId: 'notes-running' });
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('started read-only');
        // The interrupted auto-mode task was not resumed: a second later the directory is as it was.
        await new Promise((r) => setTimeout(r, 1000));
        expect((await cli(['ls', dir, '--json'])).stdout).toBe(before);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await within(exited, 'the server did not exit on SIGTERM', () => state.output)).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    '--quiet prints the URL and nothing of what the host runs',
    async () => {
      const dir = path.join(tmp, 'quiet-demo');
      await cli(['demo', dir]);
      const { child, url, exited, state } = await serve(dir, ['--quiet']);
      const output = () => state.output;
      try {
        await servedList(url, output).listUntil((s) => s['notes-running'] === 'done', 'notes-running finished');
        expect(output()).toMatch(/Press Ctrl\+C to stop\.\n$/);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await within(exited, 'the server did not exit on SIGTERM', output)).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it('refuses a bad port', async () => {
    await cli(['demo', path.join(tmp, 'demo')]);
    const { code, stdout } = await cli(['serve', path.join(tmp, 'demo'), '--port', 'eighty']);
    expect(code).toBe(2);
    expect(stdout).toContain('--port');
  });
});
