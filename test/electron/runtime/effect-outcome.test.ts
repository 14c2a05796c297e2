/**
 * An effect whose perform() ran but returned what the state cannot hold (a
 * BigInt, a cycle, a value over the store's size limit): it happened, so the
 * ledger records it done, without its outcome, the step fails saying so, and
 * the next run does not perform it again nor put it to a person.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-effect-outcome-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** An agent whose one effect returns `outcome()`, counting its performs; the step returns what the effect gave. */
function sender(outcome: () => unknown, performed: { count: number }) {
  return defineAgent({
    name: 'sender',
    description: '',
    options: z.object({}),
    goal: () => 'send once',
    plan: () => [{ id: 'send', name: 'send the message' }],
    async run(ctx) {
      await ctx.step('send', async () => {
        const got = await ctx.effect({
          type: 'email',
          key: `${ctx.taskId}:send`,
          perform: async () => {
            performed.count++;
            return outcome();
          },
        });
        return { got: got === null ? null : 'an outcome' };
      });
    },
  });
}

describe('an effect whose outcome cannot be stored', () => {
  const cases: [string, () => unknown, RegExp][] = [
    ['a BigInt', () => ({ id: 10n }), /BigInt/],
    [
      'a cycle',
      () => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      },
      /circular/,
    ],
    ['a value over the size limit', () => ({ body: 'x'.repeat(32_768) }), /limit/],
  ];
  it.each(cases)('%s: recorded done without it, the step failed saying it happened, and never performed again', async (_, outcome, why) => {
    // A small file limit, so an outcome over it is small too.
    const env: OperationEnv = { store: openStore(root, { maxFileBytes: 16_384 }), root, llm: new OfflineProvider(0) };
    const performed = { count: 0 };
    const agent = sender(outcome, performed);
    const first = await startTask(env, agent, { taskId: 't' });
    expect(first.status).toBe('failed');
    expect(first.message).toMatch(/effect email \(key t:send\) happened, but its outcome could not be stored/);
    const cp = (await env.store.getTask('t'))!.checkpoint!;
    expect(cp.side_effects).toEqual([expect.objectContaining({ status: 'done', outcome: null, error: expect.stringMatching(why) })]);

    const again = await resumeTask(env, agent, 't');
    expect(again.status).toBe('done');
    expect(performed.count).toBe(1);
    const result = await env.store.readBlob('t', (await env.store.getTask('t'))!.checkpoint!.plan[0].result_ref!);
    expect(result).toEqual({ got: null });
  });
});
