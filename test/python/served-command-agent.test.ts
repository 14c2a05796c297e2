/**
 * A Python command agent through the app's own API, as the inspector drives it:
 * `waystation serve` lists it, starts it (New task), shows its lines on the
 * console, reports its task and its agent, stops it (Stop) and resumes it; opened read-only,
 * the same directory offers it nowhere and runs nothing.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distrustDirectory } from '../../electron/runtime/directory-trust.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repo, 'bin/waystation.mjs');
const WAIT_MS = 30_000;
let root: string;

const AGENT = `
import os, sys, time
import waystation
from waystation import PlannedStep

def greet(t):
    if os.path.exists(os.path.join(t.root, "slow")):
        time.sleep(1.5)
    return "hello " + t.options["who"]

def run(t):
    t.step("greet", lambda: greet(t))
    def check():
        if not os.path.exists(os.path.join(t.root, "ok")):
            raise RuntimeError("no ok file yet")
        return "checked"
    t.step("check", check)

agent = waystation.Agent(name="py-greeter", description="greets, then checks",
    options={"type": "object", "properties": {"who": {"type": "string", "default": "world"}}},
    plan=[PlannedStep("greet", "greet"), PlannedStep("check", "check")], run=run)
sys.exit(waystation.main(agent))
`;

async function serve(args: string[] = []) {
  const env = { ...process.env, NO_COLOR: '1', WAYSTATION_OFFLINE_LATENCY_MS: '0', OPENAI_API_KEY: '', PYTHONPATH: path.join(repo, 'python') };
  const child = spawn(process.execPath, [bin, 'serve', root, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  const state = { output: '' };
  child.stderr.on('data', (c: Buffer) => (state.output += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL was printed; output:\n${state.output}`)), WAIT_MS);
    child.stdout.on('data', (c: Buffer) => {
      state.output += c.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/.exec(state.output);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
  });
  const { origin, searchParams } = new URL(url);
  const headers = { Authorization: `Bearer ${searchParams.get('token')!}`, 'content-type': 'application/json' };
  const get = async (p: string) => (await fetch(`${origin}${p}`, { headers })).json() as Promise<Record<string, unknown>>;
  const rpc = async (method: string, input: unknown) => {
    const res = await fetch(`${origin}/api/rpc/${method}`, { method: 'POST', headers, body: JSON.stringify(input) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const statusUntil = async (taskId: string, wanted: string) => {
    let last: unknown = null;
    for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const listed = (await get('/api/tasks')) as unknown as { task_id: string; display_status: string }[];
      last = listed.find((t) => t.task_id === taskId)?.display_status;
      if (last === wanted) return;
    }
    throw new Error(`task ${taskId} never became ${wanted} (last: ${String(last)}); output:\n${state.output}`);
  };
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  return { get, rpc, statusUntil, stop, state };
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-served-py-'));
  await fs.writeFile(path.join(root, 'greeter.py'), AGENT);
  await fs.writeFile(
    path.join(root, 'waystation.config.json'),
    JSON.stringify({ agents: [{ name: 'py-greeter', command: ['python3', 'greeter.py'], description: 'greets, then checks' }] }),
  );
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('a Python command agent in the served app', () => {
  it('is offered, started as a new task, shown live, and resumed', async () => {
    const host = await serve(['--trust']);
    try {
      const agents = (await host.get('/api/agents')) as unknown as { name: string; origin: string; problem?: string }[];
      expect(agents).toContainEqual(expect.objectContaining({ name: 'py-greeter', origin: 'registered' }));
      expect(agents.find((a) => a.name === 'py-greeter')!.problem).toBeUndefined();

      const started = await host.rpc('startTask', { agent: 'py-greeter', taskId: 'served-1', options: { who: 'Ada' } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      await host.statusUntil('served-1', 'failed');
      expect(host.state.output).toContain('greet (greet): started (attempt 1)');
      const detail = (await host.get('/api/tasks/served-1')) as { agent_status: { origin: string; available: boolean } };
      expect(detail.agent_status).toMatchObject({ origin: 'command', available: true });

      await fs.writeFile(path.join(root, 'ok'), '');
      const resumed = await host.rpc('resumeTask', { taskId: 'served-1' });
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
      await host.statusUntil('served-1', 'done');
    } finally {
      await host.stop();
      await fs.rm(path.join(root, 'ok'), { force: true });
    }
  }, 120_000);

  it("is stopped by the app's Stop at its next step, and resumed by a person", async () => {
    const host = await serve(['--trust']);
    await fs.writeFile(path.join(root, 'slow'), '');
    try {
      const started = await host.rpc('startTask', { agent: 'py-greeter', taskId: 'served-3', mode: 'auto', options: { who: 'Ada' } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      await host.statusUntil('served-3', 'running');
      const stopped = await host.rpc('stopTask', { taskId: 'served-3', reason: 'not now', by: 'grace' });
      expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
      await host.statusUntil('served-3', 'interrupted');
      const detail = (await host.get('/api/tasks/served-3')) as {
        checkpoint: { recovery: { stopped?: { by: string; reason?: string } }; plan: { status: string }[] };
      };
      expect(detail.checkpoint.recovery.stopped).toMatchObject({ by: 'grace', reason: 'not now' });
      expect(detail.checkpoint.plan.map((s) => s.status)).toEqual(['done', 'pending']);

      await fs.rm(path.join(root, 'slow'));
      await fs.writeFile(path.join(root, 'ok'), '');
      const resumed = await host.rpc('resumeTask', { taskId: 'served-3' });
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
      await host.statusUntil('served-3', 'done');
    } finally {
      await host.stop();
      await fs.rm(path.join(root, 'ok'), { force: true });
      await fs.rm(path.join(root, 'slow'), { force: true });
    }
  }, 120_000);

  it.each([
    ['opened read-only', ['--read-only']],
    // The trust the first test gave is taken back: the directory is as if just downloaded.
    ['in a directory not trusted', [], () => distrustDirectory(root)],
  ])('%s, is not offered and never runs', async (_how, args: string[], before?: () => Promise<void>) => {
    await before?.();
    const host = await serve(args);
    try {
      const agents = (await host.get('/api/agents')) as unknown as { name: string }[];
      expect(agents.map((a) => a.name)).not.toContain('py-greeter');
      const refused = await host.rpc('startTask', { agent: 'py-greeter', taskId: 'served-2' });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(refused.body)).toMatch(/read-only|runs no tasks|not trusted/);
      const resumed = await host.rpc('resumeTask', { taskId: 'served-1' });
      expect(resumed.status).toBeGreaterThanOrEqual(400);
    } finally {
      await host.stop();
    }
    await expect(fs.stat(path.join(root, 'served-2'))).rejects.toThrow();
  }, 120_000);
});
