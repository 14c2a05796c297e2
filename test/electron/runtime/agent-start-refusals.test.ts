/**
 * An agent whose own start-up code throws (plan, goal, resolveOptions), or
 * whose options are not a zod schema: the start is refused as bad input that
 * names the agent, and nothing is written. And what agents log or print never
 * carries the API key.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openStore } from '../../../electron/store/directory-store.js';
import { defineAgent, type AnyAgent } from '../../../electron/runtime/define-agent.js';
import { OperationError, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { RUNTIME_INDEX_URL as runtimeIndex, writeAgentProject } from './agent-project.js';

let tmp: string;
let root: string;
let env: OperationEnv;
useOfflineWorkers();
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-start-refusals-'));
  root = path.join(tmp, 'checkpoints');
  env = { store: openStore(root), root, llm: new OfflineProvider(0), actor: 'tester' };
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const base = {
  name: 'fragile',
  description: '',
  options: z.object({}),
  goal: () => 'g',
  plan: () => [{ id: 'a', name: 'a' }],
  async run() {},
};

describe('an agent that cannot describe its task', () => {
  const cases: [string, Partial<AnyAgent>, RegExp][] = [
    [
      'plan',
      {
        plan: () => {
          throw new Error('the input folder is gone');
        },
      },
      /agent fragile could not start the task: its plan\(\) threw: the input folder is gone\. Nothing was written\./,
    ],
    [
      'goal',
      {
        goal: () => {
          throw new Error('no goal today');
        },
      },
      /agent fragile .*its goal\(\) threw: no goal today/,
    ],
    [
      'resolveOptions',
      {
        resolveOptions: async () => {
          throw new Error('cannot resolve');
        },
      },
      /agent fragile .*its resolveOptions\(\) threw: cannot resolve/,
    ],
    [
      'options',
      { options: { parse: () => ({}) } as unknown as z.ZodType },
      /agent fragile has no options schema: `options` must be a zod schema.*Nothing was written/,
    ],
    [
      'plan has an entry that is not a step',
      { plan: () => [null] as never },
      /agent fragile: plan\(\) entry 0 is null, not a step with an id and a name\. Nothing was written\./,
    ],
    [
      'plan has a step whose output schema is not zod',
      { plan: () => [{ id: 'a', name: 'a', output_schema: { type: 'string' } }] as never },
      /agent fragile: step "a" has an output_schema that is not a zod schema\. Nothing was written\./,
    ],
  ];
  for (const [what, override, message] of cases) {
    it(`is refused as bad input when ${what} fails, with nothing written`, async () => {
      const err = await startTask(env, defineAgent({ ...base, ...override } as AnyAgent), { taskId: 't' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OperationError);
      expect((err as OperationError).code).toBe('invalid');
      expect((err as Error).message).toMatch(message);
      await expect(fs.readdir(root)).rejects.toMatchObject({ code: 'ENOENT' });
    });
  }

  it('keeps the API key out of the refusal', async () => {
    const key = 'sk-never-show-me-987654';
    const agent = defineAgent({
      ...base,
      plan: () => {
        throw new Error(`401 for key ${key}`);
      },
    });
    const err = (await startTask({ ...env, env: { OPENAI_API_KEY: key } }, agent, { taskId: 't' }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('401 for key [redacted]');
    expect(err.message).not.toContain(key);
  });

  it("exits 2 from the CLI with one clear line when md-summarizer's input folder does not exist", async () => {
    await fs.mkdir(root);
    const missing = path.join(tmp, 'no-such-folder');
    const r = await cli('run', root, 'md-summarizer', '--task', 'sum', '--input', missing);
    expect(r.code).toBe(RunExit.usage);
    expect(r.err).toMatch(/md-summarizer/);
    expect(r.err).toContain(missing);
    expect(r.err).toMatch(/Nothing was written/i);
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(await fs.readdir(root)).toEqual([]);
  });
});

/** The base agent with these options. */
const withOptions = (options: z.ZodType) => defineAgent({ ...base, options } as AnyAgent);

/** The refusal of a start with these options: bad input, with nothing written; resolves to its message. */
async function refusal(agent: AnyAgent, options: Record<string, unknown>): Promise<string> {
  const err = await startTask(env, agent, { taskId: 't', options }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OperationError);
  expect((err as OperationError).code).toBe('invalid');
  await expect(fs.readdir(root)).rejects.toMatchObject({ code: 'ENOENT' });
  return (err as Error).message;
}

describe('options an agent does not have', () => {
  it('refuses a misspelt option, naming it, the option it is nearest and the options there are', async () => {
    const agent = withOptions(z.object({ input: z.string().optional(), output: z.string().optional() }));
    expect(await refusal(agent, { inptu: 'notes' })).toBe(
      'agent fragile has no option "inptu" (did you mean "input"?); its options: "input", "output". Nothing was written.',
    );
  });

  it('names every unknown option, and says so of an agent that takes none', async () => {
    expect(await refusal(withOptions(z.object({})), { colour: 'red', size: 3 })).toBe(
      'agent fragile has no option "colour", no option "size"; it takes no options. Nothing was written.',
    );
  });

  it('sees through the wrappers around an options object (a default, a transform)', async () => {
    const wrapped = z
      .object({ depth: z.number().default(1) })
      .default({ depth: 1 })
      .transform((o) => o);
    expect(await refusal(withOptions(wrapped), { detph: 2 })).toMatch(/no option "detph" \(did you mean "depth"\?\)/);
  });

  it('gives an agent whose options take any key what it was given', async () => {
    let seen: unknown;
    const agent = defineAgent({
      ...base,
      options: z.looseObject({ input: z.string().optional() }),
      plan: (options: unknown) => {
        seen = options;
        return [{ id: 'a', name: 'a' }];
      },
    } as AnyAgent);
    await startTask(env, agent, { taskId: 't', options: { input: 'x', extra: 1 } });
    expect(seen).toEqual({ input: 'x', extra: 1 });
  });

  it('exits 2 from the CLI, naming the option as typed, with nothing written', async () => {
    await fs.mkdir(root);
    const r = await cli('run', root, 'checkpoint-demo', '--task', 'demo', '--requirment', 'a parser');
    expect(r.code).toBe(RunExit.usage);
    expect(r.err).toContain('agent checkpoint-demo has no option "requirment" (did you mean "requirement"?)');
    expect(await fs.readdir(root)).toEqual([]);
  });
});

describe('options the schema refuses', () => {
  it('says an option left out is required, and what is wrong with the others, as the Python library does', async () => {
    const agent = withOptions(
      z.object({
        input: z.string(),
        depth: z.number().int(),
        mode: z.enum(['fast', 'slow']).default('fast'),
        name: z.string().min(1, 'a --name is required'),
        limits: z.object({ pages: z.number() }).optional(),
        tags: z.array(z.string()).optional(),
      }),
    );
    expect(await refusal(agent, { depth: 'deep', mode: 'quick', name: '', limits: {}, tags: ['a', 3] })).toBe(
      'invalid options for agent fragile: options.input: is required; options.depth: expected number, received string; ' +
        'options.mode: expected one of "fast"|"slow"; options.name: a --name is required; ' +
        'options.limits.pages: is required; options.tags[1]: expected string, received number. Nothing was written.',
    );
  });

  it("exits 2 from the CLI when md-summarizer's --input is left out, saying so, with nothing written", async () => {
    await fs.mkdir(root);
    const r = await cli('run', root, 'md-summarizer', '--task', 'sum');
    expect(r.code).toBe(RunExit.usage);
    expect(r.err).toContain('invalid options for agent md-summarizer: options.input: is required. Nothing was written.');
    expect(await fs.readdir(root)).toEqual([]);
  });

  it('leaves no folder behind when a refused start named one that did not exist', async () => {
    for (const args of [['md-summarizer', '--task', 'sum'], ['no-such-agent']]) {
      const r = await cli('run', root, ...args);
      expect(r.code).toBe(RunExit.usage);
      expect(r.err).toContain('Nothing was written');
      await expect(fs.access(root)).rejects.toMatchObject({ code: 'ENOENT' });
    }
    // A folder that was there before stays, empty or not.
    await fs.mkdir(root);
    expect((await cli('run', root, 'no-such-agent')).code).toBe(RunExit.usage);
    expect(await fs.readdir(root)).toEqual([]);
  });
});

describe('secrets in what agents log and print', () => {
  const key = 'sk-logged-by-mistake-424242';

  it('ctx.log data is scrubbed, nested values and keys included', async () => {
    const agent = defineAgent({
      ...base,
      async run(ctx) {
        await ctx.step('a', () => {
          ctx.log('calling the service', { auth: `Bearer ${key}`, nested: { list: [key, 'plain'] }, [key]: 1, count: 3 });
        });
      },
    });
    expect((await startTask({ ...env, env: { OPENAI_API_KEY: key } }, agent, { taskId: 'lg' })).status).toBe('done');
    const events = await env.store.readEvents('lg');
    const log = events.find((e) => e.type === 'log')!;
    expect(log.data).toEqual({
      message: 'calling the service',
      auth: 'Bearer [redacted]',
      nested: { list: ['[redacted]', 'plain'] },
      '[redacted]': 1,
      count: 3,
    });
    expect(JSON.stringify(events)).not.toContain(key);
  });

  it('worker output relayed by the runner is scrubbed', { timeout: 60_000 }, async () => {
    const printer = `
import { defineAgent, z } from '${runtimeIndex}';
export default defineAgent({
  name: 'printer', description: '', options: z.object({}), goal: () => 'print', plan: () => [{ id: 'p', name: 'p' }],
  async run(ctx) {
    await ctx.step('p', () => { console.log('my key is ' + process.env.OPENAI_API_KEY); console.error('auth: Bearer ' + process.env.OPENAI_API_KEY); return 1; });
  },
});
`;
    const project = await writeAgentProject(tmp, 'printer.mjs', printer);
    const runner = new Runner({ root: project.root, env: { ...process.env, OPENAI_API_KEY: key } });
    const lines: string[] = [];
    runner.onEvent((e) => {
      if (e.type === 'line') lines.push(e.line);
    });
    expect((await runner.startRun({ agent: project.moduleFile, cwd: project.project, taskId: 'pr' })).status).toBe('done');
    expect(lines).toContain('my key is [redacted]');
    expect(lines).toContain('auth: Bearer [redacted]');
    expect(lines.join('\n')).not.toContain(key);
  });
});
