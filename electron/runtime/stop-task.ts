/**
 * Stopping a task a runner drives, from any process on any machine that sees
 * the store: a stop request bound to the run's holding of the lease
 * (CheckpointStore.requestStop: a file beside a directory's lease entry, a
 * column of a database's lease row), which the runner honours at its next
 * safe boundary by saving a `stop` version and letting the lease go.
 *
 * A second stop, or a run that does not stop within the wait, ends the
 * runner's process (on this host): an effect it had in flight is left as an
 * intent, which the next resume probes as uncertain. Either way the stop is
 * recorded, and automatic recovery leaves the task alone until a person
 * resumes it.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidAlive, type LeaseEntry } from '../store/lease-rules.js';
import { defaultActor, OperationError, withTaskEngine, type OperationEnv } from './task-operations.js';
import type { EngineOutcome } from './task-engine.js';
import { commandHint } from './command-hint.js';
import { continuation } from './continue-hint.js';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { isUntouchedFork } from '../../shared/checkpoint/untouched-fork.js';

export interface StopRequestOptions {
  actor?: string;
  reason?: string;
  /** How long to wait for the runner to stop by itself before ending its process. 0: ask and return at once. Default 30 s. */
  waitMs?: number;
  /** End the runner's process now (as a second stop does). */
  force?: boolean;
}

/** How a stop ended: the run stopped by itself, its process was ended, or the request is left for the runner (waitMs 0). */
export type StopOutcome = EngineOutcome & { stopped: true; how: 'stopped' | 'ended' | 'requested' | 'recorded' };

/** The lease owner under which a stop is recorded for a run that is gone (the runner tells it from a run by it). */
export const STOP_OPERATION = 'stop';

const POLL_MS = 50;
const TERM_GRACE_MS = 2_000;

async function until(test: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await test()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

/** Stop the run that drives `taskId`, or record a stop on an interrupted task so nothing resumes it automatically. */
export async function stopTask(env: OperationEnv, taskId: string, opts: StopRequestOptions = {}): Promise<StopOutcome> {
  const by = opts.actor ?? defaultActor(env);
  const entry = await env.store.getTask(taskId);
  if (!entry) throw new OperationError('not-found', `there is no task "${taskId}" in ${env.store.root}; nothing was written`);
  const cp = entry.checkpoint;
  if (!cp || entry.format !== 'waystation') {
    throw new OperationError('read-only', `task ${taskId} (${entry.location}) is not a task a runner drives; nothing was written`);
  }
  // The live holding of the lease: its generation changes when the holder lets go or is taken over.
  const holder = async (): Promise<{ generation: number; entry: LeaseEntry } | null> => {
    const read = await env.store.readLease(taskId);
    return read.info.held && read.entry && read.generation !== undefined ? { generation: read.generation, entry: read.entry } : null;
  };
  const asked = (await holder()) ? await env.store.requestStop(taskId, { by, reason: opts.reason }) : null;
  if (!asked) {
    // Nobody live holds the lease (or its holder let go between the look and the request): nothing to ask.
    if (cp.status !== 'running') {
      throw new OperationError('invalid', `task ${taskId} is not running (it is ${cp.status}); there is nothing to stop`);
    }
    // Stopped already, and no run since: a version saying it again would only push the first stop out of sight.
    // A fork's own first version is no stop (earlier builds recorded the fork's hold there as one): this one is the first.
    const { stopped } = cp.recovery;
    if (stopped && !isUntouchedFork(cp)) {
      const why = stopped.reason ? ` (${stopped.reason})` : '';
      return {
        ...(await outcomeOf(env, cp, `task ${taskId} was already stopped by ${stopped.by} at ${stopped.at}${why}; nothing was written`)),
        stopped: true,
        how: 'recorded',
      };
    }
    return record(env, taskId, { by, reason: opts.reason }, 'recorded');
  }
  const { request } = asked;
  const held = { generation: asked.generation, entry: asked.holder };
  const released = async () => (await holder())?.generation !== held.generation;
  const waitMs = opts.force || request.count > 1 ? 0 : (opts.waitMs ?? 30_000);
  if (!opts.force && request.count === 1) {
    if (waitMs === 0 || (await until(released, waitMs))) {
      const latest = (await env.store.getTask(taskId))?.checkpoint ?? cp;
      return {
        task_id: taskId,
        status: latest.status,
        version: latest.version,
        message:
          waitMs === 0
            ? `asked the runner of task ${taskId} (pid ${held.entry.pid}) to stop at its next step or effect`
            : latest.recovery.stopped
              ? `task ${taskId} stopped by ${latest.recovery.stopped.by}`
              : `task ${taskId} ended before it reached a point to stop at (it is ${latest.status})`,
        next:
          waitMs === 0
            ? `stop it now: ${commandHint(taskId, 'stop', ' --force')}`
            : `continue: ${(await continuation(env.root, latest)).text}`,
        stopped: true,
        how: waitMs === 0 ? 'requested' : 'stopped',
      };
    }
  }

  // A second stop, --force, or the wait ran out: end the process, where this host can.
  const { pid, hostname } = held.entry;
  if (hostname !== os.hostname()) {
    throw new OperationError(
      'busy',
      `task ${taskId} is driven by pid ${pid} on ${hostname}, another machine: it was asked to stop at its next step or effect, but its process can only be ended there`,
    );
  }
  signal(pid, 'SIGTERM');
  if (!(await until(async () => !pidAlive(pid) || (await released()), TERM_GRACE_MS))) signal(pid, 'SIGKILL');
  await until(async () => !pidAlive(pid) || (await released()), TERM_GRACE_MS);
  const after = (await env.store.getTask(taskId))?.checkpoint;
  if (after?.recovery.stopped) {
    return { ...(await outcomeOf(env, after, `task ${taskId} stopped by ${after.recovery.stopped.by}`)), stopped: true, how: 'stopped' };
  }
  return record(env, taskId, { by, reason: opts.reason }, 'ended');
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone: what matters is that it no longer holds the lease.
  }
}

async function outcomeOf(env: OperationEnv, cp: Checkpoint, message: string): Promise<EngineOutcome> {
  return {
    task_id: cp.task_id,
    status: cp.status,
    version: cp.version,
    message,
    next: `continue: ${(await continuation(env.root, cp)).text}`,
  };
}

/** Save the stop under the task's own lease, the runner being gone. */
async function record(
  env: OperationEnv,
  taskId: string,
  request: { by: string; reason?: string },
  how: 'recorded' | 'ended',
): Promise<StopOutcome> {
  const outcome = await withTaskEngine(env, taskId, STOP_OPERATION, (engine, cp) =>
    // A run that ended between the request and now (done, failed, waiting) is left as it ended.
    cp.status === 'running'
      ? engine.recordStop(request)
      : Promise.resolve(engine.outcome(cp.status, `task ${taskId} ended before it was stopped (it is ${cp.status})`, null)),
  );
  const message = how === 'ended' ? `${outcome.message}; its runner's process was ended` : outcome.message;
  return { ...outcome, message, stopped: true, how };
}
