/**
 * Python agents asked to stop: while a Python example (python/examples/)
 * drives its task, a person's stop request arrives at a random moment, by
 * `waystation stop DIR TASK` (which waits for the run to stop) or by the
 * store's requestStop (as the app's Stop button asks it), and now and then a
 * SIGKILL follows it. Then the agent is run again (approving in confirm mode),
 * stopped again now and then, until the task is done.
 *
 * Counted, besides the checks of every disturbed run (finished-task-checks.ts):
 * a run that ended otherwise than by stopping at a boundary (exit 8, the stop
 * saved in `recovery.stopped`) or by finishing; a run that started more than
 * the one step that may have passed its boundary check just before the store's
 * request was written; a `waystation stop` that had to end the agent's process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import type { TaskEvent } from '../../../electron/store/store-types.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { bundleCli, REPO } from '../lib/cli-bundle.js';
import { finalResults } from '../lib/task-audit.js';
import { markdownInput } from '../lib/markdown-input.js';
import { checkNotCorrupt, DISTURBED_RUN_CHECKS } from '../lib/finished-task-checks.js';
import { AGENTS, checkRefusal, checkRunsEnded, exampleArgs, MAX_COMMANDS, MODES, type Agent } from '../lib/python-examples.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { agentEnv, forEachLimit, messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

const HOW = ['cli', 'store'] as const;
type How = (typeof HOW)[number];

const CHECKS = [...DISTURBED_RUN_CHECKS, 'stop not honoured at a boundary', 'ran past the stop request', 'stop not recorded'] as const;
/** The longest a SIGKILL follows the stop request by. */
const KILL_WITHIN_MS = 400;

/** One disturbance of one run of the agent: a stop at a fraction of the drive, and maybe a kill after it. */
interface Disturbance {
  stopAt: number;
  how: How;
  killAfterMs: number | null;
}

/** How long an undisturbed run of an agent takes to start and to drive its task. */
interface Timing {
  startMs: number;
  driveMs: number;
}

interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  killed: boolean;
  /** From the spawn to the first output line (start-up), and from there to the exit (the drive). */
  startMs: number;
  driveMs: number;
  /**
   * By when the store's requestStop had written its request (visible to the agent from then on, at the latest); null: not
   * asked that way, or nobody held the task. (The request's own `at` is taken before its file is written and fsynced.)
   */
  requestAt: string | null;
  /** `waystation stop`'s outcome (--json), exit code and error text, when it was used. */
  cli: { code: number | null; outcome: CliOutcome | null; stderr: string } | null;
}

/** What `waystation stop --json` prints: the outcome, or the refusal (`error`, `message`). */
interface CliOutcome {
  how?: string;
  error?: string;
  message?: string;
}

function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(command, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Wait for a process to close, collecting its output. */
function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * The step-start events after `at`, up to the run's stopped event when it stopped (the last such event), read once
 * the run has ended.
 */
function stepsStartedAfter(events: TaskEvent[], at: string, stopped: boolean): string[] {
  let end = events.length;
  for (let i = events.length - 1; stopped && i >= 0; i--) {
    if (events[i].type === 'runner' && (events[i].data as { status?: string } | undefined)?.status === 'stopped') {
      end = i;
      break;
    }
  }
  return events
    .slice(0, end)
    .filter((e) => e.type === 'step-start' && e.at > at)
    .map((e) => `${e.step_id} at ${e.at}`);
}

/** Stop requests (and kills after them) sent to Python agents over `runs` runs, spread over both examples and the three modes. */
export async function pythonStop(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('python agents (stop requests)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const parallel = opts.parallel ?? os.cpus().length + 1;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-pystop-'));
  const root = path.join(base, 'root');
  await fs.mkdir(root);
  const input = await markdownInput(base);
  const store = openStore(root);
  let service: FakePublishService | null = null;
  const bundle = await bundleCli();
  try {
    service = await startFakePublishService();
    // Model calls slow enough that a stop can land between steps after `waystation stop` has started.
    const env = agentEnv(150, { SKIP_FAILURE: '1', WAYSTATION_AUTO_BACKOFF_MS: '10' });
    const inputs = { input, publishUrl: service.url };

    // How long `waystation stop` takes to get going (measured below): its request is sent that much earlier, to land when drawn.
    let cliStartMs = 0;
    /** Run the agent once; with `d`, ask it to stop that far into its drive, by `d.how`, and SIGKILL it `d.killAfterMs` later. */
    const runAgent = async (args: string[], timing: Timing, taskId: string, d: Disturbance | null): Promise<AgentRun> => {
      const { driveMs, startMs } = timing;
      const run: AgentRun = { code: null, stdout: '', stderr: '', killed: false, driveMs: 0, startMs: 0, requestAt: null, cli: null };
      let exited = false;
      let child: ChildProcess | null = null;
      const pending: Promise<void>[] = [];
      const timers: NodeJS.Timeout[] = [];
      const kill = () => {
        if (!exited && child) run.killed = child.kill('SIGKILL');
      };
      const stop = async () => {
        if (exited || !d) return;
        if (d.how === 'store') {
          const asked = await store.requestStop(taskId, { by: 'torture', reason: 'a stop at a random moment' }).catch(() => null);
          run.requestAt = asked ? new Date().toISOString() : null;
          if (!asked) tally.bump('stops that came when nothing ran');
          if (d.killAfterMs !== null) timers.push(setTimeout(kill, d.killAfterMs));
          return;
        }
        const cli = runProcess(process.execPath, [bundle.cli, 'stop', root, taskId, '--by', 'torture', '--json'], env);
        if (d.killAfterMs !== null) timers.push(setTimeout(kill, d.killAfterMs));
        const out = await collect(cli);
        let outcome: CliOutcome | null;
        try {
          outcome = JSON.parse(out.stdout) as CliOutcome;
        } catch {
          outcome = null;
        }
        run.cli = { code: out.code, outcome, stderr: out.stderr };
      };
      // `waystation stop` is started so that its request is written stopAt into the drive, measured from the agent's
      // spawn: before the agent when the CLI takes longer to get going than the agent takes to reach that moment.
      const cliAt = d?.how === 'cli' ? Math.floor(startMs + d.stopAt * driveMs - cliStartMs) : 0;
      if (cliAt < 0) {
        pending.push(stop());
        await new Promise((resolve) => setTimeout(resolve, -cliAt));
      }
      const agent = runProcess('python3', args, env);
      child = agent;
      const spawnedAt = Date.now();
      if (d?.how === 'cli' && cliAt >= 0) timers.push(setTimeout(() => pending.push(stop()), cliAt));
      let firstLine = 0;
      agent.stdout!.on('data', (chunk: Buffer) => {
        if (run.stdout === '') {
          firstLine = Date.now();
          if (d?.how === 'store') timers.push(setTimeout(() => pending.push(stop()), Math.floor(d.stopAt * driveMs)));
        }
        run.stdout += chunk.toString();
      });
      agent.stderr!.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
      run.code = await new Promise<number | null>((resolve) => agent.on('close', (code) => resolve(code)));
      exited = true;
      run.killed = run.killed && run.code === null;
      run.driveMs = firstLine ? Date.now() - firstLine : 0;
      run.startMs = firstLine ? firstLine - spawnedAt : 0;
      for (const t of timers) clearTimeout(t);
      await Promise.all(pending);
      return run;
    };

    // Undisturbed reference runs: what every disturbed run must end with, and how long a drive takes.
    const reference = new Map<Agent, { result: string; timing: Timing }>();
    for (const agent of AGENTS) {
      const r = await runAgent(
        exampleArgs(agent, inputs, { root, taskId: `reference-${agent}` }),
        { startMs: 0, driveMs: 0 },
        `reference-${agent}`,
        null,
      );
      if (r.code !== 0) throw new Error(`the undisturbed ${agent} run failed (exit ${r.code}): ${r.stderr || r.stdout}`);
      reference.set(agent, { result: await finalResults(root, `reference-${agent}`), timing: { startMs: r.startMs, driveMs: r.driveMs } });
      tally.figures[`undisturbed ${agent}: start-up, drive (ms)`] = `${r.startMs}, ${r.driveMs}`;
    }
    {
      // A stop of a task that is done: the CLI starts, reads the task and refuses; about the time it takes to ask.
      const started = Date.now();
      await collect(runProcess(process.execPath, [bundle.cli, 'stop', root, `reference-${AGENTS[0]}`, '--json'], env));
      cliStartMs = Date.now() - started;
      tally.figures['waystation stop: start-up (ms)'] = cliStartMs;
    }

    // Choices are drawn up front, so the sequence depends on the seed alone. The first run of a task is always disturbed.
    const disturbance = (): Disturbance => ({
      // Mostly before the last step's boundary, past which a stop can only find the run finishing.
      stopAt: random() * 0.85,
      how: HOW[pick(random, HOW.length)],
      killAfterMs: random() < 0.3 ? Math.floor(random() * KILL_WITHIN_MS) : null,
    });
    const plans = Array.from({ length: opts.runs }, (_, i) => ({
      i,
      agent: AGENTS[pick(random, AGENTS.length)],
      mode: MODES[pick(random, MODES.length)],
      runs: Array.from({ length: MAX_COMMANDS }, (_, c) => (c === 0 || random() < 0.3 ? disturbance() : null)),
    }));

    await forEachLimit(plans.length, parallel, async (n) => {
      const plan = plans[n];
      const taskId = `pystop-${plan.agent.replace('_', '-')}-${plan.i}`;
      const where = `run ${plan.i} (${plan.agent}, ${plan.mode}, seed ${opts.seed})`;
      const { timing } = reference.get(plan.agent)!;
      try {
        tally.runs++;
        let approve = false;
        let finished = false;
        for (let c = 0; c < MAX_COMMANDS && !finished; c++) {
          const d = plan.runs[c];
          const args = exampleArgs(plan.agent, inputs, { root, taskId, mode: plan.mode, approve });
          const r = await runAgent(args, timing, taskId, d);
          approve = false;
          const at = `${where}, run ${c + 1}`;
          if (d) {
            tally.faults++;
            tally.bump(`stops by ${d.how === 'cli' ? 'waystation stop' : "the store's requestStop"}`);
          }
          if (r.cli) {
            if (r.cli.outcome?.how === 'ended' && !r.killed)
              tally.violation('stop not honoured at a boundary', `${at}: waystation stop had to end the agent's process`);
            if (r.cli.code !== 0 && r.cli.code !== RunExit.stopped) {
              // Refused: the run ended (or had not begun) before the request; the refusal must say so.
              const said = r.cli.outcome?.message ?? r.cli.stderr;
              if (said.trim().length < 10)
                tally.violation('unclear refusal', `${at}: waystation stop exit ${r.cli.code} with ${JSON.stringify(said)}`);
              tally.bump('stops that came when nothing ran');
            }
          }
          if (r.killed) {
            tally.faults++;
            tally.bump('kills after a stop request');
            await checkNotCorrupt(tally, root, taskId, `${at}, after a kill`);
            continue;
          }
          const cp = (await store.getTask(taskId))?.checkpoint;
          if (r.code === RunExit.stopped) {
            tally.bump(`runs stopped at a boundary (exit 8), asked by ${d?.how === 'cli' ? 'waystation stop' : 'the store'}`);
            if (!cp?.recovery.stopped) tally.violation('stop not recorded', `${at}: exit 8, but the task records no stop`);
          }
          if (r.requestAt && (r.code === RunExit.stopped || r.code === 0)) {
            // One step may have passed its boundary check just before the request was written; a second may not.
            // (Only for the store's requests: when `waystation stop` wrote its file is not known from outside it.)
            const started = stepsStartedAfter(await store.readEvents(taskId), r.requestAt, r.code === RunExit.stopped);
            if (started.length > 1)
              tally.violation('ran past the stop request', `${at}: asked at ${r.requestAt}, then started ${started.join(', ')}`);
          }
          if (r.code === 0) {
            finished = true;
            tally.bump(d ? 'runs that finished before a boundary came' : 'runs undisturbed to done');
          } else if (r.code === RunExit.waiting_approval) approve = true;
          else if (r.code === RunExit.usage || r.code === RunExit.busy) checkRefusal(tally, at, r.code, r.stderr);
          else if (r.code !== RunExit.stopped) {
            tally.violation('stop not honoured at a boundary', `${at}: exit ${r.code}: ${r.stderr.slice(-300) || r.stdout.slice(-300)}`);
          }
        }
        await checkRunsEnded(
          tally,
          store,
          { root, taskId, where, finished },
          {
            reference: reference.get(plan.agent)!.result,
            effect: plan.agent === 'md_summarizer' ? { service: service!, key: `${taskId}:publish-index` } : null,
          },
        );
      } catch (err) {
        tally.violation('corrupt or unreadable checkpoint', `${where}: ${messageOf(err)}`);
      }
      if ((n + 1) % 50 === 0) opts.log(`python stops: ${n + 1}/${opts.runs} runs, ${tally.faults} faults, ${tally.total} violations`);
    });
  } finally {
    await service?.close();
    await store.close();
    await bundle.dispose();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}
