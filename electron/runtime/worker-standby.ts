/**
 * A worker process started before its job is known, so that its own start-up
 * (Node's, then loading the runtime and the built-in agents) runs while the
 * command that will hand it a job is still loading: `waystation run` then
 * waits for one start-up instead of two in a row.
 *
 * A standby is an ordinary worker waiting for its first IPC message
 * (worker-job-channel.ts). It touches no task before a job arrives, so the
 * lease, crash isolation and the exit codes are those of any worker. A runner
 * adopts it only for the process it would have started anyway (the same entry,
 * Node flags, environment and working directory) and only while it is alive;
 * otherwise it starts a worker as always and the standby is let go. A standby
 * let go (or whose parent ends without a job for it) exits having written
 * nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { JOB_VIA_IPC_ENV } from './worker-job-channel.js';
import { defaultWorkerLaunch, RUN_APART, type WorkerLaunch } from './worker-launch.js';

/** Set in a standby's environment: a worker that never gets a job exits quietly. */
export const STANDBY_ENV = 'WAYSTATION_WORKER_STANDBY';
/** Set by a runner in the worker's environment, so never compared (it travels with the job). */
const ARTIFACT_ROOT_ENV = 'WAYSTATION_ARTIFACT_ROOT';

/** The process a runner is about to start. */
export interface WorkerWanted {
  entry: string;
  execArgv: readonly string[];
  cwd: string;
  /** The environment it gives its workers, before the runner's own variables. */
  env: NodeJS.ProcessEnv;
}

interface Standby {
  child: ChildProcess;
  wanted: WorkerWanted;
}

/**
 * The standby waiting, kept on the global object rather than in this module: the compiled CLI's loader starts it
 * before the CLI's script is read (cli/cli-loader.ts), and the loader and the script each hold a copy of this module.
 */
const SLOT = Symbol.for('waystation.standbyWorker');
const slot = globalThis as { [SLOT]?: Standby | null };

/** The standby waiting, taken: none is left. */
function takeStandby(): Standby | null {
  const s = slot[SLOT] ?? null;
  slot[SLOT] = null;
  return s;
}

/**
 * Start one standby worker of this build in this process's working directory
 * and environment. Does nothing when one is already waiting, or when the
 * environment hands workers a job of its own (WAYSTATION_JOB), which a standby
 * would start on at once.
 */
export function startStandbyWorker(launch: WorkerLaunch = defaultWorkerLaunch(), env: NodeJS.ProcessEnv = process.env): void {
  if (slot[SLOT] || env.WAYSTATION_JOB) return;
  const wanted: WorkerWanted = { entry: launch.entry, execArgv: [...(launch.execArgv ?? [])], cwd: process.cwd(), env: { ...env } };
  const child = fork(wanted.entry, [], {
    execArgv: [...wanted.execArgv],
    env: { ...env, [JOB_VIA_IPC_ENV]: '1', [STANDBY_ENV]: '1' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    cwd: wanted.cwd,
    detached: RUN_APART,
  });
  // A standby that cannot start is not adopted (it has exited by then); nothing else needs to hear of it.
  child.on('error', () => {});
  // Until adopted, it must not keep this process alive.
  child.unref();
  child.channel?.unref();
  slot[SLOT] = { child, wanted };
}

/**
 * The standby worker, when it is alive and the process wanted; null otherwise
 * (a standby that does not fit is let go). Either way no standby is left.
 */
export function adoptStandbyWorker(wanted: WorkerWanted): ChildProcess | null {
  const s = takeStandby();
  if (!s) return null;
  const alive = s.child.exitCode === null && s.child.signalCode === null && s.child.connected;
  if (!alive || !sameProcess(s.wanted, wanted)) {
    letGo(s.child);
    return null;
  }
  // From here on it is the runner's worker: waited for like any other.
  s.child.ref();
  s.child.channel?.ref();
  return s.child;
}

/** Let the standby go, if one is still waiting: it exits without having touched any task. */
export function stopStandbyWorker(): void {
  const s = takeStandby();
  if (s) letGo(s.child);
}

/** The pid of the standby waiting, if any. */
export function standbyWorkerPid(): number | null {
  return slot[SLOT]?.child.pid ?? null;
}

function letGo(child: ChildProcess): void {
  // Its job channel closing is what it waits for: it then exits on its own (worker-main.ts).
  if (child.connected) child.disconnect();
}

function sameProcess(a: WorkerWanted, b: WorkerWanted): boolean {
  if (a.entry !== b.entry || a.cwd !== b.cwd || a.execArgv.join('\0') !== b.execArgv.join('\0')) return false;
  const keys = new Set([...Object.keys(a.env), ...Object.keys(b.env)]);
  keys.delete(ARTIFACT_ROOT_ENV);
  for (const key of keys) if (a.env[key] !== b.env[key]) return false;
  return true;
}
