/**
 * A start that fails after creating the task leaves a task that says why:
 * an agent that throws before its first step leaves it failed with the
 * reason as its last error; a process that dies right after creating it
 * leaves it interrupted, with the crash in its event log (what `waystation
 * tail` and the inspector's Events tab show). One that dies before creating
 * it is refused, as a start refused before it ran.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';

let root: string;

/** An agent whose first step kills its own process: the task exists (version 1), and nothing more is written. */
const KILLER = `
export default {
  name: 'killer',
  description: 'dies in its first step',
  options: { safeParse: (v) => ({ success: true, data: v }) },
  goal: () => 'die',
  plan: () => [{ id: 'die', name: 'die' }],
  run: async () => { process.kill(process.pid, 'SIGKILL'); await new Promise(() => {}); },
};
`;

/** An agent that throws before its first step, as one preparing its run (opening an input) might. */
const THROWER = `
export default {
  name: 'thrower',
  description: 'throws while preparing',
  options: { safeParse: (v) => ({ success: true, data: v }) },
  goal: () => 'prepare',
  plan: () => [{ id: 'work', name: 'work' }],
  run: async () => { throw new Error('cannot read the input folder notes: ENOENT'); },
};
`;

/** An agent whose process dies while it plans, before the task's first version is written. */
const EARLY = `
export default {
  name: 'early',
  description: 'dies before the task exists',
  options: { safeParse: (v) => ({ success: true, data: v }) },
  goal: () => 'never written',
  plan: () => { process.kill(process.pid, 'SIGKILL'); return []; },
  run: async () => {},
};
`;

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-crashed-start-')));
  await fs.mkdir(path.join(root, 'agents'));
  await fs.writeFile(path.join(root, 'agents/killer.mjs'), KILLER);
  await fs.writeFile(path.join(root, 'agents/thrower.mjs'), THROWER);
  await fs.writeFile(path.join(root, 'agents/early.mjs'), EARLY);
  await fs.writeFile(
    path.join(root, 'waystation.config.json'),
    JSON.stringify({ agents: [{ module: './agents/killer.mjs' }, { module: './agents/thrower.mjs' }, { module: './agents/early.mjs' }] }),
  );
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

describe('a start that fails after creating the task', () => {
  it('leaves the task failed, with the reason as its last error', async () => {
    const outcome = await new Runner({ root }).startRun({ agent: 'thrower', taskId: 'th' });
    expect(outcome.status).toBe('failed');
    expect(outcome.message).toContain('cannot read the input folder notes');
    const cp = (await openStore(root).getTask('th'))!.checkpoint!;
    expect(cp.status).toBe('failed');
    expect(cp.errors.at(-1)?.what).toContain('cannot read the input folder notes: ENOENT');
    expect(cp.resume_hint).toContain('cannot read the input folder notes');
  });

  it('leaves the task interrupted, with the crash in its event log', async () => {
    const outcome = await new Runner({ root }).startRun({ agent: 'killer', taskId: 'k' });
    expect(outcome.crashed).toBe(true);
    expect(outcome.message).toContain('was killed by SIGKILL');
    const store = openStore(root);
    const [listed] = await store.listTasks();
    expect(listed.task_id).toBe('k');
    expect(listed.checkpoint?.status).toBe('running');
    const events = await store.readEvents('k');
    const crash = events.find((e) => e.type === 'runner' && (e.data as { status?: string })?.status === 'crashed');
    expect((crash?.data as { message?: string })?.message).toContain('was killed by SIGKILL');
  });

  it('refuses a start whose process died before it wrote the task: there is no task to resume', async () => {
    const outcome = await new Runner({ root }).startRun({ agent: 'early', taskId: 'e', mode: 'auto' });
    expect(outcome).toMatchObject({ error: 'agent-unavailable', exitCode: 2, status: null, next: null });
    expect(outcome.message).toContain('was killed by SIGKILL before it wrote task e; nothing was written');
    expect(await openStore(root).listTasks()).toEqual([]);
  });
});
