/**
 * A model reply is saved with the step's next save, or on its own once the
 * event loop turns: a step that asks once and returns writes one version,
 * holding both; a step that waits after the reply, or acts through an
 * effect, has the reply saved before; and a save that fails gives the reply
 * to the next one, so the step's failure still records it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore, SaveRequest } from '../../../electron/store/store-types.js';
import { MAX_VALUE_DEPTH } from '../../../electron/store/write-limits.js';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-reply-saves-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** The store, with the messages each save appended kept in order. */
function recording(): { store: CheckpointStore; saves: SaveRequest[] } {
  const inner = openStore(root);
  const saves: SaveRequest[] = [];
  const store = Object.create(inner) as CheckpointStore;
  store.save = async (taskId, request) => {
    saves.push(request);
    return inner.save(taskId, request);
  };
  return { store, saves };
}

const contents = (request: SaveRequest) => (request.appendHistory ?? []).map((m) => `${m.role}:${m.content.slice(0, 12)}`);

describe('a model reply', () => {
  it('is saved with the result of a step that returns at once: one version a step', async () => {
    const { store, saves } = recording();
    const steps = ['a', 'b', 'c'];
    const agent = defineAgent({
      name: 'asker',
      description: '',
      options: z.object({}),
      goal: () => 'ask in each step',
      plan: () => steps.map((id) => ({ id, name: id })),
      async run(ctx) {
        for (const id of steps) await ctx.step(id, async () => (await ctx.llm.complete([{ role: 'user', content: `q-${id}` }])).text);
      },
    });
    const env: OperationEnv = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
    expect((await startTask(env, agent, { taskId: 't' })).status).toBe('done');
    const stepSaves = saves.filter((s) => s.results !== undefined);
    expect(stepSaves.map((s) => Object.keys(s.results!))).toEqual(steps.map((id) => [id]));
    // Each step's save carries its question and the reply; no save carried a reply alone.
    for (const [i, s] of stepSaves.entries()) expect(contents(s)[0]).toBe(`user:q-${steps[i]}`);
    expect(saves.filter((s) => s.results === undefined && (s.appendHistory?.length ?? 0) > 0)).toEqual([]);
    const history = await openStore(root).readHistory('t');
    expect(history.filter((m) => m.role === 'assistant')).toHaveLength(3);
    const cp = (await openStore(root).getTask('t'))!.checkpoint!;
    expect(cp.run.llm_calls.map((c) => c.step_id)).toEqual(steps);
  });

  it('is saved before a wait after it ends, and before an effect acts', async () => {
    const seenAfterWait: number[] = [];
    const seenByEffect: number[] = [];
    const agent = defineAgent({
      name: 'waiter',
      description: '',
      options: z.object({}),
      goal: () => 'ask, wait, act',
      plan: () => [{ id: 'one', name: 'one' }],
      async run(ctx) {
        await ctx.step('one', async () => {
          await ctx.llm.complete([{ role: 'user', content: 'first' }]);
          await sleep(5);
          seenAfterWait.push((await openStore(root).readHistory('t')).length);
          await ctx.llm.complete([{ role: 'user', content: 'second' }]);
          await ctx.effect({
            type: 'publish',
            key: 'k',
            perform: async () => {
              seenByEffect.push((await openStore(root).readHistory('t')).length);
              return 'ok';
            },
          });
          return 'done';
        });
      },
    });
    const env: OperationEnv = { store: openStore(root), root, llm: new OfflineProvider(0), actor: 'tester' };
    expect((await startTask(env, agent, { taskId: 't' })).status).toBe('done');
    expect(seenAfterWait).toEqual([2]);
    expect(seenByEffect).toEqual([4]);
  });

  it('arriving while a save is being written is kept: the change is made again on what that save returns', async () => {
    const inner = openStore(root);
    const store = Object.create(inner) as CheckpointStore;
    // Every save takes a while, so a reply can arrive while one is written.
    store.save = async (taskId, request) => {
      await sleep(15);
      return inner.save(taskId, request);
    };
    const agent = defineAgent({
      name: 'fan-out',
      description: '',
      options: z.object({}),
      goal: () => "ask twice, the second reply arriving during the first one's save",
      plan: () => [{ id: 'one', name: 'one' }],
      async run(ctx) {
        await ctx.step('one', async () => {
          await ctx.llm.complete([{ role: 'user', content: 'first' }]);
          // The first reply's save starts at the next turn of the event loop and takes 15 ms.
          await sleep(5);
          await ctx.llm.complete([{ role: 'user', content: 'second' }]);
          return 'both';
        });
      },
    });
    const env: OperationEnv = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
    expect((await startTask(env, agent, { taskId: 't' })).status).toBe('done');
    const cp = (await openStore(root).getTask('t'))!.checkpoint!;
    expect(cp.run.llm_calls).toHaveLength(2);
    expect(cp.run.tokens_in).toBe(cp.run.llm_calls.reduce((n, c) => n + c.tokens_in, 0));
    expect(cp.plan[0].tokens_in).toBe(cp.run.tokens_in);
    expect((await openStore(root).readHistory('t')).map((m) => m.content.slice(0, 6))).toEqual(expect.arrayContaining(['first', 'second']));
    expect((await openStore(root).readHistory('t')).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('goes with the next save when the save carrying it is refused: the step fails and the reply is kept', async () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i <= MAX_VALUE_DEPTH; i++) deep = [deep];
    const agent = defineAgent({
      name: 'overreach',
      description: '',
      options: z.object({}),
      goal: () => 'return what cannot be saved',
      plan: () => [{ id: 'one', name: 'one' }],
      async run(ctx) {
        await ctx.step('one', async () => {
          await ctx.llm.complete([{ role: 'user', content: 'question' }]);
          return deep;
        });
      },
    });
    const env: OperationEnv = { store: openStore(root), root, llm: new OfflineProvider(0), actor: 'tester' };
    expect((await startTask(env, agent, { taskId: 't' })).status).toBe('failed');
    const cp = (await openStore(root).getTask('t'))!.checkpoint!;
    expect(cp.plan[0].error?.kind).toBe('invalid-checkpoint');
    expect((await openStore(root).readHistory('t')).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(cp.run.llm_calls).toHaveLength(1);
  });
});
