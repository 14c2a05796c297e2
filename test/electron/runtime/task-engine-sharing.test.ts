/**
 * A save through the engine hands the store the saved version's own objects
 * for every part it did not change, so the store diffs and writes only the
 * change; and nothing the agent is handed, or hands over, is shared with a
 * saved version.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore, SaveRequest, SaveResult } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { changedSince } from '../../../shared/diff/array-lineage.js';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { resumeTask, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';

let root: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-sharing-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** The store, with every save's request and result kept for inspection. */
function recordingStore(inner: CheckpointStore): { store: CheckpointStore; saves: { request: SaveRequest; result: SaveResult }[] } {
  const saves: { request: SaveRequest; result: SaveResult }[] = [];
  const store = Object.create(inner) as CheckpointStore;
  store.save = async (taskId, request) => {
    const result = await inner.save(taskId, request);
    saves.push({ request, result });
    return result;
  };
  return { store, saves };
}

const steps = Array.from({ length: 40 }, (_, i) => ({ id: `s${i + 1}`, name: `step ${i + 1}` }));

describe('saves through the engine', () => {
  it('reuse every plan entry, list and object the save did not change', async () => {
    const { store, saves } = recordingStore(openStore(root));
    const env: OperationEnv = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
    const agent = defineAgent({
      name: 'long',
      description: '',
      options: z.object({}),
      goal: () => 'many steps',
      plan: () => steps,
      async run(ctx) {
        for (const s of steps) await ctx.step(s.id, () => ({ n: s.id }));
      },
    });
    const outcome = await startTask(env, agent, { taskId: 't' });
    expect(outcome.status).toBe('done');
    // Each step's save follows the one before: the request is built from the version that save returned.
    for (let k = 1; k < saves.length - 1; k++) {
      const before = saves[k - 1].result.checkpoint;
      const sent = saves[k].request.checkpoint as Checkpoint;
      const changed = sent.plan.filter((s, i) => s !== before.plan[i]);
      expect(changed.map((s) => s.id)).toEqual([steps[k].id]);
      expect(sent.side_effects).toEqual(before.side_effects);
      // Top-level objects are the draft's own copies; what they hold is the saved version's.
      expect(sent.agent!.options).toBe(before.agent!.options);
      expect(sent.recovery.decisions).toEqual(before.recovery.decisions);
      // What the store returns is frozen, and the engine keeps it as it is rather than copying it.
      expect(Object.isFrozen(saves[k].result.checkpoint.plan[0])).toBe(true);
    }
    const last = saves[saves.length - 1];
    expect(last.result.checkpoint.plan.every((s) => s.status === 'done')).toBe(true);
  });

  it('tell the store which places of each list changed, so it visits those only, and point the resume hint at the next step', async () => {
    const { store: recording, saves } = recordingStore(openStore(root));
    // What each request's lists record, asked as the store receives it (the store's own copies take the records over).
    const records: { plan: readonly number[] | null; calls: readonly number[] | null }[] = [];
    const store = Object.create(recording) as CheckpointStore;
    store.save = async (taskId, request) => {
      const before = saves.at(-1)?.result.checkpoint;
      const sent = request.checkpoint as Checkpoint;
      if (before)
        records.push({ plan: changedSince(sent.plan, before.plan), calls: changedSince(sent.run.llm_calls, before.run.llm_calls) });
      return recording.save(taskId, request);
    };
    const env: OperationEnv = { store, root, llm: new OfflineProvider(0), actor: 'tester' };
    const agent = defineAgent({
      name: 'asking',
      description: '',
      options: z.object({}),
      goal: () => 'many steps, a model call in each',
      plan: () => steps,
      async run(ctx) {
        for (const s of steps) await ctx.step(s.id, async () => (await ctx.llm.complete([{ role: 'user', content: s.id }])).text);
      },
    });
    expect((await startTask(env, agent, { taskId: 't' })).status).toBe('done');
    let finished = 0;
    for (let k = 1; k < saves.length; k++) {
      const before = saves[k - 1].result.checkpoint;
      const sent = saves[k].request.checkpoint as Checkpoint;
      const moved = sent.plan.flatMap((s, i) => (s !== before.plan[i] ? [i] : []));
      // The record names exactly the steps the save changed: a save of a long plan looks at those, not at every step.
      expect(records[k - 1].plan).toEqual(moved);
      expect(records[k - 1].calls).toEqual([]);
      const done = sent.plan.filter((s) => s.status === 'done').length;
      if (done > finished) {
        finished = done;
        const next = steps[done];
        expect(sent.resume_hint).toBe(next ? `continue at ${next.id} (${next.name})` : 'all steps finished');
        expect(sent.current_step).toBe(done);
      }
    }
    expect(finished).toBe(steps.length);
  });

  it('never let an agent change a saved version through what it was handed or handed over', async () => {
    const env: OperationEnv = { store: openStore(root), root, llm: new OfflineProvider(0), actor: 'tester' };
    const handed: { outcome?: { ids: number[] }; again?: { ids: number[] }; options?: { tags: string[] }; result?: { list: number[] } } =
      {};
    let crash = true;
    const agent = defineAgent({
      name: 'meddler',
      description: '',
      options: z.object({ tags: z.array(z.string()).default(['a']) }),
      goal: () => 'change what it should not',
      plan: () => [
        { id: 'one', name: 'one' },
        { id: 'two', name: 'two' },
      ],
      async run(ctx) {
        const options = ctx.options as { tags: string[] };
        options.tags.push('changed by the agent');
        handed.options = options;
        const result = await ctx.step('one', async () => {
          const own = { ids: [1] };
          const outcome = await ctx.effect({ type: 'publish', key: 'k1', request: own, perform: async () => own });
          outcome.ids.push(2);
          own.ids.push(3);
          handed.outcome = outcome;
          return { list: [1] };
        });
        result.list.push(99);
        await ctx.step('two', async () => {
          // On the resumed run the effect is done: its recorded outcome comes back, as a copy.
          const again = await ctx.effect({ type: 'publish', key: 'k1', perform: async () => ({ ids: [-1] }) });
          again.ids.push(4);
          handed.again = again;
          if (crash) {
            crash = false;
            throw new Error('stop here');
          }
          return 'two';
        });
      },
    });
    expect((await startTask(env, agent, { taskId: 't' })).status).toBe('failed');
    const failed = (await openStore(root).getTask('t'))!.checkpoint!;
    expect(failed.side_effects[0].outcome).toEqual({ ids: [1] });
    expect(failed.side_effects[0].request).toEqual({ ids: [1] });
    expect(failed.agent!.options).toEqual({ tags: ['a'] });

    const resumed = await resumeTask(env, agent, 't');
    expect(resumed.status).toBe('done');
    const cp = (await openStore(root).getTask('t'))!.checkpoint!;
    expect(cp.side_effects[0].outcome).toEqual({ ids: [1] });
    expect(cp.agent!.options).toEqual({ tags: ['a'] });
    expect(handed.again).toEqual({ ids: [1, 4] });
    // A stored result handed back on the resumed run is the agent's to change, too.
    expect(await openStore(root).readBlob('t', cp.plan[0].result_ref!)).toEqual({ list: [1] });
  });
});
