/**
 * hello-agent: composes a greeting with the model, writes it to a file and
 * "publishes" it to an outbox, a stand-in for any outside service that
 * accepts an idempotency key.
 *
 * Three steps, one of each thing a checkpoint protects: a model call (its
 * reply is kept, so a rerun pays nothing), an artifact (checked on resume),
 * and a side effect with a probe (never performed twice).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { defineAgent, z } from 'waystation';

const Options = z.object({
  name: z.string().min(1).default('world'),
  /** The outbox file; relative paths are relative to the checkpoint directory. */
  outbox: z.string().default('outbox.jsonl'),
});

/** What `compose` returns; a human edit in the app must satisfy it too. */
const Greeting = z.object({ greeting: z.string().min(1), words: z.number().int().positive() });

/** Lets a demo (or a test) watch the task mid-run: each step waits this long first. */
const stepDelayMs = () => Number(process.env.HELLO_STEP_DELAY_MS ?? 0);

async function outboxHas(file: string, key: string): Promise<{ key: string; text: string } | null> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line) continue;
    const entry = JSON.parse(line) as { key: string; text: string };
    if (entry.key === key) return entry;
  }
  return null;
}

export default defineAgent({
  name: 'hello-agent',
  description: 'composes a greeting, writes it to greetings/<task>.txt and publishes it to an outbox',
  options: Options,
  // Stored with the task, so a resume publishes to the same outbox even if it runs elsewhere.
  resolveOptions: (o, env) => ({ ...o, outbox: path.resolve(env.rootDir, o.outbox) }),
  goal: (o) => `greet ${o.name}`,
  plan: () => [
    { id: 'compose', name: 'compose the greeting', output_schema: Greeting },
    { id: 'write', name: 'write it to a file' },
    { id: 'publish', name: 'publish it to the outbox' },
  ],
  probes: {
    // Asked on resume about a publish whose outcome was never recorded (the process died mid-call).
    outbox: async (effect, options) => {
      const found = await outboxHas(options.outbox, effect.idempotency_key);
      return found ? { happened: true, outcome: found } : { happened: false };
    },
  },
  async run(ctx) {
    const delay = () => new Promise((r) => setTimeout(r, stepDelayMs()));
    const composed = await ctx.step('compose', async () => {
      await delay();
      const reply = await ctx.llm.complete([{ role: 'user', content: `Write a one-line greeting for ${ctx.options.name}.` }]);
      const greeting = reply.text.split('\n')[0];
      return { greeting, words: greeting.split(/\s+/).filter(Boolean).length };
    });
    const file = `greetings/${ctx.taskId}.txt`;
    await ctx.step('write', async () => {
      await delay();
      await ctx.writeArtifact(file, `${composed.greeting}\n`);
      return { file };
    });
    await ctx.step('publish', async () => {
      await delay();
      return ctx.effect({
        type: 'outbox',
        key: `${ctx.taskId}:publish`,
        request: { outbox: ctx.options.outbox },
        perform: async (key) => {
          // The service's side of idempotency: a key it has seen is not published again.
          const existing = await outboxHas(ctx.options.outbox, key);
          if (existing) return existing;
          const entry = { key, text: composed.greeting };
          await fs.appendFile(ctx.options.outbox, `${JSON.stringify(entry)}\n`);
          return entry;
        },
      });
    });
  },
});
