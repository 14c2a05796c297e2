/**
 * A task written by a small Python writer that follows docs/FORMAT.md and
 * imports nothing of Waystation's is listed, inspected, diffed and verified
 * like a native one, by the store and by the CLI's --json output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../electron/cli/main.js';
import { openStore } from '../../electron/store/directory-store.js';

const writer = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/foreign-writer/write_task.py');
let root: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-foreign-'));
  execFileSync('python3', [writer, root, 'py-task'], { stdio: 'pipe' });
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function cliJson(...args: string[]): Promise<{ code: number; json: unknown; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli([...args, '--json'], { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  return { code, json: out ? JSON.parse(out) : null, err };
}

describe('a task written in Python', () => {
  it('is a native, writable-format task to the store, with its blobs and history', async () => {
    const store = openStore(root);
    const entry = (await store.getTask('py-task'))!;
    expect(entry.format).toBe('waystation');
    expect(entry.problems).toEqual([]);
    expect(entry.checkpoint!.version).toBe(3);
    expect(entry.checkpoint!.status).toBe('failed');
    expect((await store.history('py-task')).map((v) => v.version)).toEqual([1, 2, 3]);
    expect(await store.readBlob('py-task', entry.checkpoint!.plan[0].result_ref!)).toEqual({ words: 3 });
    expect((await store.readHistory('py-task')).map((m) => m.content)).toEqual(['count: one two three', '3']);
    expect((await store.readEvents('py-task')).map((e) => e.version)).toEqual([1, 2, 3]);
  });

  it('is listed and shown by the CLI', async () => {
    const ls = await cliJson('ls', root);
    expect(ls.code).toBe(0);
    const row = (ls.json as { task_id: string; status: string; version: number }[]).find((t) => t.task_id === 'py-task');
    expect(row).toMatchObject({ status: 'failed', version: 3 });

    const show = await cliJson('show', root, 'py-task', '--version', '2');
    expect(show.code).toBe(0);
    expect(show.json).toMatchObject({ version: 2, phase: 'reporting', agent: { name: 'python-word-count' } });
  });

  it('is diffed version against version', async () => {
    const diff = await cliJson('diff', root, 'py-task', '2', '3');
    expect(diff.code).toBe(0);
    const summary = (diff.json as { summary: { step_transitions: { id: string; from: string; to: string }[] } }).summary;
    expect(summary.step_transitions).toEqual([expect.objectContaining({ id: 'report', from: 'pending', to: 'failed' })]);
  });

  it('is verified against the disk: ok as written, drift once its artifact changes', async () => {
    const ok = await cliJson('verify', root, 'py-task');
    expect(ok.code).toBe(0);
    expect(ok.json).toMatchObject({ ok: true, drift: false });

    await fs.writeFile(path.join(root, 'outputs/py-task/words.txt'), 'words: 4\n');
    const drifted = await cliJson('verify', root, 'py-task');
    expect(drifted.code).toBe(1);
    expect(drifted.json).toMatchObject({ ok: false, drift: true });
  });
});
