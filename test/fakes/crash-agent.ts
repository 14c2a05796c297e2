/**
 * An agent for crash tests, loaded by module path into worker processes.
 *
 * Every step checks, from the disk, that it is not already done before doing
 * anything, and appends a VIOLATION line to the ledger if it is: the direct
 * test of "a done step never runs again". Steps call the model, write an
 * artifact, and two of them publish to a service as side effects.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../electron/runtime/define-agent.js';
import { openStore } from '../../electron/store/directory-store.js';

const STEP_IDS = ['gather', 'publish-draft', 'review', 'publish-final'];
const PUBLISHING = new Set(['publish-draft', 'publish-final']);

const Options = z.object({ ledger: z.string(), out: z.string(), publishUrl: z.string() });

export const crashAgent = defineAgent({
  name: 'crash-agent',
  description: 'four steps with model calls, artifacts and two published side effects',
  options: Options,
  goal: () => 'survive SIGKILL anywhere',
  plan: () => STEP_IDS.map((id) => ({ id, name: id, output_schema: z.object({ text: z.string(), published: z.unknown().optional() }) })),
  async run(ctx) {
    const store = openStore(ctx.rootDir);
    let previous = 'start';
    for (const id of STEP_IDS) {
      const result = await ctx.step(id, async () => {
        const onDisk = (await store.getTask(ctx.taskId))?.checkpoint?.plan.find((s) => s.id === id);
        if (onDisk?.status === 'done') appendFileSync(ctx.options.ledger, `VIOLATION ${ctx.taskId} ${id} ran again after it was done\n`);
        appendFileSync(ctx.options.ledger, `run ${ctx.taskId} ${id} ${process.pid}\n`);
        const reply = await ctx.llm.complete([{ role: 'user', content: `${id} after: ${previous}` }]);
        await ctx.writeArtifact(path.join(ctx.options.out, `${id}.txt`), reply.text);
        if (!PUBLISHING.has(id)) return { text: reply.text };
        const published = await ctx.effect({
          type: 'http-publish',
          key: `${ctx.taskId}:${id}`,
          request: { url: ctx.options.publishUrl },
          perform: async (key) => {
            const res = await fetch(ctx.options.publishUrl, {
              method: 'POST',
              headers: { 'idempotency-key': key, 'content-type': 'application/json' },
              body: JSON.stringify({ id }),
            });
            if (!res.ok) throw new Error(`publish answered ${res.status}`);
            return (await res.json()) as { id: string };
          },
          probe: async (effect) => {
            const res = await fetch(`${ctx.options.publishUrl}?key=${encodeURIComponent(effect.idempotency_key)}`);
            if (res.status === 404) return { happened: false };
            if (!res.ok) throw new Error(`probe answered ${res.status}`);
            return { happened: true, outcome: await res.json() };
          },
        });
        return { text: reply.text, published };
      });
      previous = result.text.slice(0, 40);
    }
  },
});

export default crashAgent;
