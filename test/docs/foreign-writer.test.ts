/**
 * A task written by a small Python writer that follows docs/FORMAT.md and
 * imports nothing of Waystation's is listed, inspected, diffed and verified
 * like a native one, by the store, the app's host and the CLI's --json output;
 * every checkpoint it writes passes the published JSON Schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { runCli } from '../../electron/cli/main.js';
import { HostService } from '../../electron/host/host-service.js';
import { openStore } from '../../electron/store/directory-store.js';
import { agentStatus } from '../../electron/runtime/agent-status.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writer = path.join(repo, 'test/fixtures/foreign-writer/write_task.py');
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
  it('writes only checkpoints that the published JSON Schema accepts, in one-line version envelopes', async () => {
    const schema = JSON.parse(await fs.readFile(path.join(repo, 'docs/checkpoint.schema.json'), 'utf8')) as Record<string, unknown>;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const accepts = (doc: unknown, file: string): void => {
      expect(validate(doc), `${file}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };

    const task = path.join(root, 'py-task');
    accepts(JSON.parse(await fs.readFile(path.join(task, 'checkpoint.json'), 'utf8')), 'checkpoint.json');
    const names = (await fs.readdir(path.join(task, 'versions'))).sort();
    expect(names).toEqual(['00000001.json', '00000002.json', '00000003.json']);
    for (const [i, name] of names.entries()) {
      const lines = (await fs.readFile(path.join(task, 'versions', name), 'utf8')).split('\n');
      const envelope = JSON.parse(lines[0]) as {
        format: string;
        version: number;
        kind: string;
        checkpoint: { version: number; schema_version: number };
      };
      expect(Object.keys(envelope).slice(0, 3)).toEqual(['format', 'version', 'kind']);
      expect(envelope).toMatchObject({ format: 'waystation-version', version: i + 1, kind: 'full' });
      expect(envelope.checkpoint.version).toBe(i + 1);
      accepts(envelope.checkpoint, `versions/${name}`);
    }
    // A checkpoint the schema refuses is one the store refuses too: the validator is not vacuous.
    const stale = JSON.parse(await fs.readFile(path.join(task, 'checkpoint.json'), 'utf8')) as Record<string, unknown>;
    expect(validate({ ...stale, schema_version: 2 })).toBe(false);
  });

  it('uses both documented blob forms: a blob file and a blob carried by its version file', async () => {
    const cp = (await openStore(root).getTask('py-task'))!.checkpoint!;
    expect(cp.plan[0].result_ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(cp.history.head).toMatch(/^sha256:[0-9a-f]{64}@2$/);
    const hex = cp.plan[0].result_ref!.slice('sha256:'.length);
    expect(await fs.readdir(path.join(root, 'py-task/blobs'))).toEqual([hex]);
    const v2 = (await fs.readFile(path.join(root, 'py-task/versions/00000002.json'), 'utf8')).split('\n');
    expect(v2).toHaveLength(3); // envelope, the history chunk, and the final line break
    expect(JSON.parse(v2[1])).toMatchObject({ prev: null });
  });

  it('is listed, shown, diffed and verified by the app host', async () => {
    const service = new HostService({ host: 'web' });
    try {
      await service.open(root);
      const row = (await service.listTasks()).find((t) => t.task_id === 'py-task');
      expect(row).toMatchObject({ status: 'failed', version: 3 });
      const detail = await service.getTask({ taskId: 'py-task' });
      expect(detail.problems).toEqual([]);
      expect(detail.read_only).toBe(false);
      expect(detail.checkpoint).toMatchObject({ version: 3, agent: { name: 'python-word-count' } });
      expect((await service.getTask({ taskId: 'py-task', version: 2 })).checkpoint).toMatchObject({ phase: 'reporting' });
      expect((await service.getMessages({ taskId: 'py-task' })).messages.map((m) => m.content)).toEqual(['count: one two three', '3']);
      expect(await service.getStepResult({ taskId: 'py-task', stepId: 'count' })).toEqual({ value: { words: 3 }, found: true });
      const diff = await service.diffVersions({ taskId: 'py-task', a: 2, b: 3 });
      expect(diff.summary.step_transitions).toEqual([expect.objectContaining({ id: 'report', from: 'pending', to: 'failed' })]);
      const verified = await service.verifyTask({ taskId: 'py-task' });
      expect(verified).toMatchObject({ ok: true, drift: false });
      // Its agent is not one Waystation can start: the task view says who wrote it, not "built-in".
      const status = detail.agent_status!;
      expect(status).toMatchObject({ name: 'python-word-count', origin: 'foreign', available: false });
      expect(status.problem).toContain('written by another program (agent "python-word-count"');
      expect(status.problem).toContain('not resumed from Waystation');
    } finally {
      await service.close();
    }
  });

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
    expect(await agentStatus(root, entry.checkpoint!)).toMatchObject({ kind: 'foreign', available: false });
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

  it('is refused a resume with the reason, and left untouched', async () => {
    const resumed = await cliJson('resume', root, 'py-task', '--trust');
    expect(resumed.code).not.toBe(0);
    const refusal = resumed.json as { error: string; message: string };
    expect(refusal.error).toBe('agent-unavailable');
    expect(refusal.message).toContain('written by another program (agent "python-word-count"');
    expect(refusal.message).toContain('The task was left untouched');
    expect((await openStore(root).history('py-task')).map((v) => v.version)).toEqual([1, 2, 3]);
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
