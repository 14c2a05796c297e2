/**
 * Each version the runtime writes says which save boundary wrote it (`source.note`), so a task's history reads as
 * what the run did: a step done or failed, each side of an effect, an artifact, a phase, a remembered action, a wait
 * for a human, a recovery, the end. The Python runtime writes the same words (python/tests/test_version_notes.py).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { resumeTask, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-version-notes-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

it("names the boundary each of the runtime's versions was saved at, in order", async () => {
  let failOnce = true;
  const agent = defineAgent({
    name: 'noted',
    description: '',
    options: z.object({}),
    goal: () => 'cross every save boundary',
    plan: () => [
      { id: 'draft', name: 'draft' },
      { id: 'publish', name: 'publish' },
      { id: 'check', name: 'check' },
      { id: 'extra', name: 'extra' },
    ],
    async run(ctx) {
      await ctx.phase('writing');
      await ctx.step('draft', async () => {
        await ctx.remember('outline', async () => ['a', 'b']);
        return 'text';
      });
      await ctx.artifact('notes.txt');
      await ctx.step('publish', async () => ctx.effect({ type: 'http-publish', key: 'k-1', perform: async () => ({ id: 7 }) }));
      await ctx.step('check', async () => {
        if (failOnce) {
          failOnce = false;
          throw new Error('flaky');
        }
        await ctx.recordRecovery({ what: 'flaky', fix: 'ran again', verification: 'it passed' });
        return 'ok';
      });
      await ctx.skip('extra', 'not needed');
    },
  });
  await fs.writeFile(path.join(root, 'notes.txt'), 'notes\n');
  const store = openStore(root);
  const env: OperationEnv = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
  expect((await startTask(env, agent, { taskId: 't' })).status).toBe('failed');
  expect((await resumeTask(env, agent, 't')).status).toBe('done');
  const notes = (await store.history('t')).filter((v) => v.source.kind === 'runtime').map((v) => v.source.note);
  expect(notes).toEqual([
    'task created',
    'phase writing',
    'remembered outline',
    'step draft done',
    'artifact notes.txt',
    'effect http-publish (key k-1): intent',
    'effect http-publish (key k-1): done',
    'step publish done',
    'step check failed',
    'resumed (human)',
    // The run again records the file again: ctx.artifact outside a step saves at once, each run.
    'artifact notes.txt',
    'recovery recorded',
    'step check done',
    'step extra skipped',
    'task done',
  ]);
});

it('names a model reply saved on its own, an effect left uncertain and the probe that settled it', async () => {
  let attempt = 0;
  const agent = defineAgent({
    name: 'noted-effect',
    description: '',
    options: z.object({}),
    goal: () => 'ask, then publish once',
    plan: () => [{ id: 'publish', name: 'publish' }],
    async run(ctx) {
      await ctx.step('publish', async () => {
        await ctx.llm.complete([{ role: 'user', content: 'draft it' }]);
        // A wait after the reply: the reply is saved on its own before it ends.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return ctx.effect({
          type: 'http-publish',
          key: 'k-2',
          perform: async () => {
            if (attempt++ === 0) throw new Error('connection reset');
            return { id: 8 };
          },
          probe: async () => ({ happened: true, outcome: { id: 8 } }),
        });
      });
    },
  });
  const store = openStore(root);
  const env: OperationEnv = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
  expect((await startTask(env, agent, { taskId: 'e' })).status).toBe('failed');
  const first = (await store.history('e')).map((v) => v.source.note);
  expect(first).toEqual([
    'task created',
    'model reply',
    'effect http-publish (key k-2): intent',
    'effect http-publish (key k-2): uncertain',
    'step publish failed',
  ]);
  expect((await resumeTask(env, agent, 'e')).status).toBe('done');
  const notes = (await store.history('e')).map((v) => v.source.note);
  expect(notes).toContain('effect http-publish (key k-2): probed, it happened');
  expect(notes.at(-1)).toBe('task done');
});
