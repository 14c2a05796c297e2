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
import { finalResults } from '../lib/task-audit.js';
import { markdownInput } from '../lib/markdown-input.js';
import { checkNotCorrupt, DISTURBED_RUN_CHECKS } from '../lib/finished-task-checks.js';
import { AGENTS, checkRefusal, checkRunsEnded, exampleArgs, MAX_COMMANDS, MODES, type Agent } from '../lib/python-examples.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { agentEnv, forEachLimit, messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

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

/** SIGKILLs of Python agents over `runs` runs, spread over both examples and the three modes. */
export async function pythonKill(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('python agents (SIGKILL)', DISTURBED_RUN_CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const parallel = opts.parallel ?? os.cpus().length + 1;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-python-'));
  const root = path.join(base, 'root');
  await fs.mkdir(root);
  const input = await markdownInput(base);
  let service: FakePublishService | null = null;
  try {
    service = await startFakePublishService();
    const env = agentEnv(40, { SKIP_FAILURE: '1', WAYSTATION_AUTO_BACKOFF_MS: '10' });
    const inputs = { input, publishUrl: service.url };
    // Uncrashed reference runs: what every crashed run must end with, and how long a drive takes.
    const reference = new Map<Agent, { result: string; driveMs: number }>();
    for (const agent of AGENTS) {
      const r = await runPython(exampleArgs(agent, inputs, { root, taskId: `reference-${agent}` }), env, null);
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
          const args = exampleArgs(plan.agent, inputs, { root, taskId, mode: plan.mode, approve });
          const r = await runPython(args, env, fraction === undefined ? null : Math.floor(fraction * driveMs));
          approve = false;
          if (r.killed) {
            kill++;
            tally.faults++;
            tally.bump('kills');
            await checkNotCorrupt(tally, root, taskId, `${where}, after kill ${c + 1}`);
            continue;
          }
          if (r.code === 0) finished = true;
          else if (r.code === 4) approve = true;
          else if (r.code === 2 || r.code === 6) checkRefusal(tally, where, r.code, r.stderr);
          else tally.bump(`exit ${r.code}`);
        }
        await checkRunsEnded(
          tally,
          openStore(root),
          { root, taskId, where, finished },
          {
            reference: reference.get(plan.agent)!.result,
            effect: plan.agent === 'md_summarizer' ? { service: service!, key: `${taskId}:publish-index` } : null,
          },
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
