/**
 * What the operations a person runs on any task (stop, edit, rewind, fork)
 * name as the way to continue it: for a task another program wrote, that
 * program, since `waystation resume` refuses such a task; for a task whose
 * agent Waystation runs, `waystation resume`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { captureCli } from '../cli/capture-cli.js';

let root: string;
let store: CheckpointStore;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-continue-'));
  store = openStore(root);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** The task's saved resume hint. */
async function hintOf(taskId: string): Promise<string> {
  return (await store.getTask(taskId))?.checkpoint?.resume_hint ?? '';
}

const BY_ITS_PROGRAM = (id: string) => `run the program that wrote ${id} again (agent "reporter"); Waystation does not resume it`;

describe('what continues a task', () => {
  it('another program wrote: stop, edit, rewind and fork name that program, not `waystation resume`, which refuses it', async () => {
    // A Python program's task, cut off mid-run: running, no holder.
    await store.create(makeCheckpoint('py', 3, { agent: { name: 'reporter', options: {} }, resume_hint: 'run `python3 report.py` again' }));
    const refused = await captureCli('resume', root, 'py', '--trust');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('written by another program');
    // The refusal says what the task's own hint says: the program that continues it.
    expect(refused.err).toContain('The task was left untouched. Its resume hint: run `python3 report.py` again');

    const stop = await captureCli('stop', root, 'py', '--by', 'ada');
    expect(stop.code).toBe(0);
    expect(stop.out).toContain(`next: continue: ${BY_ITS_PROGRAM('py')}\n`);
    expect(await hintOf('py')).toMatch(new RegExp(`^stopped by ada at \\S+; continue with ${escape(BY_ITS_PROGRAM('py'))}$`));

    const edit = await captureCli('edit', root, 'py', 's1', '--value', '"set by hand"', '--by', 'ada');
    expect(edit.code).toBe(0);
    expect(edit.out).toContain(`next: continue: ${BY_ITS_PROGRAM('py')}\n`);
    expect(await hintOf('py')).toBe(`s1 was set by ada; resume continues at s2 (step 2): ${BY_ITS_PROGRAM('py')}`);

    const rewind = await captureCli('rewind', root, 'py', 's1', '--yes', '--by', 'ada');
    expect(rewind.code).toBe(0);
    expect(rewind.out).toContain(`next: run it: ${BY_ITS_PROGRAM('py')}\n`);
    expect(await hintOf('py')).toBe(`rewound to s1 by ada: resume reruns 3 step(s): ${BY_ITS_PROGRAM('py')}`);

    const fork = await captureCli('fork', root, 'py', 'latest', '--task', 'py-2', '--by', 'ada');
    expect(fork.code).toBe(0);
    expect(fork.out).toContain(`next: continue: ${BY_ITS_PROGRAM('py-2')}\n`);
    for (const r of [stop, edit, rewind, fork]) expect(r.out).not.toContain('waystation resume');
  }, 30_000);

  it('whose agent Waystation runs: `waystation resume`, the directory filled in', async () => {
    await store.create(makeCheckpoint('demo', 3, { agent: { name: 'checkpoint-demo', options: {} } }));
    const stop = await captureCli('stop', root, 'demo', '--by', 'ada');
    expect(stop.code).toBe(0);
    expect(stop.out).toContain(`next: continue: waystation resume ${root} demo\n`);
    expect(await hintOf('demo')).toMatch(/; continue with `waystation resume <DIR> demo`$/);
  }, 30_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('a fork of a version mid-run', () => {
  it('is named interrupted, as the task list names it, since no run drives it', async () => {
    await store.create(makeCheckpoint('live', 3, { agent: { name: 'checkpoint-demo', options: {} } }));
    const fork = await captureCli('fork', root, 'live', 'latest', '--task', 'live-2');
    expect(fork.code).toBe(0);
    expect(fork.out).toMatch(/^live-2 interrupted \(version 1\)\n/);
    expect(fork.out).toContain('task live-2 forked from live at version 1 (interrupted: nothing runs it until it is resumed)');
    const ls = await captureCli('ls', root);
    expect(ls.out).toMatch(/live-2\s+interrupted/);
  }, 30_000);
});
