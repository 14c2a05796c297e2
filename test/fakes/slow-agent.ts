/**
 * An agent for stop tests, loaded by module path into worker processes: three
 * steps that each take `stepMs`, the second performing one effect against the
 * fake publish service, so a stop can land before a step, before the effect,
 * or (with a long step) only by ending the process.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineAgent } from '../../electron/runtime/define-agent.js';

// Coerced: the CLI hands agent options over as the strings typed (test/electron/cli/interrupt.test.ts).
const Options = z.object({ stepMs: z.coerce.number().int().nonnegative(), publishUrl: z.string() });

export const slowAgent = defineAgent({
  name: 'slow-agent',
  description: 'three slow steps, the second publishing once',
  options: Options,
  goal: () => 'take its time',
  plan: () => ['one', 'two', 'three'].map((id) => ({ id, name: id })),
  async run(ctx) {
    for (const id of ['one', 'two', 'three']) {
      await ctx.step(id, async () => {
        await sleep(ctx.options.stepMs);
        if (id !== 'two') return { id };
        const published = await ctx.effect({
          type: 'http-publish',
          key: `${ctx.taskId}:two`,
          perform: async (key) => {
            const res = await fetch(ctx.options.publishUrl, {
              method: 'POST',
              headers: { 'idempotency-key': key, 'content-type': 'application/json' },
              body: JSON.stringify({ id }),
            });
            if (!res.ok) throw new Error(`publish answered ${res.status}`);
            return (await res.json()) as unknown;
          },
          probe: async (effect) => {
            const res = await fetch(`${ctx.options.publishUrl}?key=${encodeURIComponent(effect.idempotency_key)}`);
            return res.status === 404 ? { happened: false } : { happened: true, outcome: await res.json() };
          },
        });
        return { id, published };
      });
    }
  },
});

export default slowAgent;
