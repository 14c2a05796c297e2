import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../electron/cli/main.js';

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
    const tasks = JSON.parse(stdout) as Array<{ task_id: string; status: string; display_status: string; format: string; agent_name: string | null }>;
    const byId = new Map(tasks.map((t) => [t.task_id, t]));
    expect(byId.get('demo-done')?.status).toBe('done');
    expect(byId.get('demo-failed')?.status).toBe('failed');
    expect(byId.get('demo-waiting-approval')?.status).toBe('waiting_approval');
    expect(byId.get('notes-running')?.status).toBe('running');
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

  it('leaves an existing folder that is not a demo untouched', async () => {
    const dir = path.join(tmp, 'mine');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'notes.txt'), 'mine');
    expect((await cli(['demo', dir])).stdout).toContain('already exists');
    expect(await fs.readdir(dir)).toEqual(['notes.txt']);
  });
});

describe('waystation serve', () => {
  it('prints a tokenised URL, serves GET /api/tasks as ls --json lists them, and stops cleanly on SIGTERM', async () => {
    const dir = path.join(tmp, 'demo');
    await cli(['demo', dir]);
    const child = spawn(process.execPath, [bin, 'serve', dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${output}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        output += c.toString();
        const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const { origin, searchParams } = new URL(url);
      const token = searchParams.get('token')!;
      const unauthorised = await fetch(`${origin}/api/tasks`);
      expect(unauthorised.status).toBe(401);
      const served = await (await fetch(`${origin}/api/tasks`, { headers: { Authorization: `Bearer ${token}` } })).json();
      // ls --json adds each task's steps to the summaries the API lists.
      const listed = (JSON.parse((await cli(['ls', dir, '--json'])).stdout) as { plan: unknown }[]).map(({ plan: _plan, ...summary }) => summary);
      expect(served).toEqual(listed);
      const one = (await (await fetch(`${origin}/api/tasks/demo-done?token=${token}`)).json()) as { summary: { task_id: string } };
      expect(one.summary.task_id).toBe('demo-done');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('refuses a bad port', async () => {
    const { code, stdout } = await cli(['serve', path.join(tmp, 'demo'), '--port', 'eighty']);
    expect(code).toBe(2);
    expect(stdout).toContain('--port');
  });
});
