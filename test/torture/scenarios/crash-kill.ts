/**
 * Crashes: SIGKILL the runner (the `waystation` CLI process), its worker, or
 * both, at random moments of runs of both demo agents in every recovery mode,
 * then resume (or approve, in confirm mode) until the task is done, killing
 * again now and then. On a checkpoint directory (`crashKill`) or on a
 * database of a throwaway PostgreSQL cluster (`crashKillPostgres`), where a
 * kill also lands in the middle of a transaction.
 *
 * Counted: done steps executed again, side effects performed more than once
 * (by the fake publish service, by idempotency key), corrupt or unreadable
 * checkpoints (after every crash), and final results that differ from an
 * uncrashed run of the same agent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pidAlive } from '../../../electron/store/lease-rules.js';
import { openLocation } from '../../../electron/store/open-location.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { createDatabase } from '../../support/postgres-cluster.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { bundleCli, REPO } from '../lib/cli-bundle.js';
import { finalResults } from '../lib/task-audit.js';
import { markdownInput } from '../lib/markdown-input.js';
import { checkFinishedTask, checkNotCorrupt, DISTURBED_RUN_CHECKS } from '../lib/finished-task-checks.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { agentEnv, forEachLimit, messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

const AGENTS = ['checkpoint-demo', 'md-summarizer'] as const;
const MODES = ['manual', 'auto', 'confirm'] as const;
const TARGETS = ['runner', 'worker', 'both'] as const;
type Agent = (typeof AGENTS)[number];
type Target = (typeof TARGETS)[number];

/** Resumes after which a run that is still not done counts as never finished. */
const MAX_COMMANDS = 25;

/** When to SIGKILL what: `afterMs` from the spawn (start-up) or from the first output line (the drive). */
interface Kill {
  afterMs: number;
  target: Target;
  /** `never`: no kill, only `onFirstLine` (the reference runs time themselves with it). */
  from: 'spawn' | 'first-line' | 'never';
  onFirstLine?: () => void;
}

interface Command {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  killed: Target | null;
}

/** The processes of one command: the CLI and, once forked, its worker (read from /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Run one CLI command, SIGKILLing `kill.target` at the moment `kill` says.
 *
 * A worker that does not exist yet at that moment is waited for (the kill
 * lands as soon as it is forked), so "worker" never silently means "nothing".
 */
function runCommand(cli: string, args: string[], env: NodeJS.ProcessEnv, kill: Kill | null): Promise<Command> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, [cli, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed: Target | null = null;
    let exited = false;
    let timer: NodeJS.Timeout | null = null;
    child.stdout!.on('data', (d: Buffer) => {
      // The first line is the worker's first step starting: from here on a kill lands in the drive, not in start-up.
      if (stdout === '') {
        kill?.onFirstLine?.();
        if (kill?.from === 'first-line') timer = setTimeout(strike, kill.afterMs);
      }
      stdout += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    function strike() {
      if (exited || child.pid === undefined || !kill) return;
      const workers = childrenOf(child.pid);
      if (kill.target === 'runner') {
        killQuietly(child.pid);
      } else if (workers.length === 0) {
        timer = setTimeout(strike, 5);
        return;
      } else {
        for (const w of workers) killQuietly(w);
        if (kill.target === 'both') killQuietly(child.pid);
      }
      killed = kill.target;
    }
    if (kill?.from === 'spawn') timer = setTimeout(strike, kill.afterMs);
    child.on('close', (code, signal) => {
      exited = true;
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, killed });
    });
  });
}

/** The task's latest checkpoint in the store at `location`, or null (read by a store of its own, closed after). */
async function latestOf(location: string, taskId: string): Promise<Checkpoint | null> {
  const store = openLocation(location);
  try {
    return (await store.getTask(taskId))?.checkpoint ?? null;
  } finally {
    await store.close();
  }
}

/** Wait until the process holding the task's lease (an orphaned worker of a killed runner) is gone. */
async function waitForHolder(location: string, taskId: string): Promise<boolean> {
  const store = openLocation(location);
  const lease = await store
    .readLease(taskId)
    .then((r) => r.entry)
    .catch(() => null)
    .finally(() => store.close());
  if (!lease || lease.released) return false;
  const until = Date.now() + 40_000;
  while (pidAlive(lease.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return true;
}

/** Where the runs keep their tasks: what the CLI is given, and what the runners' environment adds. */
interface CrashStore {
  name: string;
  /** Set up in `base`: the location (a folder or a URL) and the environment of the CLI processes. */
  prepare(base: string): Promise<{ location: string; env: NodeJS.ProcessEnv }>;
}

const DIRECTORY: CrashStore = {
  name: 'crashes (SIGKILL runner/worker)',
  prepare: async (base) => {
    const root = path.join(base, 'root');
    await fs.mkdir(root);
    return { location: root, env: {} };
  },
};

const POSTGRES: CrashStore = {
  name: 'crashes on PostgreSQL (SIGKILL runner/worker)',
  prepare: async (base) => {
    // A database names no folder: the artifacts go to one of the run's own.
    const artifacts = path.join(base, 'artifacts');
    await fs.mkdir(artifacts);
    return { location: await createDatabase('torture'), env: { WAYSTATION_ARTIFACT_ROOT: artifacts } };
  },
};

/** SIGKILLs of runners and workers over `runs` runs, spread over both agents, three modes and three targets. */
export function crashKill(opts: ScenarioOptions): Promise<ScenarioReport> {
  return crashKillIn(opts, DIRECTORY);
}

/** The same kills, the tasks kept in a database of the throwaway PostgreSQL cluster. */
export function crashKillPostgres(opts: ScenarioOptions): Promise<ScenarioReport> {
  return crashKillIn(opts, POSTGRES);
}

async function crashKillIn(opts: ScenarioOptions, store: CrashStore): Promise<ScenarioReport> {
  const tally = new Tally(store.name, DISTURBED_RUN_CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const parallel = opts.parallel ?? os.cpus().length + 1;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-crash-'));
  const prepared = await store.prepare(base);
  const root = prepared.location;
  const input = await markdownInput(base);
  let service: FakePublishService | null = null;
  const bundle = await bundleCli();
  try {
    service = await startFakePublishService();
    const env = agentEnv(10, { SKIP_FAILURE: '1', WAYSTATION_AUTO_BACKOFF_MS: '20', ...prepared.env });
    const agentArgs = (agent: Agent) => (agent === 'md-summarizer' ? ['--input', input, '--publish-url', service!.url] : []);

    // Uncrashed reference runs: what every crashed run must end with, and how long a run takes.
    const reference = new Map<Agent, { result: string; startMs: number; driveMs: number }>();
    for (const agent of AGENTS) {
      const started = Date.now();
      let firstLine = 0;
      const r = await runCommand(bundle.cli, ['run', root, agent, '--task', `reference-${agent}`, ...agentArgs(agent)], env, {
        afterMs: 0,
        target: 'runner',
        from: 'never',
        onFirstLine: () => (firstLine = Date.now()),
      });
      if (r.code !== RunExit.done) throw new Error(`the uncrashed ${agent} run ended with ${r.code}: ${r.stderr || r.stdout}`);
      reference.set(agent, {
        result: await finalResults(root, `reference-${agent}`),
        startMs: firstLine - started,
        driveMs: Date.now() - firstLine,
      });
      tally.figures[`uncrashed ${agent}: start-up, drive (ms)`] = `${firstLine - started}, ${Date.now() - firstLine}`;
    }
    // One kill in eight lands in start-up (before or while version 1 is written), the rest in the drive.
    const killAt = (agent: Agent, fraction: number, target: Target, startUp: boolean): Kill => {
      const ref = reference.get(agent)!;
      return startUp
        ? { afterMs: Math.floor(fraction * ref.startMs * 1.5), target, from: 'spawn' }
        : { afterMs: Math.floor(fraction * ref.driveMs), target, from: 'first-line' };
    };

    // Choices are drawn up front, so the sequence depends on the seed alone, not on which run finishes first.
    const plans = Array.from({ length: opts.runs }, (_, i) => ({
      agent: AGENTS[i % 2],
      mode: MODES[Math.floor(i / 2) % 3],
      target: TARGETS[pick(random, 3)],
      fraction: random(),
      startUp: random() < 0.125,
      again: Array.from({ length: MAX_COMMANDS }, () => ({
        kill: random() < 0.25,
        target: TARGETS[pick(random, 3)],
        fraction: random(),
        startUp: random() < 0.125,
      })),
    }));

    await forEachLimit(opts.runs, parallel, async (i) => {
      const plan = plans[i];
      // The results are compared with the task id replaced by <task>: an id a temp folder's name could
      // contain ("crash-5" in ws-torture-crash-5ZpsSJ) would be replaced there too. mkdtemp's suffix has no dashes.
      const taskId = `crash-run-${i}`;
      const where = `run ${i} (${plan.agent}, ${plan.mode}, seed ${opts.seed})`;
      try {
        let cmd = await runCommand(
          bundle.cli,
          ['run', root, plan.agent, '--task', taskId, '--mode', plan.mode, ...agentArgs(plan.agent)],
          env,
          killAt(plan.agent, plan.fraction, plan.target, plan.startUp),
        );
        tally.faults++;
        tally.bump(`kills of the ${plan.target}`);
        for (let n = 0; ; n++) {
          if (cmd.killed) {
            const status = (await latestOf(root, taskId))?.status;
            tally.bump(
              status === undefined
                ? 'kills before version 1 existed'
                : status === 'done'
                  ? 'kills after the task was done'
                  : 'kills that left the task unfinished',
            );
            await checkNotCorrupt(tally, root, taskId, `${where}, after a kill`);
          }
          const cp = await latestOf(root, taskId);
          if (cp?.status === 'done') break;
          if (n >= MAX_COMMANDS) {
            tally.violation(
              'task never finished',
              `${where}: still ${cp?.status ?? 'not created'} after ${n} commands; last: ${cmd.stderr || cmd.stdout}`,
            );
            return;
          }
          if (cmd.code === RunExit.busy) {
            if (!/another runner/.test(cmd.stderr + cmd.stdout))
              tally.violation('unclear refusal', `${where}: exit 6 without saying who holds the task: ${cmd.stderr}`);
            tally.bump('commands refused while an orphaned worker held the lease');
            await waitForHolder(root, taskId);
          }
          const args = !cp
            ? ['run', root, plan.agent, '--task', taskId, '--mode', plan.mode, ...agentArgs(plan.agent)]
            : cp.status === 'waiting_approval'
              ? ['approve', root, taskId, '--by', 'torture']
              : ['resume', root, taskId];
          const again = plan.again[n];
          cmd = await runCommand(
            bundle.cli,
            args,
            env,
            again.kill ? killAt(plan.agent, again.fraction, again.target, again.startUp) : null,
          );
          tally.bump(`${args[0]} commands`);
          if (cmd.killed) {
            tally.faults++;
            tally.bump(`kills of the ${cmd.killed}`);
          }
        }
        // A killed runner's worker may still be appending its last events after saving `done`.
        await waitForHolder(root, taskId);
        tally.runs++;

        await checkFinishedTask(tally, root, taskId, where, {
          reference: reference.get(plan.agent)!.result,
          effect: plan.agent === 'md-summarizer' ? { service: service!, key: `${taskId}:publish-index` } : null,
        });
      } catch (err) {
        tally.violation('task never finished', `${where}: the harness failed: ${messageOf(err)}`);
      }
      if ((i + 1) % 50 === 0) opts.log(`crashes: ${i + 1}/${opts.runs} runs, ${tally.faults} kills, ${tally.total} violations`);
    });
  } finally {
    await service?.close();
    await bundle.dispose();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}
