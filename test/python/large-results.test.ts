/**
 * Large results written by the Python library stay readable here: its writer
 * keeps every version file within the readers' 64 MiB limit (a segment starts
 * a new file before it, as electron/store/task-writer.ts does), and a single
 * result over the limit is refused with nothing written, so the task reads,
 * failed at that step, rather than unreadable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../electron/cli/main.js';
import { DEFAULT_MAX_FILE_BYTES, openStore } from '../../electron/store/directory-store.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let root: string;

/** Run a `with waystation.task(...)` block in Python against `root`; resolves to its exit status and output. */
function python(code: string): { status: number | null; out: string } {
  const r = spawnSync('python3', ['-c', code, root], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: path.join(repo, 'python'), WAYSTATION_OFFLINE_LATENCY_MS: '0' },
    timeout: 120_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const EIGHT_LARGE_RESULTS = `
import sys, waystation
with waystation.task(sys.argv[1], "big", plan=[f"s{i}" for i in range(8)] + ["last"]) as t:
    for i in range(8):
        t.step(f"s{i}", lambda i=i: chr(97 + i) * 10_000_000)
    t.step("last", lambda: "small")
`;

const ONE_RESULT_OVER_THE_LIMIT = `
import sys, waystation
try:
    with waystation.task(sys.argv[1], "huge", plan=["a", "b"]) as t:
        t.step("a", lambda: "x" * (64 * 1024 * 1024))
except waystation.StepFailed as err:
    print(err)
`;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-python-large-'));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('large results the Python library writes', () => {
  it('are read back here whole, with every version file within the limit', async () => {
    const run = python(EIGHT_LARGE_RESULTS);
    expect(run.status, run.out).toBe(0);
    const dir = path.join(root, 'big', 'versions');
    for (const name of await fs.readdir(dir)) {
      expect((await fs.stat(path.join(dir, name))).size, name).toBeLessThanOrEqual(DEFAULT_MAX_FILE_BYTES);
    }
    const store = openStore(root);
    const entry = (await store.getTask('big'))!;
    expect(entry.problems).toEqual([]);
    expect(entry.checkpoint!.status).toBe('done');
    const results = await Promise.all(entry.checkpoint!.plan.map((s) => store.readBlob('big', s.result_ref!)));
    expect(results.map((r) => (r as string).length)).toEqual([...Array(8).fill(10_000_000), 5]);

    let err = '';
    const code = await runCli(['show', root, 'big', '--json'], { out: () => undefined, err: (s) => void (err += s), color: false });
    expect(code, err).toBe(0);
  }, 120_000);

  it('leave a task that reads when one result is over the limit: the step failed, naming it and the limit', async () => {
    const run = python(ONE_RESULT_OVER_THE_LIMIT);
    expect(run.status, run.out).toBe(0);
    expect(run.out).toContain('the result of step "a"');
    expect(run.out).toContain('67108864-byte limit');
    expect(run.out).toContain('nothing was written');
    const entry = (await openStore(root).getTask('huge'))!;
    expect(entry.problems).toEqual([]);
    expect(entry.checkpoint!.status).toBe('failed');
    expect(entry.checkpoint!.plan.map((s) => s.status)).toEqual(['failed', 'pending']);
  }, 120_000);
});
