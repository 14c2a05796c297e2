/**
 * What a task lease is, whatever holds it: the entry that names a holder, the
 * liveness rule that decides when it may be taken over, and the errors a
 * runner meets. The directory store keeps entries as files (file-lease.ts),
 * the PostgreSQL store as a row; both decide takeover by `leaseIsLive`, so a
 * task behaves the same on either.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { LeaseInfo } from '../../shared/api/contract.js';
import { ServiceError } from '../../shared/api/error-codes.js';
import { leaseIsLive, leaseTtlMs, processStartToken, type LeaseEntry } from './lease-record.js';

// How a lease entry is read and judged is lease-record.ts's; both stores and every reader use it.
export {
  DEFAULT_LEASE_TTL_MS,
  LEASE_TTL_ENV,
  leaseIsLive,
  leaseTtlMs,
  pidAlive,
  processStartToken,
  type LeaseEntry,
} from './lease-record.js';

/** The task is driven by someone else; nothing was written. */
export class LeaseHeldError extends ServiceError {
  readonly code = 'lease-held';
  constructor(
    readonly taskId: string,
    readonly holder: LeaseEntry,
  ) {
    super(
      `task ${taskId} is being driven by another runner (pid ${holder.pid} on ${holder.hostname}, ` +
        `last heartbeat ${holder.heartbeat_at}); nothing was written. Wait for it to finish, or stop it first.`,
    );
  }
}

/** The lease was taken over while we held it (our heartbeat went stale); the holder must stop writing. */
export class LeaseLostError extends ServiceError {
  readonly code = 'lease-lost';
  constructor(readonly taskId: string) {
    super(`the lease on task ${taskId} was taken over by another runner; this runner stopped writing`);
  }
}

/**
 * The task folder the lease was taken in is gone (deleted) or is no longer
 * the same folder (renamed away, another put in its place): the runner stops
 * and writes nothing more, least of all into a folder it did not create.
 */
export class TaskFolderGoneError extends LeaseLostError {
  constructor(
    taskId: string,
    readonly taskDir: string,
    how: 'deleted' | 'replaced',
  ) {
    super(taskId);
    this.message =
      how === 'deleted'
        ? `the folder of task ${taskId} (${taskDir}) was deleted during the run; the runner stopped and wrote nothing more`
        : `the folder of task ${taskId} (${taskDir}) was renamed or replaced during the run (it is no longer the folder the run started in); the runner stopped and wrote nothing more, into either folder`;
  }
}

/** A fresh entry naming this process as the holder. */
export function newLeaseEntry(owner: string, now = new Date().toISOString()): LeaseEntry {
  const entry: LeaseEntry = {
    owner: `${owner}:${randomBytes(4).toString('hex')}`,
    pid: process.pid,
    hostname: os.hostname(),
    acquired_at: now,
    heartbeat_at: now,
    released: false,
  };
  const started = processStartToken(process.pid);
  if (started !== null) entry.process_start = started;
  return entry;
}

export interface LeaseOptions {
  /** Who holds it, for humans reading the lease: `worker`, `cli edit`, ... */
  owner: string;
  /** Default: `leaseTtlMs()` (WAYSTATION_LEASE_TTL_MS, else 30 s). */
  ttlMs?: number;
  /** How often to heartbeat; defaults to a third of the TTL. 0 disables the timer (short critical sections). */
  heartbeatMs?: number;
  /** Called once if the lease is lost while held. */
  onLost?: (err: LeaseLostError) => void;
}

/** How often a holder heartbeats under these options (0: never on its own). */
export function heartbeatEvery(opts: LeaseOptions): number {
  return opts.heartbeatMs ?? Math.floor((opts.ttlMs ?? leaseTtlMs()) / 3);
}

/**
 * Call `beat` every `heartbeatEvery(opts)` ms (never when that is 0), on an
 * unref'd timer. A beat that fails (a write the disk or the server refused)
 * is retried on the next tick: only a takeover loses the lease.
 */
export function startHeartbeatTimer(opts: LeaseOptions, beat: () => Promise<void>): NodeJS.Timeout | null {
  const every = heartbeatEvery(opts);
  if (every <= 0) return null;
  const timer = setInterval(() => {
    beat().catch(() => {});
  }, every);
  timer.unref();
  return timer;
}

/** A placeholder holder for a LeaseHeldError when the winner of a race could not be read back. */
export const UNKNOWN_HOLDER: LeaseEntry = {
  owner: 'unknown',
  pid: 0,
  hostname: 'unknown',
  acquired_at: '',
  heartbeat_at: '',
  released: false,
};

/**
 * What a reader shows of a lease entry: held when a live holder stands behind
 * it (the runtime's rule, leaseIsLive), with who and since when.
 */
export function leaseInfoOf(entry: LeaseEntry | null, opts: { ttlMs?: number; now?: number } = {}): LeaseInfo {
  if (!entry) return { held: false };
  return {
    held: leaseIsLive(entry, opts.ttlMs ?? leaseTtlMs(), opts.now ?? Date.now()),
    ...(typeof entry.owner === 'string' ? { owner: entry.owner } : {}),
    ...(typeof entry.pid === 'number' ? { pid: entry.pid } : {}),
    ...(typeof entry.acquired_at === 'string' ? { since: entry.acquired_at } : {}),
  };
}
