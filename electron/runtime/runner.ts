/**
 * The runner: starts each task in its own worker process and supervises it.
 *
 * A worker that crashes takes only its task down; the runner reports it and,
 * for tasks in auto mode, resumes it with exponential backoff up to the
 * task's maximum number of attempts. The CLI uses it per command; the desktop
 * host keeps one and listens to its events.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { AgentRef, Checkpoint, RecoveryMode, TaskStatus } from '../../shared/checkpoint/schema.js';
import { mayNeedRecovery } from '../../shared/checkpoint/task-summary.js';
import { isUntouchedFork } from '../../shared/checkpoint/untouched-fork.js';
import type { CheckpointStore, TaskEvent } from '../store/store-types.js';
import { openLocation, resolveLocation } from '../store/open-location.js';
import { redactSecrets } from '../llm/provider-from-env.js';
import { builtInAgents } from './built-in-agents.js';
import { leaseTtlMs } from '../store/lease-record.js';
import { forkTask, type ForkRequest } from './fork-task.js';
import { rewindTask, type RewindRequest } from './rewind-task.js';
import { STOP_OPERATION, stopTask, type StopRequestOptions } from './stop-task.js';
import { agentLoadTimeoutMs, isModuleSpecifier } from './agent-loader.js';
import { describeAgentModule, killMarginMs, type DescribeOptions } from './agent-describer.js';
import { AGENTS_CONFIG_FILE, agentNotFound, describeConfigEntry, noAgentMessage, readAgentsConfig } from './agent-catalog.js';
import { importLegacyForResume } from './legacy-resume.js';
import {
  DEFAULT_MAX_AUTO_ATTEMPTS,
  editStepResult,
  type OperationEnv,
  generateTaskId,
  isUnfinishedCreate,
  newTaskIdProblem,
  OperationError,
  rejectTask,
  type ResumeRequest,
} from './task-operations.js';
import { defaultWorkerLaunch, RUN_APART } from './worker-launch.js';
import { adoptStandbyWorker } from './worker-standby.js';
import { commandAgentRef, refusalOfExit, spawnCommandAgent, type CommandAgentEntry, type CommandJob } from './command-agent.js';
import { WriteLimitError } from '../store/write-limits.js';
import { handJob, JOB_VIA_IPC_ENV, optionsTooLarge } from './worker-job-channel.js';
import { CommandFilesError, hashCommand } from './command-files.js';
import {
  exitCodeForError,
  exitCodeForOutcome,
  exitCodeForStatus,
  RunExit,
  type DescribedAgent,
  type WorkerJob,
  type WorkerMessage,
} from './worker-protocol.js';
import { commandHint } from './command-hint.js';
import { shellWord } from '../../shared/checkpoint/fill-directory.js';

/** How one runner operation ended. */
export interface RunOutcome {
  task_id: string;
  /** The task's status afterwards; null when the operation was refused before anything ran. */
  status: TaskStatus | null;
  version: number | null;
  message: string;
  next: string | null;
  exitCode: number;
  /** For refusals: not-found, busy, invalid, unknown-step, no-approval, halted, ... */
  error?: string;
  /** The worker died without answering (a crash or a kill); `signal` says which signal, if any. */
  crashed?: boolean;
  signal?: NodeJS.Signals | null;
  /** The run ended because a person stopped it. */
  stopped?: boolean;
}

export type RunnerEvent =
  | { type: 'spawned'; taskId: string; pid: number; job: WorkerJob['kind'] }
  | { type: 'line'; taskId: string; line: string; stream: 'stdout' | 'stderr' }
  | { type: 'exited'; taskId: string; outcome: RunOutcome }
  | { type: 'retrying'; taskId: string; attempt: number; delayMs: number };

export interface RunnerOptions {
  /** The store: a checkpoint directory, or a PostgreSQL URL (store/open-location.ts). */
  root: string;
  /** Environment for the workers (API keys, SKIP_FAILURE, latency); defaults to this process's. */
  env?: NodeJS.ProcessEnv;
  /** First auto-mode backoff; doubles each attempt. Default: WAYSTATION_AUTO_BACKOFF_MS, else 1000 ms. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Opens the store; `openLocation` by default. */
  openStore?: (location: string) => CheckpointStore;
  /** Who is acting, for decisions and edits. */
  actor?: string;
  /**
   * How to start a worker, when not from this build's own entry: a prebuilt
   * JavaScript bundle of worker-main (the packaged app, fast test workers).
   */
  workerLaunch?: { entry: string; execArgv?: string[] };
}

export interface StartRunRequest {
  /** A built-in agent name, or a module path (./agent.ts) resolved against `cwd`. */
  agent: string;
  options?: Record<string, unknown>;
  taskId?: string;
  mode?: RecoveryMode;
  maxAutoAttempts?: number;
  /** Where a module path is resolved and recorded as the project root. Default: process.cwd(). */
  cwd?: string;
  /** The export holding the agent in a module. Default: the default export. */
  exportName?: string;
  /**
   * What relative paths in the options are resolved against (the agent's
   * `resolveOptions` sees it as `env.baseDir`): the caller's working directory
   * on the command line, the checkpoint directory in the inspector. Default: process.cwd().
   */
  optionsBase?: string;
  /** The options came from the inspector, not a person at a terminal: paths in them must stay inside the root. */
  confined?: boolean;
  /**
   * The command that starts the task again as the caller was given it, without `--task` (the runner adds the id it
   * starts): said when the database fails before the task is stored (worker-main.ts).
   */
  startAgain?: string;
}

/** What a checkpoint records of a described module agent. */
function refOf(d: DescribedAgent): Partial<AgentRef> & { name: string } {
  return { name: d.name, module: d.module, export: d.export, project_root: d.project_root, module_sha256: d.module_sha256 };
}

/** How long the outcome of a run ended by a stop waits for the stopping side to record the stop. */
const STOP_RECORD_WAIT_MS = 2_000;

function describeSignal(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code} without reporting`;
}

/** The supervisor of worker processes for one checkpoint directory. */
export class Runner extends EventEmitter {
  /** The folder artifacts, agent configuration and project roots resolve against (the store's artifactRoot). */
  readonly root: string;
  /** What was opened, as workers reopen it: a directory's absolute path or the URL. */
  readonly location: string;
  private readonly store: CheckpointStore;
  private readonly children = new Set<ChildProcess>();
  /** Set by killAll: no new worker is spawned and pending auto-mode retries are dropped. */
  private shuttingDown = false;
  private readonly retryTimers = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();

  constructor(private readonly opts: RunnerOptions) {
    super();
    this.location = resolveLocation(opts.root);
    this.store = (opts.openStore ?? openLocation)(this.location);
    this.root = this.store.artifactRoot;
  }

  override emit(event: 'event', e: RunnerEvent): boolean {
    return super.emit(event, e);
  }

  /** Listen to spawns, worker output, exits and retries. */
  onEvent(listener: (e: RunnerEvent) => void): () => void {
    this.on('event', listener);
    return () => this.off('event', listener);
  }

  /** Spawn one worker for a job and wait for its answer. */
  spawnWorker(job: WorkerJob): { child: ChildProcess; done: Promise<RunOutcome> } {
    const { entry, execArgv = [] } = this.opts.workerLaunch ?? defaultWorkerLaunch();
    const env = this.opts.env ?? process.env;
    const projectRoot = job.kind === 'start' ? job.agentRef.project_root : undefined;
    // A module agent starts in its project, as it would when its author runs it.
    const cwd = projectRoot ? path.resolve(this.root, projectRoot) : process.cwd();
    // A database names no folder, so the worker resolves artifacts against the runner's.
    const artifactRoot = { WAYSTATION_ARTIFACT_ROOT: this.root };
    // The worker the CLI started while it loaded, when it is this very process (worker-standby.ts); else a new one.
    const child =
      adoptStandbyWorker({ entry, execArgv, cwd, env }) ??
      fork(entry, [], {
        execArgv,
        // The job goes over IPC (worker-job-channel.ts).
        env: { ...env, [JOB_VIA_IPC_ENV]: '1', ...artifactRoot },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        cwd,
        detached: RUN_APART,
      });
    handJob(child, job, artifactRoot);
    this.children.add(child);
    const taskId = job.taskId;
    this.emit('event', { type: 'spawned', taskId, pid: child.pid ?? -1, job: job.kind });
    for (const [stream, name] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ] as const) {
      // Agent code prints what it likes; a key it echoes stops here, before any log or UI sees it.
      if (stream)
        createInterface({ input: stream }).on('line', (line) =>
          this.emit('event', { type: 'line', taskId, line: redactSecrets(line, env), stream: name }),
        );
    }
    let message: WorkerMessage | null = null;
    // An agent module stuck loading (a busy loop, an await that never settles) is stopped before it ever touches the task.
    const loadMs = agentLoadTimeoutMs(env);
    const loadWatch = setTimeout(
      () => {
        message = {
          type: 'error',
          code: 'agent-unavailable',
          message: `the agent for ${job.taskId} did not finish loading within ${loadMs} ms (it hangs at start-up); the worker was stopped and the task was left untouched`,
        };
        child.kill('SIGKILL');
      },
      loadMs + killMarginMs(loadMs),
    );
    child.on('message', (m) => {
      if ((m as WorkerMessage).type === 'loaded') clearTimeout(loadWatch);
      else message = m as WorkerMessage;
    });
    const done = new Promise<RunOutcome>((resolve) => {
      child.on('error', (err) => {
        message ??= { type: 'error', code: 'internal', message: `could not start the worker: ${err.message}` };
      });
      child.on('close', async (code, signal) => {
        clearTimeout(loadWatch);
        this.children.delete(child);
        let outcome: RunOutcome;
        const m = message as WorkerMessage | null;
        if (m?.type === 'outcome') {
          outcome = { ...m.outcome, exitCode: exitCodeForOutcome(m.outcome) };
        } else if (m?.type === 'error') {
          outcome = {
            task_id: taskId,
            status: null,
            version: null,
            message: m.message,
            next: null,
            exitCode: exitCodeForError(m.code, m.unstored),
            error: m.code,
          };
        } else {
          const cp = await this.latest(taskId);
          const stopped = cp ? await this.endedByStop(taskId, `the agent process for ${taskId} ${describeSignal(code, signal)}`) : null;
          if (!cp && job.kind === 'start') {
            outcome = endedBeforeCreating(taskId, `the agent process for ${taskId} ${describeSignal(code, signal)}`);
          } else if (stopped) {
            outcome = stopped;
          } else {
            outcome = {
              task_id: taskId,
              status: cp?.status ?? null,
              version: cp?.version ?? null,
              message: `the agent process for ${taskId} ${describeSignal(code, signal)}; the task is interrupted${cp ? ` at version ${cp.version}` : ''}`,
              next: `resume it: ${commandHint(taskId, 'resume')}`,
              exitCode: RunExit.crashed,
              crashed: true,
              signal,
            };
            if (cp) await this.noteCrash(taskId, outcome.message);
          }
        }
        this.emit('event', { type: 'exited', taskId, outcome });
        resolve(outcome);
      });
    });
    return { child, done };
  }

  /**
   * Run a job in a process of its own: a command agent's program when the
   * job's agent is one (the agent a start names, or the agent a resumed task
   * records, registered as a command in waystation.config.json), else a worker.
   */
  async spawnJob(job: CommandJob): Promise<RunOutcome> {
    const command = await this.commandFor(job);
    if (typeof command === 'string') return refusedOutcome(job.taskId, 'agent-unavailable', command);
    return command ? this.spawnCommand(command, job) : this.spawnWorker(job).done;
  }

  /** The command agent a job runs, null for a module or built-in agent, or why a task's command agent cannot be found. */
  private async commandFor(job: CommandJob): Promise<CommandAgentEntry | string | null> {
    let name: string;
    let recorded = false;
    if (job.kind === 'start') {
      if (!job.agentRef.command) return null;
      name = job.agentRef.name;
    } else {
      const agent = (await this.latest(job.taskId))?.agent;
      if (!agent || agent.module || builtInAgents().has(agent.name)) return null;
      name = agent.name;
      recorded = (agent as { command?: unknown }).command !== undefined;
    }
    const config = await readAgentsConfig(this.root);
    const entry = config.commands.find((c) => c.name === name);
    if (entry) return entry;
    // A task a command agent ran is not handed to a worker, which would call it another program's.
    return recorded
      ? `task ${job.taskId} was run by the command agent "${name}", which ${AGENTS_CONFIG_FILE} no longer registers${config.problem ? ` (${config.problem})` : ''}; register it again to resume the task. Nothing was written.`
      : null;
  }

  /** Start a command agent and wait for it: its lines go out as events, its exit code and checkpoint say how the task ended. */
  private async spawnCommand(entry: CommandAgentEntry, job: CommandJob): Promise<RunOutcome> {
    const env = this.opts.env ?? process.env;
    const taskId = job.taskId;
    // The command's files as they are now: a start records their hash, a resume tells a change from the recorded one.
    let sha256: string | null;
    try {
      sha256 = await hashCommand(job.root, entry.command);
    } catch (err) {
      if (err instanceof CommandFilesError) return refusedOutcome(taskId, 'agent-unavailable', err.message);
      throw err;
    }
    const child = spawnCommandAgent(entry, job, env, sha256);
    this.children.add(child);
    this.emit('event', { type: 'spawned', taskId, pid: child.pid ?? -1, job: job.kind });
    let lastOut = '';
    let lastError = '';
    for (const [stream, name] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ] as const) {
      if (stream)
        createInterface({ input: stream }).on('line', (raw) => {
          const line = redactSecrets(raw, env);
          // The agent's last status line says how it ended (python/waystation/cli.py prints a `next:` line after it).
          if (line.trim() && !line.startsWith('next: ')) {
            if (name === 'stdout') lastOut = line;
            else lastError = line;
          }
          this.emit('event', { type: 'line', taskId, line, stream: name });
        });
    }
    return new Promise<RunOutcome>((resolve) => {
      let spawnError: Error | null = null;
      child.on('error', (err) => {
        spawnError = err;
      });
      child.on('close', async (code, signal) => {
        this.children.delete(child);
        const cp = await this.latest(taskId);
        const refusal = refusalOfExit(code);
        let outcome: RunOutcome;
        // Ended by a signal after a person asked the run to stop (`stop --force`): stopped, not crashed.
        const stoppedRun =
          !spawnError && !refusal && (signal || code === null) && cp
            ? await this.endedByStop(taskId, `the agent process for ${taskId} ${describeSignal(code, signal)}`)
            : null;
        if (spawnError) {
          outcome = refusedOutcome(
            taskId,
            'agent-unavailable',
            `the command of agent ${entry.name} (${entry.command.join(' ')}) could not be started: ${(spawnError as Error).message}; the task was left untouched`,
          );
        } else if (refusal) {
          outcome = refusedOutcome(
            taskId,
            refusal,
            lastError.replace(/^error:\s*/, '') || `agent ${entry.name} refused the job (exit ${code})`,
          );
        } else if (code === RunExit.stopped && cp?.recovery.stopped) {
          // The agent honoured a stop request: it saved the stop and let the lease go (docs/WRITING-AGENTS.md).
          outcome = {
            task_id: taskId,
            status: cp.status,
            version: cp.version,
            message: lastOut || `task ${taskId} stopped by ${cp.recovery.stopped.by}`,
            next: `continue: ${commandHint(taskId, 'resume')}`,
            exitCode: RunExit.stopped,
            stopped: true,
          };
        } else if (!cp && job.kind === 'start') {
          outcome = endedBeforeCreating(
            taskId,
            `the command of agent ${entry.name} (${entry.command.join(' ')}) ${describeSignal(code, signal)}${lastError ? ` (${lastError})` : ''}`,
          );
        } else if (stoppedRun) {
          outcome = stoppedRun;
        } else if (signal || code === null || code === RunExit.crashed || code > RunExit.crashed || !cp) {
          outcome = {
            task_id: taskId,
            status: cp?.status ?? null,
            version: cp?.version ?? null,
            message: `the agent process for ${taskId} ${describeSignal(code, signal)}; the task is interrupted${cp ? ` at version ${cp.version}` : ''}${lastError ? ` (${lastError})` : ''}`,
            next: `resume it: ${commandHint(taskId, 'resume')}`,
            exitCode: RunExit.crashed,
            crashed: true,
            signal,
          };
          if (cp) await this.noteCrash(taskId, outcome.message);
        } else {
          outcome = {
            task_id: taskId,
            status: cp.status,
            version: cp.version,
            message: lastOut || lastError.replace(/^error:\s*/, '') || `task ${taskId} is ${cp.status} at version ${cp.version}`,
            next: cp.status === 'done' ? null : cp.resume_hint || null,
            exitCode: exitCodeForStatus(cp.status),
          };
        }
        this.emit('event', { type: 'exited', taskId, outcome });
        resolve(outcome);
      });
    });
  }

  /** The first auto-mode backoff: the option, else `WAYSTATION_AUTO_BACKOFF_MS`, else one second. */
  private backoffMs(): number {
    if (this.opts.backoffMs !== undefined) return this.opts.backoffMs;
    const n = Number((this.opts.env ?? process.env).WAYSTATION_AUTO_BACKOFF_MS);
    return Number.isFinite(n) && n >= 0 && (this.opts.env ?? process.env).WAYSTATION_AUTO_BACKOFF_MS !== '' ? n : 1000;
  }

  /**
   * Whether a person asked the task's current run to stop: a stop request on its holding of the lease (a run whose
   * process was ended by a second stop leaves only that), or the stop being recorded under the lease after such a run.
   */
  private async stopWasAsked(taskId: string): Promise<boolean> {
    if ((await this.store.readStopRequest(taskId).catch(() => null)) !== null) return true;
    // stop-task.ts records the stop of an ended run under a lease of its own (owner `stop:…`): not a run to retry.
    const lease = await this.store.readLease(taskId).catch(() => null);
    return lease?.entry?.owner?.startsWith(`${STOP_OPERATION}:`) === true;
  }

  /**
   * The outcome of a run whose process was ended (`stop --force`, a second stop) after a person asked it to stop:
   * stopped, not crashed, once the stop is recorded (the stopping side records it as soon as the process is gone;
   * waited for a little); null when no stop was asked.
   */
  private async endedByStop(taskId: string, ended: string): Promise<RunOutcome | null> {
    if (!(await this.stopWasAsked(taskId))) return null;
    let cp = await this.latest(taskId);
    for (let waited = 0; cp && !cp.recovery.stopped && waited < STOP_RECORD_WAIT_MS; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      cp = await this.latest(taskId);
    }
    if (!cp) return null;
    const by = cp.recovery.stopped ? `; task ${taskId} stopped by ${cp.recovery.stopped.by}` : '';
    return {
      task_id: taskId,
      status: cp.status,
      version: cp.version,
      message: `${ended} after a person asked it to stop${by}`,
      next: `continue: ${commandHint(taskId, 'resume')}`,
      exitCode: RunExit.stopped,
      stopped: true,
    };
  }

  /** Wait, a lease time-to-live at most, while a live holder other than this runner's workers drives the task. */
  private async whileHeldElsewhere(taskId: string): Promise<void> {
    const until = Date.now() + leaseTtlMs(this.opts.env ?? process.env);
    while (Date.now() < until && !this.shuttingDown) {
      const lease = await this.store.readLease(taskId).catch(() => null);
      if (!lease?.info.held) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Whether the task has a readable version: a start has got as far as creating it. */
  async hasVersion(taskId: string): Promise<boolean> {
    return (await this.latest(taskId)) !== null;
  }

  /**
   * Record in the task's event log why its process ended without a word: a
   * worker that died (right after creating version 1, or mid-step) leaves the
   * task `running` with no holder, shown interrupted, and this line says what
   * happened to it (`waystation tail`, the Events tab). The versions are not
   * touched: the lease holder that died was the only writer entitled to.
   */
  private async noteCrash(taskId: string, message: string): Promise<void> {
    await this.store.appendEvent(taskId, { type: 'runner', data: { status: 'crashed', message } }).catch(() => undefined);
  }

  private async latest(taskId: string): Promise<Checkpoint | null> {
    try {
      return (await this.store.getTask(taskId))?.checkpoint ?? null;
    } catch {
      return null;
    }
  }

  /**
   * After a worker ends: in auto mode, resume failed or crashed tasks with
   * backoff until they finish, wait for a human, or run out of attempts; in
   * confirm mode, turn a crash into a resume plan awaiting approval,
   * retrying a preparation that crashes with the same backoff, up to the
   * task's maximum number of attempts in a row.
   */
  private async supervise(taskId: string, first: RunOutcome): Promise<RunOutcome> {
    let outcome = first;
    // Crashes in a row while preparing a confirm-mode resume plan: such a
    // worker may die before it writes anything, so the count lives here.
    let confirmCrashes = 0;
    for (let n = 0; ; n++) {
      // A run that finished the task leaves nothing to recover: the task is not read again to find that out.
      if (outcome.error || this.shuttingDown || (outcome.status === 'done' && !outcome.crashed)) return outcome;
      // Another process may be saving the task this moment (a stop that ended this run's process records
      // itself under the task's lease): the decision is made on what it leaves.
      await this.whileHeldElsewhere(taskId);
      const cp = await this.latest(taskId);
      if (!cp) return outcome;
      // A run a person stopped is never retried, also when a second stop ended its process.
      if (outcome.stopped || cp.recovery.stopped || (await this.stopWasAsked(taskId))) return outcome;
      const interrupted = outcome.crashed === true;
      const mode = cp.recovery.mode;
      if (mode === 'confirm' && interrupted) {
        const max = cp.recovery.max_auto_attempts ?? DEFAULT_MAX_AUTO_ATTEMPTS;
        // The first crash is the task's own; the ones after it are the plan preparation's.
        if (confirmCrashes >= max) {
          return {
            ...outcome,
            message: `${outcome.message}\npreparing a resume plan crashed ${confirmCrashes} time(s) in a row; the runner stopped retrying and left the task interrupted at version ${cp.version}`,
            next: `fix the agent, then resume by hand: ${commandHint(taskId, 'resume')}`,
          };
        }
        const delayMs = Math.min(this.opts.maxBackoffMs ?? 30_000, confirmCrashes === 0 ? 0 : this.backoffMs() * 2 ** (confirmCrashes - 1));
        if (delayMs > 0) {
          this.emit('event', { type: 'retrying', taskId, attempt: confirmCrashes + 1, delayMs });
          await this.backoff(delayMs);
          if (this.shuttingDown) return { ...outcome, next: `resume by hand or restart the host: ${commandHint(taskId, 'resume')}` };
        }
        outcome = await this.spawnJob({ kind: 'resume', root: this.location, taskId, trigger: 'auto', actor: this.opts.actor });
        if (outcome.crashed === true) confirmCrashes++;
        continue;
      }
      if (mode !== 'auto' || !(interrupted || cp.status === 'failed')) return outcome;
      const max = cp.recovery.max_auto_attempts ?? DEFAULT_MAX_AUTO_ATTEMPTS;
      if (cp.recovery.auto_attempts >= max) {
        return {
          ...outcome,
          message: `${outcome.message}\nautomatic recovery gave up after ${cp.recovery.auto_attempts} attempt(s)`,
          next: `resume by hand: ${commandHint(taskId, 'resume')}`,
        };
      }
      const delayMs = Math.min(this.opts.maxBackoffMs ?? 30_000, this.backoffMs() * 2 ** cp.recovery.auto_attempts);
      this.emit('event', { type: 'retrying', taskId, attempt: cp.recovery.auto_attempts + 1, delayMs });
      await this.backoff(delayMs);
      // A host shutting down leaves the task interrupted: it resumes at the next start-up.
      if (this.shuttingDown) return { ...outcome, next: `resume by hand or restart the host: ${commandHint(taskId, 'resume')}` };
      outcome = await this.spawnJob({ kind: 'resume', root: this.location, taskId, trigger: 'auto', actor: this.opts.actor });
      if (n > max + 2) return outcome;
    }
  }

  /**
   * Start a task (or, when `taskId` names an existing task of the same agent, resume it, as re-running the article's demo does).
   */
  async startRun(req: StartRunRequest): Promise<RunOutcome> {
    if (req.taskId !== undefined && !(await this.store.getTask(req.taskId).catch(() => null))) {
      const why = newTaskIdProblem(req.taskId);
      if (why) return refusedOutcome(req.taskId, 'invalid', why);
    }
    const heavy = optionsTooLarge(req.options);
    if (heavy) return refusedOutcome(req.taskId ?? '', 'too-large', heavy);
    let agentRef;
    try {
      agentRef = await this.resolveAgent(req);
    } catch (err) {
      return refusedOutcome(req.taskId ?? '', err instanceof OperationError ? err.code : 'agent-unavailable', (err as Error).message);
    }
    const taskId = req.taskId ?? generateTaskId(agentRef.name);
    try {
      // A database with no schema yet gets it here, when its store allows (as `waystation run` does).
      await this.store.prepareForWrites();
    } catch (err) {
      return refusedOutcome(taskId, (err as { code?: string }).code ?? 'io', (err as Error).message, true);
    }
    const existing = req.taskId ? await this.store.getTask(taskId) : null;
    if (existing && !isUnfinishedCreate(existing)) {
      const name = existing.checkpoint?.agent?.name;
      if (name && name !== agentRef.name)
        return refusedOutcome(
          taskId,
          'agent-mismatch',
          `task ${taskId} already exists and belongs to agent ${name}, not ${agentRef.name}; nothing was written`,
        );
      return this.resume(taskId);
    }
    const first = await this.spawnJob({
      kind: 'start',
      root: this.location,
      taskId,
      agentRef,
      options: req.options ?? {},
      mode: req.mode,
      maxAutoAttempts: req.maxAutoAttempts,
      actor: this.opts.actor,
      optionsBase: req.optionsBase ?? process.cwd(),
      ...(req.confined ? { confined: true } : {}),
      ...(req.startAgain ? { startAgain: `${req.startAgain} --task ${shellWord(taskId)}` } : {}),
    });
    return this.supervise(taskId, first);
  }

  private describeOptions(): DescribeOptions {
    return { env: this.opts.env, workerLaunch: this.opts.workerLaunch };
  }

  /**
   * What to record for the agent a start names: a built-in by name, a module
   * path (loaded in a worker to learn its name and hash), or the name of an
   * agent registered in the directory's waystation.config.json.
   */
  private async resolveAgent(req: StartRunRequest): Promise<Partial<AgentRef> & { name: string }> {
    if (isModuleSpecifier(req.agent)) {
      const d = await describeAgentModule(
        { root: this.root, spec: req.agent, cwd: req.cwd ?? process.cwd(), exportName: req.exportName },
        this.describeOptions(),
      );
      return refOf(d);
    }
    if (builtInAgents().has(req.agent)) return { name: req.agent };
    const config = await readAgentsConfig(this.root);
    // One name starts one agent: two entries under it are not told apart by their order in the file.
    const registered =
      config.commands.filter((c) => c.name === req.agent).length + config.entries.filter((e) => e.name === req.agent).length;
    if (registered > 1) {
      throw new OperationError(
        'invalid',
        `"${req.agent}" is registered more than once in ${AGENTS_CONFIG_FILE}; give each agent a name of its own. Nothing was written.`,
      );
    }
    const command = config.commands.find((c) => c.name === req.agent);
    if (command) return commandAgentRef(command);
    const notFound = agentNotFound(req.agent, config);
    if (notFound) throw new OperationError('invalid', notFound);
    // Entries that name their agent are tried first; the others must be loaded to learn their names.
    const named = config.entries.filter((e) => e.name === req.agent);
    const candidates = named.length > 0 ? named : config.entries.filter((e) => !e.name);
    const failures: string[] = [];
    for (const entry of candidates) {
      try {
        const d = await describeConfigEntry(this.root, entry, this.describeOptions());
        if (d.name === req.agent) return refOf(d);
        if (entry.name) failures.push(`${entry.module} exports agent "${d.name}", not "${entry.name}" as ${AGENTS_CONFIG_FILE} says`);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    throw new OperationError(named.length > 0 ? 'agent-unavailable' : 'invalid', noAgentMessage(req.agent, config, failures));
  }

  /**
   * Resume a task in a worker (the six steps), then supervise it like a run.
   *
   * A task in an article format is imported first, when a built-in agent
   * recognises it; the imported task is the one resumed (its id is in the outcome).
   */
  async resume(taskId: string, req: ResumeRequest = {}): Promise<RunOutcome> {
    try {
      const imported = await importLegacyForResume(
        { store: this.store, root: this.root, actor: this.opts.actor },
        taskId,
        builtInAgents().values(),
      );
      if (imported) {
        this.emit('event', { type: 'line', taskId, line: imported.message, stream: 'stdout' });
        if (imported.status === 'done')
          return {
            task_id: imported.taskId,
            status: 'done',
            version: imported.version,
            message: imported.message,
            next: null,
            exitCode: RunExit.done,
          };
        taskId = imported.taskId;
      }
    } catch (err) {
      if (err instanceof OperationError) return refusedOutcome(taskId, err.code, err.message);
      throw err;
    }
    const first = await this.spawnJob({ kind: 'resume', root: this.location, taskId, trigger: 'human', ...req, actor: this.opts.actor });
    return this.supervise(taskId, first);
  }

  /** Approve the pending resume plan and run exactly that plan. `actor` (who approved) overrides the runner's for this call. */
  async approve(taskId: string, opts: { actor?: string } = {}): Promise<RunOutcome> {
    const first = await this.spawnJob({ kind: 'approve', root: this.location, taskId, actor: opts.actor ?? this.opts.actor });
    return this.supervise(taskId, first);
  }

  /** Reject the pending resume plan and halt the task. Runs in this process: no agent code is needed. `actor` overrides the runner's for this call. */
  async reject(taskId: string, reason: string, opts: { actor?: string } = {}): Promise<RunOutcome> {
    const actor = opts.actor ?? this.opts.actor;
    return this.inProcess(taskId, () => rejectTask({ store: this.store, root: this.root, actor }, taskId, { reason, actor }));
  }

  /**
   * Replace a step's result with a human's value (validated against the step's output schema).
   * With `expectedVersion`, refused (`moved`) when the task is no longer at the version the value was chosen on.
   */
  async edit(
    taskId: string,
    stepId: string,
    value: unknown,
    opts: { expectedVersion?: number; later?: 'rerun' | 'keep' } = {},
  ): Promise<RunOutcome> {
    return this.inProcess(taskId, () =>
      editStepResult({ store: this.store, root: this.root, actor: this.opts.actor }, taskId, stepId, value, {
        actor: this.opts.actor,
        expectedVersion: opts.expectedVersion,
        later: opts.later,
      }),
    );
  }

  /** Fork a task at a version into a new task; the parent is only read. Runs in this process: no agent code is needed. */
  async fork(parentId: string, version: number, opts: ForkRequest = {}): Promise<RunOutcome> {
    return this.inProcess(opts.taskId ?? parentId, () =>
      forkTask(this.env(), parentId, version, { ...opts, actor: opts.actor ?? this.opts.actor }),
    );
  }

  /** Set a step and every later one back to pending (effects kept unless chosen in `redo`). Runs in this process. */
  async rewind(taskId: string, stepId: string, opts: RewindRequest = {}): Promise<RunOutcome> {
    return this.inProcess(taskId, () => rewindTask(this.env(), taskId, stepId, { ...opts, actor: opts.actor ?? this.opts.actor }));
  }

  /** Ask the task's runner to stop at its next safe boundary; a second stop, `force` or the wait running out ends its process. */
  async stop(taskId: string, opts: StopRequestOptions = {}): Promise<RunOutcome> {
    return this.inProcess(taskId, () => stopTask(this.env(), taskId, { ...opts, actor: opts.actor ?? this.opts.actor }));
  }

  private env(): OperationEnv {
    return { store: this.store, root: this.root, actor: this.opts.actor };
  }

  private async inProcess(
    taskId: string,
    fn: () => Promise<{ task_id: string; status: TaskStatus; version: number; message: string; next: string | null }>,
  ): Promise<RunOutcome> {
    try {
      const o = await fn();
      // Edits and rejections succeed when they are written, whatever the task's status afterwards.
      return { ...o, exitCode: RunExit.done };
    } catch (err) {
      if (err instanceof OperationError) return refusedOutcome(taskId, err.code, err.message);
      // A value its own readers would refuse: bad input, and nothing was written.
      if (err instanceof WriteLimitError) return refusedOutcome(taskId, 'invalid', err.message);
      throw err;
    }
  }

  /**
   * At start-up: resume every auto-mode task that was interrupted or failed
   * with attempts left, and prepare resume plans for interrupted confirm-mode
   * tasks. Manual tasks wait for a human.
   *
   * @param candidates the tasks worth a look, from a listing the caller has
   *   just made (the host's, when it opens a directory): a second listing of
   *   a large directory would compete with the first page a user waits for.
   *   Each is read whole and checked again here. Default: list the directory.
   */
  async recoverInterrupted(candidates?: readonly string[]): Promise<RunOutcome[]> {
    const ids =
      candidates ??
      (await this.store.listTasks())
        .filter(({ checkpoint: head, format, read_only }) =>
          mayNeedRecovery({
            status: head?.status ?? null,
            mode: head?.recovery.mode ?? null,
            format,
            read_only,
            agent_name: head?.agent?.name ?? null,
            version: head?.version ?? null,
            forked_from: head?.forked_from,
          }),
        )
        .map((listed) => listed.task_id);
    // Tasks are independent: each is driven by its own worker at once, so one
    // long task (or one in backoff) never holds the others back.
    const recoveries = ids.map(async (taskId): Promise<RunOutcome | null> => {
      if (this.shuttingDown) return null;
      // The listing checked what a list row shows; a task about to be resumed is read and validated whole.
      const entry = await this.store.getTask(taskId);
      const cp = entry?.checkpoint;
      if (!entry || !cp || entry.read_only || entry.format !== 'waystation' || !cp.agent || this.shuttingDown) return null;
      const live = (await this.store.readLease(taskId)).info.held;
      if (live || this.shuttingDown || cp.recovery.stopped || isUntouchedFork(cp) || (await this.stopWasAsked(taskId))) return null;
      const interrupted = cp.status === 'running';
      const max = cp.recovery.max_auto_attempts ?? DEFAULT_MAX_AUTO_ATTEMPTS;
      // Auto mode resumes what failed or was interrupted, with attempts left; confirm mode prepares a plan for what was interrupted.
      const resumesAuto = cp.recovery.mode === 'auto' && (interrupted || cp.status === 'failed') && cp.recovery.auto_attempts < max;
      if (resumesAuto || (cp.recovery.mode === 'confirm' && interrupted)) {
        const first = await this.spawnJob({
          kind: 'resume',
          root: this.location,
          taskId: cp.task_id,
          trigger: 'auto',
          actor: this.opts.actor,
        });
        return this.supervise(cp.task_id, first);
      }
      return null;
    });
    return (await Promise.all(recoveries)).filter((o): o is RunOutcome => o !== null);
  }

  /** Wait before an automatic retry; cut short by killAll. */
  private backoff(ms: number): Promise<void> {
    if (this.shuttingDown) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.retryTimers.delete(entry);
          resolve();
        }, ms),
        wake: () => {
          clearTimeout(entry.timer);
          resolve();
        },
      };
      this.retryTimers.add(entry);
    });
  }

  /**
   * Follow a task's event log from an event id (exclusive), like SSE with
   * Last-Event-ID. Polls; returns a function that stops following.
   */
  subscribe(taskId: string, afterId: number, listener: (e: TaskEvent) => void, pollMs = 250): () => void {
    let last = afterId;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const tick = async () => {
      if (stopped) return;
      try {
        for (const e of await this.store.readEvents(taskId, last)) {
          if (stopped) return;
          last = e.id;
          listener(e);
        }
      } catch {
        // A task being created has no event log yet; the next tick looks again.
      }
      if (!stopped) timer = setTimeout(tick, pollMs);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

  /** Kill every worker this runner started (host shutdown). Their tasks are left interrupted and resume later. */
  killAll(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.shuttingDown = true;
    for (const retry of this.retryTimers) retry.wake();
    this.retryTimers.clear();
    for (const child of this.children) child.kill(signal);
  }
}

/**
 * A start whose process ended before it wrote the task's first version: there is no task to resume, so the start
 * is refused with what the process said, as a start refused before it ran is.
 */
function endedBeforeCreating(taskId: string, ended: string): RunOutcome {
  return refusedOutcome(taskId, 'agent-unavailable', `${ended} before it wrote task ${taskId}; nothing was written`);
}

/** An operation refused with `code`; `unstored` for a start refused before anything of its task was stored. */
export function refusedOutcome(taskId: string, code: string, message: string, unstored = false): RunOutcome {
  return { task_id: taskId, status: null, version: null, message, next: null, exitCode: exitCodeForError(code, unstored), error: code };
}
