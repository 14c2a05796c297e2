/**
 * Agents that are not built in: started from a module path or by the name
 * the directory's waystation.config.json registers, recorded so that resume
 * and approve relaunch the same module, and refused clearly (leaving the
 * task and the rest of the directory untouched) when the module is missing,
 * throws on load, exports nothing runnable, hangs, or describes an invalid
 * checkpoint. Real worker processes on real temporary directories.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { Runner, type RunnerEvent } from '../../../electron/runtime/runner.js';
import { describeAgentModule } from '../../../electron/runtime/agent-describer.js';
import { looksLikeAgent } from '../../../electron/runtime/agent-loader.js';
import { defineAgent } from '../../../electron/runtime/define-agent.js';
import { OperationError, startTask } from '../../../electron/runtime/task-operations.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { z } from 'zod';
import { listAvailableAgents } from '../../../electron/runtime/agent-catalog.js';
import { agentStatus } from '../../../electron/runtime/agent-status.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { RUNTIME_INDEX_URL as runtimeIndex, writeAgentProject } from './agent-project.js';

/** Counts words, then writes a report once a gate file exists: the second step fails until then. */
const WORD_COUNTER = `
import { promises as fs } from 'node:fs';
import { defineAgent, z } from '${runtimeIndex}';

export default defineAgent({
  name: 'word-counter',
  description: 'counts words, then writes a report once the gate file exists',
  options: z.object({ text: z.string().default('one two three'), gate: z.string() }),
  goal: (o) => 'count the words of ' + JSON.stringify(o.text),
  plan: () => [
    { id: 'count', name: 'count the words', output_schema: z.object({ words: z.number().int() }) },
    { id: 'report', name: 'write the report' },
  ],
  async run(ctx) {
    const { words } = await ctx.step('count', () => ({ words: ctx.options.text.split(/\\s+/).length }));
    await ctx.step('report', async () => {
      await fs.access(ctx.options.gate).catch(() => { throw new Error('the gate file is missing'); });
      await ctx.writeArtifact('out/report.txt', 'words: ' + words + '\\n');
      return 'words: ' + words;
    });
  },
});
`;

/**
 * Saves a first step, then dies by SIGKILL in its second step unless the
 * marker file exists (it writes it just before dying): the first run crashes,
 * any relaunch finishes.
 */
const CRASHER = `
import { promises as fs } from 'node:fs';
import { defineAgent, z } from '${runtimeIndex}';

export default defineAgent({
  name: 'crasher',
  description: 'crashes once in its second step',
  options: z.object({ marker: z.string() }),
  goal: () => 'survive a crash',
  plan: () => [{ id: 'first', name: 'first' }, { id: 'second', name: 'second' }],
  async run(ctx) {
    await ctx.step('first', () => 'saved before the crash');
    await ctx.step('second', async () => {
      const seen = await fs.access(ctx.options.marker).then(() => true, () => false);
      if (!seen) {
        await fs.writeFile(ctx.options.marker, 'crashed once');
        process.kill(process.pid, 'SIGKILL');
        await new Promise(() => {});
      }
      return 'survived';
    });
  },
});
`;

let tmp: string;
let project: string;
let root: string;
let gate: string;
let moduleFile: string;

useOfflineWorkers();
beforeEach(async () => {
  // Real paths: a project that contains the checkpoint directory is recorded relative to it only when no link is in between.
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-modules-')));
  ({ project, root, gate, moduleFile } = await writeAgentProject(tmp, 'word-counter.ts', WORD_COUNTER));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const latest = async (id: string) => (await openStore(root).getTask(id))!.checkpoint!;
const versionCount = async (id: string) => (await openStore(root).history(id)).length;

describe('an agent module given by path', () => {
  it('is recorded with its project, export and hash, and resume relaunches it', async () => {
    const first = await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    expect(first.code).toBe(RunExit.failed);
    expect(first.out).toContain('the gate file is missing');
    const cp = await latest('wc');
    expect(cp.agent).toMatchObject({
      name: 'word-counter',
      module: 'agents/word-counter.ts',
      export: 'default',
      // The project holds the checkpoint directory: recorded relative to it, so both can move together.
      project_root: '..',
      options: { text: 'one two three', gate },
    });
    expect(cp.agent!.module_sha256).toMatch(/^[0-9a-f]{64}$/);

    await fs.writeFile(gate, 'open');
    const resumed = await cli('resume', root, 'wc');
    expect(resumed.code).toBe(RunExit.done);
    expect(resumed.out).not.toContain('changed since');
    const done = await latest('wc');
    expect(done.status).toBe('done');
    expect(done.plan.map((s) => s.attempts)).toEqual([1, 2]);
    // Relative artifact paths resolve against the recorded project root.
    expect(await fs.readFile(path.join(project, 'out/report.txt'), 'utf8')).toBe('words: 3\n');
  });

  it('moves with its project: the whole project renamed, resume still finds the module', async () => {
    await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    expect((await latest('wc')).agent?.project_root).toBe('..');
    const moved = path.join(tmp, 'moved-project');
    await fs.rename(project, moved);
    const movedRoot = path.join(moved, 'checkpoints');

    await fs.writeFile(gate, 'open');
    // Moved, it is another directory: trusted anew.
    const resumed = await cli('resume', movedRoot, 'wc', '--trust');
    expect(resumed.code, resumed.err).toBe(RunExit.done);
    expect((await openStore(movedRoot).getTask('wc'))!.checkpoint!.status).toBe('done');
    expect(await fs.readFile(path.join(moved, 'out/report.txt'), 'utf8')).toBe('words: 3\n');
  });

  it('is recorded with an absolute project root when the project is beside the directory, not around it', async () => {
    const beside = path.join(tmp, 'beside');
    await fs.mkdir(beside);
    await fs.writeFile(gate, 'open');
    const run = await cli('run', beside, moduleFile, '--task', 'wc', '--gate', gate);
    expect(run.code, run.err).toBe(RunExit.done);
    expect((await openStore(beside).getTask('wc'))!.checkpoint!.agent).toMatchObject({
      module: 'agents/word-counter.ts',
      project_root: project,
    });
  });

  it('still resumes a task that recorded its project root as an absolute path', async () => {
    await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    const store = openStore(root);
    const { version, ...rest } = await latest('wc');
    // As earlier builds recorded it.
    await store.save('wc', { expectedVersion: version, checkpoint: { ...rest, agent: { ...rest.agent!, project_root: project } } });
    expect((await latest('wc')).agent?.project_root).toBe(project);

    await fs.writeFile(gate, 'open');
    const resumed = await cli('resume', root, 'wc');
    expect(resumed.code, resumed.err).toBe(RunExit.done);
    expect((await latest('wc')).status).toBe('done');
    expect(await fs.readFile(path.join(project, 'out/report.txt'), 'utf8')).toBe('words: 3\n');
  });

  it('reports a changed module before resuming, and records the new hash', async () => {
    await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    const before = (await latest('wc')).agent!.module_sha256;
    await fs.appendFile(moduleFile, '\n// a later edit\n');
    expect(await agentStatus(root, await latest('wc'))).toMatchObject({ kind: 'module', available: true, module_changed: true });

    await fs.writeFile(gate, 'open');
    const resumed = await cli('resume', root, 'wc');
    expect(resumed.code).toBe(RunExit.done);
    expect(resumed.out).toContain('the agent module agents/word-counter.ts changed since task wc recorded it');
    const agent = (await latest('wc')).agent as { module_sha256?: string; previous_module_sha256?: string };
    expect(agent.previous_module_sha256).toBe(before);
    expect(agent.module_sha256).not.toBe(before);
  });

  it('in confirm mode, puts the changed module in the resume plan the human approves', async () => {
    const first = await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate, '--mode', 'confirm');
    expect(first.code).toBe(RunExit.waiting_approval);
    expect((await latest('wc')).recovery.pending_approval!.plan.module_changed).toBeUndefined();

    await fs.appendFile(moduleFile, '\n// a later edit\n');
    await fs.writeFile(gate, 'open');
    // The plan on record did not mention the change: approving it prepares a new one instead of running.
    const stale = await cli('approve', root, 'wc');
    expect(stale.code).toBe(RunExit.waiting_approval);
    expect(stale.out).toContain('the agent module changed since the task recorded it');
    expect((await latest('wc')).recovery.pending_approval!.plan.module_changed).toBe(true);

    const approved = await cli('approve', root, 'wc');
    expect(approved.code).toBe(RunExit.done);
    expect((await latest('wc')).status).toBe('done');
  });

  it('leaves the task untouched when the module is gone, and says why', async () => {
    await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    const versions = await versionCount('wc');
    await fs.rename(moduleFile, path.join(project, 'agents/moved.ts'));
    expect(await agentStatus(root, await latest('wc'))).toMatchObject({ available: false });

    const resumed = await cli('resume', root, 'wc');
    expect(resumed.code).toBe(RunExit.usage);
    expect(resumed.err).toContain('word-counter.ts does not exist');
    expect(resumed.err).toContain('left untouched');
    expect(await versionCount('wc')).toBe(versions);
  });

  it('leaves the task untouched when the module no longer loads', async () => {
    await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    const versions = await versionCount('wc');
    await fs.writeFile(moduleFile, "throw new Error('broken by an edit');\n");
    const resumed = await cli('resume', root, 'wc');
    expect(resumed.code).toBe(RunExit.usage);
    expect(resumed.err).toContain('fails to load: broken by an edit');
    expect(await versionCount('wc')).toBe(versions);
  });
});

describe('a module agent that crashes', () => {
  async function writeCrasher(): Promise<{ file: string; marker: string }> {
    const file = path.join(project, 'agents', 'crasher.ts');
    await fs.writeFile(file, CRASHER);
    return { file, marker: path.join(tmp, 'crashed-once') };
  }
  const spawns = (events: RunnerEvent[], taskId: string) => events.filter((e) => e.type === 'spawned' && e.taskId === taskId).length;

  it('in auto mode, is relaunched from its recorded module after the crash and finishes', async () => {
    const { file, marker } = await writeCrasher();
    const runner = new Runner({ root, backoffMs: 10 });
    const events: RunnerEvent[] = [];
    runner.onEvent((e) => void events.push(e));
    const outcome = await runner.startRun({ agent: file, cwd: project, taskId: 'auto', mode: 'auto', options: { marker } });

    expect(outcome).toMatchObject({ task_id: 'auto', status: 'done' });
    expect(await fs.readFile(marker, 'utf8')).toBe('crashed once');
    expect(spawns(events, 'auto')).toBe(2);
    expect(events.some((e) => e.type === 'retrying' && e.taskId === 'auto')).toBe(true);
    const cp = await latest('auto');
    expect(cp.agent).toMatchObject({ name: 'crasher', module: 'agents/crasher.ts', project_root: '..' });
    // The first step ran once; the second, killed mid-way, was run again by the relaunched worker.
    expect(cp.plan.map((s) => [s.id, s.status])).toEqual([
      ['first', 'done'],
      ['second', 'done'],
    ]);
    expect(cp.plan[0].attempts).toBe(1);
    expect(await openStore(root).readBlob(cp.task_id, cp.plan[1].result_ref!)).toBe('survived');
  });

  it('left interrupted in auto mode, is resumed by the start-up recovery with its recorded module', async () => {
    const { file, marker } = await writeCrasher();
    const described = await describeAgentModule({ root, spec: file, cwd: project });
    const agentRef = {
      name: described.name,
      module: described.module,
      export: described.export,
      project_root: described.project_root,
      module_sha256: described.module_sha256,
    };
    // One worker with no supervisor: the crash leaves the task running, as a host killed with its worker would.
    const crashed = await new Runner({ root }).spawnWorker({
      kind: 'start',
      root,
      taskId: 'boot',
      agentRef,
      options: { marker },
      mode: 'auto',
    }).done;
    expect(crashed.crashed).toBe(true);
    expect((await latest('boot')).status).toBe('running');

    const runner = new Runner({ root, backoffMs: 10 });
    const outcomes = await runner.recoverInterrupted();
    expect(outcomes.map((o) => [o.task_id, o.status])).toEqual([['boot', 'done']]);
    const cp = await latest('boot');
    // The first step ran once; the second, killed mid-way, was run again by the relaunched worker.
    expect(cp.plan.map((s) => [s.id, s.status])).toEqual([
      ['first', 'done'],
      ['second', 'done'],
    ]);
    expect(cp.plan[0].attempts).toBe(1);
    expect(await openStore(root).readBlob(cp.task_id, cp.plan[1].result_ref!)).toBe('survived');
    expect(cp.agent).toMatchObject({ name: 'crasher', module: 'agents/crasher.ts' });
  });
});

describe('options that would record a secret', () => {
  const echo = defineAgent({
    name: 'echo',
    description: 'records its options',
    options: z.object({ note: z.string() }),
    goal: () => 'echo',
    plan: () => [{ id: 'a', name: 'a' }],
    async run(ctx) {
      await ctx.step('a', () => ctx.options.note);
    },
  });
  const start = (note: string, env: NodeJS.ProcessEnv) =>
    startTask({ store: openStore(root), root, env, llm: new OfflineProvider(0), report: () => {} }, echo, {
      taskId: 'echo',
      options: { note },
    });

  it('are refused, naming the variable and not its value, and nothing is written', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-test-0123456789abcdef',
      GITHUB_TOKEN: 'ghp_abcdefgh12345678',
      DB_PASSWORD: 'correct horse battery',
      SESSION_SECRET: 's3cr3t-"quoted"',
    };
    for (const [name, value, note] of [
      ['OPENAI_API_KEY', env.OPENAI_API_KEY, env.OPENAI_API_KEY],
      ['GITHUB_TOKEN', env.GITHUB_TOKEN, `https://x:${env.GITHUB_TOKEN}@example.test/repo`],
      ['DB_PASSWORD', env.DB_PASSWORD, env.DB_PASSWORD],
      ['SESSION_SECRET', env.SESSION_SECRET, `secret is ${env.SESSION_SECRET}`],
    ] as const) {
      const refused = await start(note, env).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused, name).toBeInstanceOf(OperationError);
      expect((refused as OperationError).message).toContain(`contains the value of ${name}`);
      expect((refused as OperationError).message).toContain('Nothing was written');
      expect((refused as OperationError).message).not.toContain(value);
    }
    expect(await openStore(root).listTasks()).toEqual([]);
    await expect(fs.readdir(path.join(root, 'echo'))).rejects.toThrow();
  });

  it('are not confused with settings: short values and variables not named like secrets', async () => {
    const env = { SHORT_TOKEN: 'abc', HOME_DIR: '/home/someone/project', OPENAI_API_KEY: '' };
    const outcome = await start('abc in /home/someone/project', env);
    expect(outcome.status).toBe('done');
    expect((await latest('echo')).agent?.options).toEqual({ note: 'abc in /home/someone/project' });
  });
});

describe('what counts as an agent', () => {
  it('requires what starting a task needs: a goal, and options that are a zod schema', () => {
    const base = { name: 'x', description: '', goal: () => 'g', plan: () => [], run: async () => {} };
    expect(looksLikeAgent({ ...base, options: z.object({}) })).toBe(true);
    expect(looksLikeAgent(base)).toBe(false);
    expect(looksLikeAgent({ ...base, options: z.object({}), goal: undefined })).toBe(false);
    expect(looksLikeAgent({ ...base, options: { text: 'string' } })).toBe(false);
    expect(looksLikeAgent({ ...base, options: null })).toBe(false);
    expect(looksLikeAgent({ ...base, run: 'not a function' })).toBe(false);
  });
});

describe('a bad agent module', () => {
  async function runModule(name: string, source: string, env: Record<string, string> = {}) {
    const file = path.join(project, 'agents', name);
    await fs.writeFile(file, source);
    Object.assign(process.env, env);
    try {
      return await cli('run', root, file, '--task', name.replace(/\W/g, '-'));
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
    }
  }

  it('is a clear error on that task, and the rest of the directory is unaffected', async () => {
    await fs.writeFile(gate, 'open');
    expect((await cli('run', root, moduleFile, '--task', 'good', '--gate', gate)).code).toBe(RunExit.done);

    const throws = await runModule('throws.mjs', "throw new Error('boom at load');\n");
    expect(throws.code).toBe(RunExit.usage);
    expect(throws.err).toContain('throws.mjs fails to load: boom at load');

    const nothing = await runModule('nothing.mjs', 'export const answer = 42;\n');
    expect(nothing.code).toBe(RunExit.usage);
    expect(nothing.err).toContain('does not export an agent');
    expect(nothing.err).toContain('Its exports are: answer');

    // Options that are not a zod schema: refused at load with the reason, not a TypeError at the first parse.
    const plainOptions = await runModule(
      'plain-options.mjs',
      "export default { name: 'plain', description: '', options: { text: 'string' }, goal: () => 'g', plan: () => [], async run() {} };\n",
    );
    expect(plainOptions.code).toBe(RunExit.usage);
    expect(plainOptions.err).toContain('does not export an agent');
    expect(plainOptions.err).toContain('its options is not a zod schema (it has no safeParse)');
    expect(plainOptions.err).not.toContain('is not a function');

    const hangs = await runModule('hangs.mjs', 'await new Promise(() => {});\n', { WAYSTATION_AGENT_LOAD_TIMEOUT_MS: '300' });
    expect(hangs.code).toBe(RunExit.usage);
    expect(hangs.err).toContain('did not finish loading within 300 ms');

    const invalid = await runModule(
      'invalid.ts',
      `import { defineAgent, z } from '${runtimeIndex}';
export default defineAgent({ name: 'invalid', description: '', options: z.object({}), goal: () => 42 as unknown as string,
  plan: () => [{ id: 'a', name: 'a' }], async run(ctx) { await ctx.step('a', () => 1); } });\n`,
    );
    expect(invalid.code).toBe(RunExit.usage);
    expect(invalid.err).toContain('agent invalid describes a task that is not a valid checkpoint');
    expect(invalid.err).toContain('goal');

    const store = openStore(root);
    const tasks = await store.listTasks();
    expect(tasks.map((t) => t.task_id)).toEqual(['good']);
    expect(tasks[0].problems).toEqual([]);
    expect(tasks[0].checkpoint!.status).toBe('done');
  });
});

describe('an agent module stuck in a busy loop at start-up', () => {
  it('is stopped by the runner, for a new task and for a resume, and the task is left untouched', async () => {
    await cli('run', root, moduleFile, '--task', 'wc', '--gate', gate);
    const versions = await versionCount('wc');
    const spin = path.join(project, 'agents/spin.mjs');
    await fs.writeFile(spin, 'for (;;) {}\n');
    process.env.WAYSTATION_AGENT_LOAD_TIMEOUT_MS = '1000';
    try {
      const run = await cli('run', root, spin, '--task', 'spin');
      expect(run.code).toBe(RunExit.usage);
      expect(run.err).toContain('did not finish loading within 1000 ms (it hangs at start-up)');

      await fs.writeFile(moduleFile, 'for (;;) {}\n');
      const resumed = await cli('resume', root, 'wc');
      expect(resumed.code).toBe(RunExit.usage);
      expect(resumed.err).toContain('did not finish loading within 1000 ms');
      expect(resumed.err).toContain('the task was left untouched');
    } finally {
      delete process.env.WAYSTATION_AGENT_LOAD_TIMEOUT_MS;
    }
    expect(await versionCount('wc')).toBe(versions);
    expect((await openStore(root).listTasks()).map((t) => t.task_id)).toEqual(['wc']);
  });
});

describe('agents registered in waystation.config.json', () => {
  it('are listed with the built-ins and started by name', async () => {
    await fs.mkdir(path.join(root, 'agents'));
    await fs.copyFile(moduleFile, path.join(root, 'agents/word-counter.ts'));
    await fs.writeFile(path.join(root, 'agents/broken.mjs'), "throw new Error('not today');\n");
    await fs.writeFile(
      path.join(root, 'waystation.config.json'),
      JSON.stringify({ agents: [{ module: './agents/word-counter.ts', export: 'default' }, { module: './agents/broken.mjs' }] }),
    );
    const catalog = await listAvailableAgents(root);
    expect(catalog.config_problem).toBeNull();
    expect(catalog.agents.map((a) => [a.name, a.origin])).toEqual([
      ['checkpoint-demo', 'builtin'],
      ['md-summarizer', 'builtin'],
      ['word-counter', 'registered'],
      ['./agents/broken.mjs', 'registered'],
    ]);
    const wc = catalog.agents[2];
    expect(wc.problem).toBeUndefined();
    expect(wc.description).toContain('counts words');
    expect(wc.options_schema).toMatchObject({ type: 'object', required: ['gate'] });
    expect(catalog.agents[3].problem).toContain('fails to load: not today');

    await fs.writeFile(gate, 'open');
    const run = await cli('run', root, 'word-counter', '--task', 'reg', '--gate', gate, '--trust');
    expect(run.code).toBe(RunExit.done);
    // Recorded relative to the directory, so the directory and its agents move together.
    expect((await latest('reg')).agent).toMatchObject({ name: 'word-counter', module: 'agents/word-counter.ts', project_root: '.' });
  });

  it('a bad configuration file is reported clearly', async () => {
    await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ modul: './x.ts' }] }));
    const catalog = await listAvailableAgents(root);
    expect(catalog.config_problem).toContain('waystation.config.json does not fit the expected shape');
    expect(catalog.config_problem).toContain('agents.0');
    expect(catalog.agents.find((a) => a.name === 'waystation.config.json')?.problem).toBe(catalog.config_problem);
    expect(catalog.agents.filter((a) => a.origin === 'builtin')).toHaveLength(2);

    const run = await cli('run', root, 'word-counter', '--task', 'x');
    expect(run.code).toBe(RunExit.usage);
    expect(run.err).toContain('does not fit the expected shape');
    expect(await openStore(root).listTasks()).toEqual([]);
  });
});
