/**
 * Python agents killed: SIGKILL the Python examples (python/examples/) at
 * random moments of their drive, in every recovery mode, then run them again
 * (approving in confirm mode), killing again now and then, until the task is
 * done.
 *
 * Counted, as the TypeScript store reads the task: done steps executed again,
 * the summariser's index published more than once (or never), corrupt or
 * unreadable checkpoints after every kill, final results that differ from an
 * uncrashed run, tasks that never finish, refusals without a reason.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { REPO } from '../lib/cli-bundle.js';
import { corruptionOf, doneStepsRunAgain, finalResults } from '../lib/task-audit.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { forEachLimit, messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

const AGENTS = ['checkpoint_demo', 'md_summarizer'] as const;
const MODES = ['manual', 'auto', 'confirm'] as const;
type Agent = (typeof AGENTS)[number];

const CHECKS = [
  'done step executed again',
  'side effect performed more than once',
  'side effect never performed',
  'corrupt or unreadable checkpoint',
  'final result differs from an uncrashed run',
  'task never finished',
  'unclear refusal',
] as const;

/** Runs of the agent after which a task that is still not done counts as never finished. */
const MAX_COMMANDS = 25;

interface Command {
  code: number | null;
  stdout: string;
  stderr: string;
  killed: boolean;
  /** From the first output line to the exit: how long the drive took. */
  driveMs: number;
}

/** Run one Python example; with `killAfterMs`, SIGKILL it that long after its first output line (the drive has begun). */
function runPython(args: string[], env: NodeJS.ProcessEnv, killAfterMs: number | null): Promise<Command> {
  return new Promise((resolve) => {
    const child = spawn('python3', args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    let timer: NodeJS.Timeout | null = null;
    let firstLine = 0;
    child.stdout.on('data', (d: Buffer) => {
      if (stdout === '') {
        firstLine = Date.now();
        if (killAfterMs !== null)
          timer = setTimeout(() => {
            killed = child.kill('SIGKILL');
          }, killAfterMs);
      }
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, stdout, stderr, killed: killed && code === null, driveMs: firstLine ? Date.now() - firstLine : 0 });
    });
  });
}

async function markdownInput(dir: string): Promise<string> {
  const input = path.join(dir, 'input');
  await fs.mkdir(input, { recursive: true });
  await fs.writeFile(path.join(input, 'alpha.md'), '# Alpha\n\nAlpha is first. It leads the way.\n');
  await fs.writeFile(path.join(input, 'beta.md'), '# Beta\n\nBeta follows alpha. It checks the work.\n');
  await fs.writeFile(path.join(input, 'gamma.md'), '# Gamma\n\nGamma closes the set. It publishes.\n');
  return input;
}

/** SIGKILLs of Python agents over `runs` runs, spread over both examples and the three modes. */
export async function pythonKill(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('python agents (SIGKILL)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const parallel = opts.parallel ?? os.cpus().length + 1;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-python-'));
  const root = path.join(base, 'root');
  await fs.mkdir(root);
  const input = await markdownInput(base);
  let service: FakePublishService | null = null;
  try {
    service = await startFakePublishService();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SKIP_FAILURE: '1',
      WAYSTATION_OFFLINE_LATENCY_MS: '40',
      WAYSTATION_AUTO_BACKOFF_MS: '10',
    };
    const url = service.url;
    const script = (agent: Agent) => path.join(REPO, 'python/examples', `${agent}.py`);
    const agentArgs = (agent: Agent): string[] => (agent === 'md_summarizer' ? ['--input', input, '--publish-url', url] : []);
    // Uncrashed reference runs: what every crashed run must end with, and how long a drive takes.
    const reference = new Map<Agent, { result: string; driveMs: number }>();
    for (const agent of AGENTS) {
      const r = await runPython([script(agent), root, '--task', `reference-${agent}`, ...agentArgs(agent)], env, null);
      if (r.code !== 0) throw new Error(`the uncrashed ${agent} run failed (exit ${r.code}): ${r.stderr || r.stdout}`);
      reference.set(agent, { result: await finalResults(root, `reference-${agent}`), driveMs: r.driveMs });
    }

    const plans = Array.from({ length: opts.runs }, (_, i) => ({
      i,
      agent: AGENTS[pick(random, AGENTS.length)],
      mode: MODES[pick(random, MODES.length)],
      // Kill moments spread over the whole drive (its length measured above); the first run is always killed.
      kills: Array.from({ length: 1 + pick(random, 3) }, () => random()),
    }));

    await forEachLimit(plans.length, parallel, async (n) => {
      const plan = plans[n];
      const taskId = `py-${plan.agent.replace('_', '-')}-${plan.i}`;
      const where = `run ${plan.i} (${plan.agent}, ${plan.mode}, seed ${opts.seed})`;
      const { driveMs } = reference.get(plan.agent)!;
      try {
        tally.runs++;
        let approve = false;
        let finished = false;
        let kill = 0;
        for (let c = 0; c < MAX_COMMANDS && !finished; c++) {
          // A kill is spent only when it lands: one that comes after the run ended is tried again on the next run.
          const fraction = plan.kills[kill];
          const args = [
            script(plan.agent),
            root,
            '--task',
            taskId,
            '--mode',
            plan.mode,
            ...agentArgs(plan.agent),
            ...(approve ? ['--approve'] : []),
          ];
          const r = await runPython(args, env, fraction === undefined ? null : Math.floor(fraction * driveMs));
          approve = false;
          if (r.killed) {
            kill++;
            tally.faults++;
            tally.bump('kills');
            const corrupt = await corruptionOf(root, taskId);
            if (corrupt) tally.violation('corrupt or unreadable checkpoint', `${where}, after kill ${c + 1}: ${corrupt}`);
            continue;
          }
          if (r.code === 0) finished = true;
          else if (r.code === 4) approve = true;
          else if (r.code === 2 || r.code === 6) {
            if (!/error: .{10,}/.test(r.stderr))
              tally.violation('unclear refusal', `${where}: exit ${r.code} with ${JSON.stringify(r.stderr)}`);
            tally.bump(`exit ${r.code}`);
          } else tally.bump(`exit ${r.code}`);
        }
        if (!finished) {
          const status = (await openStore(root).getTask(taskId))?.checkpoint?.status;
          tally.violation('task never finished', `${where}: still ${status ?? 'missing'} after ${MAX_COMMANDS} runs`);
          return;
        }
        for (const v of await doneStepsRunAgain(root, taskId)) tally.violation('done step executed again', `${where}: ${v}`);
        const corrupt = await corruptionOf(root, taskId);
        if (corrupt) tally.violation('corrupt or unreadable checkpoint', `${where}, at the end: ${corrupt}`);
        if (plan.agent === 'md_summarizer') {
          const applied = service!.applied.get(`${taskId}:publish-index`) ?? 0;
          if (applied > 1) tally.violation('side effect performed more than once', `${where}: the index was published ${applied} times`);
          if (applied === 0) tally.violation('side effect never performed', `${where}: the index was never published`);
        }
        const result = await finalResults(root, taskId);
        if (result !== reference.get(plan.agent)!.result)
          tally.violation(
            'final result differs from an uncrashed run',
            `${where}: ${firstDifference(result, reference.get(plan.agent)!.result)}`,
          );
      } catch (err) {
        tally.violation('corrupt or unreadable checkpoint', `${where}: ${messageOf(err)}`);
      }
      if ((n + 1) % 50 === 0) opts.log(`python agents: ${n + 1}/${opts.runs} runs, ${tally.faults} kills, ${tally.total} violations`);
    });
  } finally {
    await service?.close();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at character ${i}: ${JSON.stringify(a.slice(Math.max(0, i - 60), i + 60))} vs ${JSON.stringify(b.slice(Math.max(0, i - 60), i + 60))}`;
}
