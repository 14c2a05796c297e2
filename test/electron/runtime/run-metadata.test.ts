/**
 * Run metadata with real values: the estimated cost of calls to a priced
 * model, a timeout and its retry recorded in the checkpoint, and the total
 * elapsed time carried across a resume. In-process, against the real store
 * and the real OpenAI client talking to the fake server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { resumeTask, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { OpenAiProvider } from '../../../electron/llm/openai-provider.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../fakes/fake-openai-server.js';

let root: string;
let store: CheckpointStore;
let server: FakeOpenAiServer;
beforeAll(async () => {
  server = await startFakeOpenAiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-run-meta-'));
  store = openStore(root);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const latest = async (id: string) => (await store.getTask(id))!.checkpoint!;
/** The fake server's usage rule: prompt characters / 4 + 7 in, reply characters / 4 out. */
const fakeUsage = (prompt: string, reply: string) => ({ in: Math.ceil(prompt.length / 4) + 7, out: Math.ceil(reply.length / 4) });

function asker(prompts: string[]) {
  return defineAgent({
    name: 'asker',
    description: '',
    options: z.object({}),
    goal: () => 'ask',
    plan: () => [{ id: 'ask', name: 'ask' }],
    async run(ctx) {
      await ctx.step('ask', async () => {
        const out: string[] = [];
        for (const p of prompts) out.push((await ctx.llm.complete([{ role: 'user', content: p }])).text);
        return out;
      });
    },
  });
}

describe('run metadata', () => {
  it('estimates cost_usd from the list price of a priced model', async () => {
    const llm = new OpenAiProvider({
      apiKey: 'sk-test-0000000000',
      baseURL: server.baseURL,
      model: 'gpt-4o-mini',
      timeoutMs: 2000,
      maxRetries: 0,
      backoffMs: 5,
      maxBackoffMs: 20,
    });
    server.script({ kind: 'ok', content: 'first answer here' }, { kind: 'ok', content: 'second' });
    const env: OperationEnv = { store, root, llm, env: {} };
    expect((await startTask(env, asker(['what is one plus one?', 'and two?']), { taskId: 'cost' })).status).toBe('done');
    const cp = await latest('cost');
    const a = fakeUsage('what is one plus one?', 'first answer here');
    const b = fakeUsage('and two?', 'second');
    // gpt-4o-mini lists at 0.15 USD in and 0.60 USD out per million tokens.
    expect(cp.run.model).toBe('gpt-4o-mini');
    expect(cp.run.tokens_in).toBe(a.in + b.in);
    expect(cp.run.tokens_out).toBe(a.out + b.out);
    expect(cp.run.llm_calls.map((c) => c.cost_usd)).toEqual([(a.in * 0.15 + a.out * 0.6) / 1e6, (b.in * 0.15 + b.out * 0.6) / 1e6]);
    expect(cp.run.cost_usd).toBeCloseTo(((a.in + b.in) * 0.15 + (a.out + b.out) * 0.6) / 1e6, 15);
    expect(cp.run.cost_usd).toBeGreaterThan(0);
  });

  it('records a timed-out attempt and its retry (a slow reply from the server)', async () => {
    const llm = new OpenAiProvider({
      apiKey: 'sk-test-0000000000',
      baseURL: server.baseURL,
      model: 'fake-model',
      timeoutMs: 100,
      maxRetries: 2,
      backoffMs: 5,
      maxBackoffMs: 20,
    });
    server.script({ kind: 'ok', delayMs: 400, content: 'too late' }, { kind: 'ok', content: 'in time' });
    const env: OperationEnv = { store, root, llm, env: {} };
    expect((await startTask(env, asker(['hurry']), { taskId: 'slow' })).status).toBe('done');
    const cp = await latest('slow');
    expect(await store.readBlob('slow', cp.plan[0].result_ref!)).toEqual(['in time']);
    expect(cp.run.llm_calls).toHaveLength(1);
    expect(cp.run.llm_calls[0].retries).toBe(1);
    expect(cp.run.llm_calls[0].retry_reasons).toHaveLength(1);
    expect(cp.run.llm_calls[0].retry_reasons[0]).toMatch(/^timeout \(attempt 1/);
  });

  it('carries elapsed_ms across a resume: the second drive adds to the first', async () => {
    const failing = { on: true };
    const agent = defineAgent({
      name: 'slow-steps',
      description: '',
      options: z.object({}),
      goal: () => 'take time',
      plan: () => [
        { id: 'a', name: 'a' },
        { id: 'b', name: 'b' },
      ],
      async run(ctx) {
        await ctx.step('a', () => sleep(60).then(() => 'a'));
        await ctx.step('b', async () => {
          await sleep(40);
          if (failing.on) throw new Error('not yet');
          return 'b';
        });
      },
    });
    const env: OperationEnv = { store, root, llm: new OfflineProvider(0) };
    const firstStarted = Date.now();
    expect((await startTask(env, agent, { taskId: 'el' })).status).toBe('failed');
    const firstWall = Date.now() - firstStarted;
    const first = (await latest('el')).run.elapsed_ms;
    expect(first).toBeGreaterThanOrEqual(100);
    expect(first).toBeLessThanOrEqual(firstWall);

    // Time between the drives (the task sat failed) is not counted.
    await sleep(150);
    failing.on = false;
    const secondStarted = Date.now();
    expect((await resumeTask(env, agent, 'el')).status).toBe('done');
    const secondWall = Date.now() - secondStarted;
    const cp = await latest('el');
    expect(cp.run.elapsed_ms).toBeGreaterThanOrEqual(first + 40);
    expect(cp.run.elapsed_ms).toBeLessThanOrEqual(first + secondWall);
    expect(cp.plan[1].elapsed_ms).toBeGreaterThanOrEqual(80);
  });
});
