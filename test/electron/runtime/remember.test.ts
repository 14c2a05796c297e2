/**
 * `ctx.remember`: a costly action runs once, its result is saved right after,
 * and a rerun of the step after a crash returns the saved result instead of
 * running the action again. Real worker processes, killed for real.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { startTask } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { RUNTIME_INDEX_URL as runtimeIndex, writeAgentProject } from './agent-project.js';

/**
 * The `build` step remembers a costly action (which appends a line to the
 * runs file each time it really runs), then dies by SIGKILL or throws while
 * the mode file says so.
 */
const BUILDER = (runs: string, mode: string) => `
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { defineAgent, z } from '${runtimeIndex}';
export default defineAgent({
  name: 'builder',
  description: 'remembers a costly build',
  options: z.object({}),
  goal: () => 'build once',
  plan: () => [{ id: 'build', name: 'build' }, { id: 'ship', name: 'ship' }],
  async run(ctx) {
    const built = await ctx.step('build', async () => {
      const out = await ctx.remember('compile', () => {
        appendFileSync(${JSON.stringify(runs)}, 'ran\\n');
        return { artifact: 'app.bin', run: readFileSync(${JSON.stringify(runs)}, 'utf8').split('\\n').length - 1 };
      });
      const mode = existsSync(${JSON.stringify(mode)}) ? readFileSync(${JSON.stringify(mode)}, 'utf8') : '';
      if (mode === 'kill') process.kill(process.pid, 'SIGKILL');
      if (mode === 'fail') throw new Error('the build check failed');
      return out;
    });
    await ctx.step('ship', () => 'shipped ' + built.artifact + ' from run ' + built.run);
  },
});
`;

let tmp: string;
let runs: string;
let mode: string;
useOfflineWorkers();
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-remember-'));
  runs = path.join(tmp, 'runs.txt');
  mode = path.join(tmp, 'mode.txt');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const timesRun = async () => (await fs.readFile(runs, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

describe('ctx.remember', () => {
  it(
    'saves the result right after the action, and a rerun after a kill reuses it without running the action again',
    { timeout: 60_000 },
    async () => {
      const { project, root, moduleFile } = await writeAgentProject(tmp, 'builder.mjs', BUILDER(runs, mode));
      await fs.writeFile(mode, 'kill');
      const runner = new Runner({ root });
      const killed = await runner.startRun({ agent: moduleFile, cwd: project, taskId: 'b' });
      expect(killed.crashed).toBe(true);
      expect(await timesRun()).toBe(1);
      const store = openStore(root);
      const saved = (await store.readHistory('b')).filter((m) => (m as { remember_key?: string }).remember_key === 'compile');
      expect(saved).toHaveLength(1);
      expect(JSON.parse(saved[0].content)).toEqual({ artifact: 'app.bin', run: 1 });
      expect((await store.getTask('b'))!.checkpoint!.plan[0].status).toBe('running');

      await fs.writeFile(mode, '');
      const resumed = await runner.resume('b');
      expect(resumed.status).toBe('done');
      expect(await timesRun()).toBe(1);
      const cp = (await store.getTask('b'))!.checkpoint!;
      expect(cp.plan[0].attempts).toBe(2);
      expect(await store.readBlob('b', cp.plan[1].result_ref!)).toBe('shipped app.bin from run 1');
    },
  );

  it('runs the action afresh when the step failed, as model calls do', { timeout: 60_000 }, async () => {
    const { project, root, moduleFile } = await writeAgentProject(tmp, 'builder.mjs', BUILDER(runs, mode));
    await fs.writeFile(mode, 'fail');
    const runner = new Runner({ root });
    expect((await runner.startRun({ agent: moduleFile, cwd: project, taskId: 'f' })).status).toBe('failed');
    await fs.writeFile(mode, '');
    expect((await runner.resume('f')).status).toBe('done');
    expect(await timesRun()).toBe(2);
    const store = openStore(root);
    const cp = (await store.getTask('f'))!.checkpoint!;
    expect(await store.readBlob('f', cp.plan[1].result_ref!)).toBe('shipped app.bin from run 2');
  });
});

describe('what is saved, in process', () => {
  it('returns on the first run what a rerun would, and keeps secrets out of remembered and step results', async () => {
    const key = 'sk-remember-never-saved-4242';
    const seen: unknown[] = [];
    const agent = defineAgent({
      name: 'rememberer',
      description: '',
      options: z.object({}),
      goal: () => 'remember a value',
      plan: () => [{ id: 'fetch', name: 'fetch' }],
      async run(ctx) {
        await ctx.step('fetch', async () => {
          const got = await ctx.remember('lookup', () => ({ at: new Date('2026-01-02T03:04:05Z'), note: `token ${key}`, gone: undefined }));
          seen.push(got);
          return { echoed: `the key was ${key}` };
        });
      },
    });
    const root = path.join(tmp, 'checkpoints');
    const store = openStore(root);
    await startTask({ store, root, llm: new OfflineProvider(0), actor: 'tester', env: { OPENAI_API_KEY: key } }, agent, { taskId: 'r' });

    // The JSON form, as a rerun reads it back: the Date as its string, the undefined field gone, the key scrubbed.
    expect(seen).toEqual([{ at: '2026-01-02T03:04:05.000Z', note: 'token [redacted]' }]);
    const files = await fs.readdir(path.join(root, 'r', 'versions'));
    const written = (await Promise.all(files.map((f) => fs.readFile(path.join(root, 'r', 'versions', f), 'utf8')))).join('\n');
    expect(written).toContain('the key was [redacted]');
    expect(written).not.toContain(key);
  });
});
