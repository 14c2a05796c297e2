/**
 * Python and TypeScript write the same tasks: what the Python library writes
 * is listed, shown, diffed and verified by the store and the CLI, every
 * version fits the published schema, and a task either language started is
 * continued by the other (python/examples/checkpoint_demo.py and the built-in
 * checkpoint-demo agent share a name, step ids and prompts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { runCli } from '../../electron/cli/main.js';
import { openStore } from '../../electron/store/directory-store.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const demo = path.join(repo, 'python/examples/checkpoint_demo.py');
const cliBin = path.join(repo, 'bin/waystation.mjs');
const quick = { ...process.env, WAYSTATION_OFFLINE_LATENCY_MS: '0' };
let root: string;

async function cliJson(...args: string[]): Promise<{ code: number; json: unknown; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli([...args, '--json'], { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  return { code, json: out ? JSON.parse(out) : null, err };
}

function python(args: string[], env: NodeJS.ProcessEnv = quick): { status: number | null; out: string } {
  const run = spawnSync('python3', [demo, ...args], { env, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

/** A task's message history as the Python library reads it. */
function pythonHistory(taskId: string): unknown {
  const read = spawnSync(
    'python3',
    ['-c', 'import json, sys; from waystation.store import Store; print(json.dumps(Store(sys.argv[1]).read_history(sys.argv[2])))', root, taskId],
    { env: { ...quick, PYTHONPATH: path.join(repo, 'python') }, encoding: 'utf8' },
  );
  expect(read.status, read.stderr).toBe(0);
  return JSON.parse(read.stdout);
}

/** Every version of a task, rebuilt by the TypeScript store, checked against docs/checkpoint.schema.json. */
async function expectEveryVersionValid(taskId: string): Promise<number> {
  const schema = JSON.parse(await fs.readFile(path.join(repo, 'docs/checkpoint.schema.json'), 'utf8')) as object;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  const store = openStore(root);
  const versions = (await store.history(taskId)).map((v) => v.version);
  for (const v of versions) {
    const cp = await store.readVersion(taskId, v);
    expect(validate(cp), `${taskId} version ${v}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  return versions.length;
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-python-'));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('Python writes, TypeScript reads', () => {
  it('lists, shows, diffs and verifies a task the Python demo wrote under its lease', async () => {
    const first = python([root, '--task', 'py-demo']);
    expect(first.status, first.out).toBe(1);
    // The saves under the lease went to a segment: fewer files than versions.
    const files = await fs.readdir(path.join(root, 'py-demo/versions'));
    const ls = await cliJson('ls', root);
    const row = (ls.json as { task_id: string; status: string; version: number }[]).find((t) => t.task_id === 'py-demo')!;
    expect(row).toMatchObject({ status: 'failed' });
    expect(files.length).toBeLessThan(row.version);

    const show = await cliJson('show', root, 'py-demo');
    expect(show.code).toBe(0);
    const cp = show.json as { agent: { name: string }; plan: { id: string; status: string }[]; run: { tokens_in: number } };
    expect(cp.agent.name).toBe('checkpoint-demo');
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'done', 'failed', 'pending']);
    expect(cp.run.tokens_in).toBeGreaterThan(0);

    const diff = await cliJson('diff', root, 'py-demo', String(row.version - 1), String(row.version));
    expect(diff.code).toBe(0);
    const summary = (diff.json as { summary: { step_transitions: { id: string; to: string }[] } }).summary;
    expect(summary.step_transitions).toEqual([expect.objectContaining({ id: 'check-errors', to: 'failed' })]);

    const verify = await cliJson('verify', root, 'py-demo');
    expect(verify.code).toBe(0);
    expect(verify.json).toMatchObject({ ok: true, drift: false });
    const entry = (await openStore(root).getTask('py-demo'))!;
    expect(entry.problems).toEqual([]);
    expect(await openStore(root).readBlob('py-demo', entry.checkpoint!.plan[0].result_ref!)).toEqual(expect.any(String));
    expect(await expectEveryVersionValid('py-demo')).toBe(row.version);
    // Python's writer keeps the history index too: TypeScript reads the history through it, as Python reads it.
    expect(files).toContain('history-index.jsonl');
    const messages = await openStore(root).readHistory('py-demo');
    expect(messages).toHaveLength(entry.checkpoint!.history.count);
    expect(pythonHistory('py-demo')).toEqual(JSON.parse(JSON.stringify(messages)));
  }, 120_000);

  it('is resumed by the TypeScript runtime where the Python run failed', async () => {
    const out = execFileSync('node', [cliBin, 'resume', root, 'py-demo', '--trust'], { env: { ...quick, SKIP_FAILURE: '1' }, encoding: 'utf8' });
    expect(out).toContain('done');
    const cp = (await openStore(root).getTask('py-demo'))!.checkpoint!;
    expect(cp.status).toBe('done');
    expect(cp.plan.map((s) => s.attempts)).toEqual([1, 1, 2, 1]);
    await expectEveryVersionValid('py-demo');
  }, 120_000);

  it('after a kill -9 of the Python runner, is resumed by TypeScript, which takes the lease over', async () => {
    const child = spawn('python3', [demo, root, '--task', 'py-killed'], {
      env: { ...process.env, WAYSTATION_OFFLINE_LATENCY_MS: '400', SKIP_FAILURE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Killed while the second step's model call is under way: the lease is held by a process that is gone.
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stdout.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('write-code (write the code): started')) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const before = (await openStore(root).getTask('py-killed'))!.checkpoint!;
    expect(before.plan[0].status).toBe('done');

    const out = execFileSync('node', [cliBin, 'resume', root, 'py-killed', '--trust'], { env: { ...quick, SKIP_FAILURE: '1' }, encoding: 'utf8' });
    expect(out).toContain('done');
    const after = (await openStore(root).getTask('py-killed'))!.checkpoint!;
    expect(after.status).toBe('done');
    expect(after.plan[0].attempts).toBe(1); // the step done before the kill was not run again
    await expectEveryVersionValid('py-killed');
  }, 120_000);
});

describe('TypeScript writes, Python resumes', () => {
  it('continues a failed task of the built-in checkpoint-demo at its third step', async () => {
    const ts = spawnSync('node', [cliBin, 'run', root, 'checkpoint-demo', '--task', 'ts-demo'], { env: quick, encoding: 'utf8' });
    expect(ts.status, ts.stdout + ts.stderr).toBe(1);
    const resumed = python([root, '--task', 'ts-demo'], { ...quick, SKIP_FAILURE: '1' });
    expect(resumed.status, resumed.out).toBe(0);
    expect(resumed.out).toContain('analyse (analyse the requirement): already done');
    expect(resumed.out).toContain('check-errors (check for errors): started (attempt 2)');
    const cp = (await openStore(root).getTask('ts-demo'))!.checkpoint!;
    expect(cp.status).toBe('done');
    expect(cp.source.kind).toBe('runtime');
    const verify = await cliJson('verify', root, 'ts-demo');
    expect(verify.json).toMatchObject({ ok: true, drift: false });
    await expectEveryVersionValid('ts-demo');
    // The history index TypeScript wrote stops at the versions Python added after it (Python writes none): the
    // history reads the same in both languages, whole.
    await fs.stat(path.join(root, 'ts-demo', 'versions', 'history-index.jsonl'));
    const messages = await openStore(root).readHistory('ts-demo');
    expect(messages).toHaveLength(cp.history.count);
    expect(pythonHistory('ts-demo')).toEqual(JSON.parse(JSON.stringify(messages)));
  }, 120_000);

  it('gives the same results as an uninterrupted TypeScript run: the offline model agrees across languages', async () => {
    const ts = spawnSync('node', [cliBin, 'run', root, 'checkpoint-demo', '--task', 'ts-whole'], {
      env: { ...quick, SKIP_FAILURE: '1' },
      encoding: 'utf8',
    });
    expect(ts.status, ts.stdout + ts.stderr).toBe(0);
    const py = python([root, '--task', 'py-whole'], { ...quick, SKIP_FAILURE: '1' });
    expect(py.status, py.out).toBe(0);
    const store = openStore(root);
    const hashes = async (id: string) =>
      (await store.getTask(id))!.checkpoint!.plan.map((s) => s.result_ref!.replace(/@\d+$/, ''));
    expect(await hashes('py-whole')).toEqual(await hashes('ts-whole'));
  }, 120_000);
});
