/**
 * Time travel under kill -9: `fork`, `rewind --yes` and `edit` SIGKILLed at a
 * random moment of their run, and `stop` sent at a random moment of a run
 * that saves as fast as it can. Each run starts from a finished
 * Markdown-summariser task of its own, whose index was published once. (Not a
 * copy of one: the agent records its output folder as an absolute path.)
 *
 * Counted: a half-written operation (a task that no longer reads, versions
 * missing or out of order), a version lost (fewer versions than before), the
 * parent of a fork changed by a byte, an operation that cannot be done again
 * after the kill, a task that does not resume to done afterwards, and the
 * index published more than once (every rewind keeps the effect) or never.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { bundleCli, REPO } from '../lib/cli-bundle.js';
import { corruptionOf } from '../lib/task-audit.js';
import { agentEnv, forEachLimit, messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';
import { treeDigest as hashTree } from '../../support/hash-tree.js';

const CHECKS = [
  'half-written operation',
  'version lost',
  'parent of a fork changed',
  'operation cannot be done again after the kill',
  'task does not resume to done',
  'index published more than once',
  'index never published',
] as const;

const OPERATIONS = ['fork', 'rewind', 'edit', 'stop'] as const;
type Operation = (typeof OPERATIONS)[number];
/** The finished task a run works on; each run's own id, so the keys of its effects are its own. */
function taskOf(run: string): string {
  return `sum-${run}`;
}
/** The step every rewind and edit goes back to: the second summary, before the publish. */
const STEP = 'summarize:beta.md';

/** The task an operation leaves to resume: the fork, the stopped run (each run's own id, so its effect's key is its own), or the task. */
function subject(op: Operation, run: string): string {
  return op === 'fork' ? `forked-${run}` : op === 'stop' ? `stopped-${run}` : taskOf(run);
}

interface Finished {
  code: number | null;
  out: string;
}

/** Run the CLI; with `killAfterMs`, SIGKILL it (and its workers) that long after it started. */
function cli(bundle: string, args: string[], env: NodeJS.ProcessEnv, killAfterMs?: number): Promise<Finished & { killed: boolean }> {
  return new Promise((resolve) => {
    // Its own process group, so a kill reaches the workers it started too.
    const child = spawn(process.execPath, [bundle, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer =
      killAfterMs === undefined
        ? null
        : setTimeout(() => {
            try {
              process.kill(-child.pid!, 'SIGKILL');
              killed = true;
            } catch {
              // Already ended.
            }
          }, killAfterMs);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, out, killed });
    });
  });
}

/** Kills during fork, rewind and edit, and stops during a run, over `runs` runs. */
export async function timeTravel(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('time travel (fork, rewind, edit, stop) under kill -9', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-tt-'));
  const input = path.join(base, 'input');
  await fs.mkdir(input);
  for (const name of ['alpha', 'beta', 'gamma'])
    await fs.writeFile(path.join(input, `${name}.md`), `# ${name}\n\n${name} is a file. It has two sentences.\n`);
  let service: FakePublishService | null = null;
  const bundle = await bundleCli();
  try {
    service = await startFakePublishService();
    const env = agentEnv(5);
    const agentArgs = ['--input', input, '--publish-url', service.url];

    /** A finished task `taskOf(run)` in `root`, its index published once. */
    async function finished(root: string, run: string): Promise<number> {
      const started = Date.now();
      const made = await cli(bundle.cli, ['run', root, 'md-summarizer', '--task', taskOf(run), ...agentArgs], env);
      if (made.code !== 0) throw new Error(`the task of ${run} did not finish:\n${made.out}`);
      return Date.now() - started;
    }
    // How long each operation takes uncrashed (where a kill may land); a stop lands anywhere in a run of the agent.
    const durations = new Map<Operation, number>([['stop', await finished(path.join(base, 'measure-stop'), 'measure-stop')]]);
    for (const op of ['fork', 'rewind', 'edit'] as const) {
      const dir = path.join(base, `measure-${op}`);
      await finished(dir, `measure-${op}`);
      const started = Date.now();
      const measured = await operate(op, dir, `measure-${op}`);
      if (measured.code !== 0) throw new Error(`${op} fails even uncrashed:\n${measured.out}`);
      durations.set(op, Math.max(50, Date.now() - started));
    }

    async function operate(op: Operation, root: string, run: string, killAfterMs?: number) {
      switch (op) {
        case 'fork':
          return cli(bundle.cli, ['fork', root, taskOf(run), '3', '--task', subject(op, run), '--by', run], env, killAfterMs);
        case 'rewind':
          return cli(bundle.cli, ['rewind', root, taskOf(run), STEP, '--yes', '--by', run], env, killAfterMs);
        case 'edit':
          return cli(
            bundle.cli,
            [
              'edit',
              root,
              taskOf(run),
              STEP,
              '--value',
              JSON.stringify({ file: 'beta.md', summary_path: 'beta.summary.md', summary: `edited by ${run}` }),
              '--by',
              run,
            ],
            env,
            killAfterMs,
          );
        case 'stop': {
          // A run of its own, stopped while it saves: the stop is the operation, sent at a random moment.
          const runTask = cli(bundle.cli, ['run', root, 'md-summarizer', '--task', subject(op, run), ...agentArgs], env);
          await new Promise((r) => setTimeout(r, killAfterMs ?? 0));
          const stopped = await cli(bundle.cli, ['stop', root, subject(op, run), '--by', run, '--wait', '5'], env);
          await runTask;
          return { ...stopped, killed: false };
        }
      }
    }

    await forEachLimit(opts.runs, opts.parallel ?? os.cpus().length, async (i) => {
      const op = OPERATIONS[i % OPERATIONS.length];
      const where = `run ${i} (${op})`;
      const root = path.join(base, `run-${i}`);
      const run = `r${i}`;
      const task = taskOf(run);
      await finished(root, run);
      const store = openStore(root);
      const versionsBefore = (await store.history(task)).length;
      const parentBefore = await hashTree(path.join(root, task));
      const at = pick(random, durations.get(op)! + 1);
      try {
        const first = await operate(op, root, run, at);
        tally.runs++;
        if (first.killed || op === 'stop') tally.faults++;
        const checked = subject(op, run);
        for (const id of new Set([task, checked])) {
          const corrupt = await corruptionOf(root, id);
          if (corrupt) tally.violation('half-written operation', `${where}, killed after ${at} ms: task ${id}: ${corrupt}`);
        }
        if ((await store.history(task)).length < versionsBefore)
          tally.violation('version lost', `${where}: task ${task} had ${versionsBefore} versions, it has fewer`);
        if (op === 'fork' && (await hashTree(path.join(root, task))) !== parentBefore)
          tally.violation('parent of a fork changed', `${where}, killed after ${at} ms: the parent's folder changed`);

        // A kill that landed before the operation wrote its version leaves it to be done again, and it completes; one
        // that landed after leaves it done (whole, as the checks above say).
        const applied =
          op === 'fork' ? Boolean((await store.getTask(checked))?.checkpoint) : (await store.history(task)).length > versionsBefore;
        if (first.killed && op !== 'stop' && !applied) {
          const again = await operate(op, root, run);
          if (again.code !== 0)
            tally.violation(
              'operation cannot be done again after the kill',
              `${where}: exit ${again.code}: ${again.out.trim().slice(0, 400)}`,
            );
        }
        const resumed = await cli(bundle.cli, ['resume', root, checked, '--trust'], env);
        const entry = await store.getTask(checked);
        if (entry?.checkpoint?.status !== 'done')
          tally.violation(
            'task does not resume to done',
            `${where}: ${checked} is ${entry?.checkpoint?.status ?? 'unreadable'}: ${resumed.out.trim().slice(0, 400)}`,
          );
        // Kept effects keep their key: the index of each task is published once, whatever was rerun.
        for (const id of new Set([task, checked])) {
          const key = `${id}:publish-index`;
          const published = (service!.applied.get(key) ?? 0) + (service!.duplicates.get(key) ?? 0);
          if (id === task || op === 'stop') {
            if (published === 0) tally.violation('index never published', `${where}: ${key}`);
          }
        }
      } catch (err) {
        tally.violation('half-written operation', `${where}: the run itself failed: ${messageOf(err)}`);
      } finally {
        await fs.rm(root, { recursive: true, force: true });
      }
    });
    // Every task has keys of its own (its id is in them), and each key is published once, ever.
    for (const [key, duplicates] of service.duplicates) {
      if (duplicates > 0) tally.violation('index published more than once', `${key} was POSTed again ${duplicates} times`);
    }
    tally.figures['keys published'] = service.applied.size;
    for (const [op, ms] of durations) tally.figures[`${op} ms (uncrashed)`] = ms;
  } finally {
    await service?.close();
    await bundle.dispose();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}
