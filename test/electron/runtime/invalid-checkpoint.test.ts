/**
 * An agent that hands the runtime something a checkpoint cannot hold gets a
 * clear error on that task, and every version written stays valid.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { OperationError, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';

let root: string;
let env: OperationEnv;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-invalid-'));
  env = { store: openStore(root), root, llm: new OfflineProvider(0), actor: 'tester' };
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('an agent that produces an invalid checkpoint', () => {
  it('fails the step whose outcome cannot be saved, and keeps the task valid', async () => {
    const agent = defineAgent({
      name: 'bad-artifact',
      description: '',
      options: z.object({}),
      goal: () => 'record a file with no type',
      plan: () => [
        { id: 'write', name: 'write' },
        { id: 'after', name: 'after' },
      ],
      async run(ctx) {
        await ctx.step('write', async () => {
          await fs.writeFile(path.join(root, 'out.txt'), 'x');
          await ctx.artifact('out.txt', { type: '' });
          return 'written';
        });
        await ctx.step('after', () => 'never');
      },
    });
    const outcome = await startTask(env, agent, { taskId: 't' });
    expect(outcome.status).toBe('failed');
    const entry = (await openStore(root).getTask('t'))!;
    expect(entry.problems).toEqual([]);
    const cp = entry.checkpoint!;
    expect(cp.plan[0].status).toBe('failed');
    expect(cp.plan[0].error).toMatchObject({ kind: 'invalid-checkpoint' });
    expect(cp.plan[0].error!.message).toContain("the step's outcome cannot be saved as a valid checkpoint");
    expect(cp.plan[1].status).toBe('pending');
    expect(cp.artifacts).toEqual([]);
  });

  it('refuses a task whose plan is not a valid checkpoint, without creating anything', async () => {
    const agent = defineAgent({
      name: 'bad-plan',
      description: '',
      options: z.object({}),
      goal: () => 'plan a step without an id',
      plan: () => [{ id: '', name: 'nameless' }],
      async run() {},
    });
    await expect(startTask(env, agent, { taskId: 't' })).rejects.toThrow(OperationError);
    await expect(startTask(env, agent, { taskId: 't' })).rejects.toThrow(/describes a task that is not a valid checkpoint/);
    expect(await fs.readdir(root)).toEqual([]);
  });

  it('rejects an effect without a type or key as a failure of its step', async () => {
    const agent = defineAgent({
      name: 'bad-effect',
      description: '',
      options: z.object({}),
      goal: () => 'perform an effect with no key',
      plan: () => [{ id: 'act', name: 'act' }],
      async run(ctx) {
        await ctx.step('act', () => ctx.effect({ type: 'http', key: '', perform: async () => 'done' }));
      },
    });
    const outcome = await startTask(env, agent, { taskId: 't' });
    expect(outcome.status).toBe('failed');
    const cp = (await openStore(root).getTask('t'))!.checkpoint!;
    expect(cp.plan[0].error!.message).toContain('ctx.effect needs a type and an idempotency key');
    expect(cp.side_effects).toEqual([]);
  });
});
