/**
 * The task lease: only its holder runs steps and writes versions.
 *
 * `lease/<n>.json` entries form a sequence; the highest is the current state
 * (docs/FORMAT.md). A holder is presumed gone when it released the lease, when
 * its process no longer exists on this host (or its pid now names another
 * process, told apart by the start time the entry records), or, where its
 * process cannot be checked from here (another host, no start time), when its
 * heartbeat is older than the time-to-live. A live holder on this host keeps
 * its lease even while its event loop is too busy to heartbeat. New entries
 * are created with `link`, which fails if another runner got there first, so
 * two runners never both win.
 */
import { promises as fs, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { commitCreate, commitReplace, syncDir, writeTemp } from '../store/atomic-file.js';
import { nodeFs } from '../store/store-fs.js';
import { entryName, ENTRY_RE, highestEntry, leaseIsLive, leaseTtlMs, processStartToken, type LeaseEntry } from '../store/lease-record.js';
import { ServiceError } from '../../shared/api/error-codes.js';
import { readStopRequest, type StopRequest } from './stop-request.js';

// Reading a lease is the store's (readers need it too); taking and renewing one is the runtime's.
export {
  DEFAULT_LEASE_TTL_MS,
  LEASE_TTL_ENV,
  leaseIsLive,
  leaseTtlMs,
  pidAlive,
  processStartToken,
  readLease,
  type LeaseEntry,
} from '../store/lease-record.js';

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

/** Identity of a folder: its device and inode, which a rename keeps and a new folder of the same name does not have. */
export interface FolderIdentity {
  dev: number;
  ino: number;
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

const STOP_RE = /^(\d+)\.stop\.json$/;

/** The current lease entry of a task folder with its number, or null when it has never been leased. */
export async function readLeaseEntry(taskDir: string): Promise<{ n: number; entry: LeaseEntry | null } | null> {
  return highestEntry(path.join(taskDir, 'lease'));
}

/** Create lease entry `n`, durably, unless it exists: false when another process created it first. */
async function writeExclusive(leaseDir: string, n: number, entry: LeaseEntry): Promise<boolean> {
  const temp = await writeTemp(nodeFs, path.join(leaseDir, entryName(n)), JSON.stringify(entry) + '\n');
  return commitCreate(nodeFs, temp, path.join(leaseDir, entryName(n)));
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

/** A held lease. */
export class Lease {
  private timer: NodeJS.Timeout | null = null;
  private lostError: LeaseLostError | null = null;
  /** The task folder the lease was taken in; checked before every write. */
  folder: FolderIdentity | null = null;
  private releasing = false;

  constructor(
    readonly taskId: string,
    private readonly leaseDir: string,
    readonly n: number,
    private entry: LeaseEntry,
    private readonly opts: LeaseOptions,
  ) {}

  get lost(): LeaseLostError | null {
    return this.lostError;
  }

  /** Held: neither lost to a takeover nor being released. */
  get held(): boolean {
    return this.lostError === null && !this.releasing;
  }

  /** Throw if the lease is gone; called before every write. */
  assertHeld(): void {
    if (this.lostError) throw this.lostError;
    this.checkFolder();
    if (this.lostError) throw this.lostError;
  }

  /** Notice that the task folder is gone or another one (see TaskFolderGoneError); the lease is lost then. */
  private checkFolder(): void {
    if (!this.folder || this.lostError) return;
    const taskDir = path.dirname(this.leaseDir);
    let now: { dev: number; ino: number } | null;
    try {
      now = statSync(taskDir);
    } catch {
      now = null;
    }
    if (now && now.dev === this.folder.dev && now.ino === this.folder.ino) return;
    this.lostError = new TaskFolderGoneError(this.taskId, taskDir, now ? 'replaced' : 'deleted');
    this.stop();
  }

  /** A person's request that this holder stop (electron/runtime/stop-request.ts), or null: checked at each safe boundary. */
  stopRequest(): StopRequest | null {
    return readStopRequest(this.leaseDir, this.n);
  }

  startHeartbeat(): void {
    const every = this.opts.heartbeatMs ?? Math.floor((this.opts.ttlMs ?? leaseTtlMs()) / 3);
    if (every <= 0) return;
    this.timer = setInterval(() => {
      this.heartbeat().catch(() => {
        // A failed heartbeat write is retried on the next tick; only a takeover loses the lease.
      });
    }, every);
    this.timer.unref();
  }

  /** Refresh the heartbeat, or notice that someone took the lease over. */
  async heartbeat(): Promise<void> {
    if (this.lostError || this.releasing) return;
    this.checkFolder();
    if (this.lostError) {
      this.opts.onLost?.(this.lostError);
      return;
    }
    const current = await highestEntry(this.leaseDir);
    if (!current || current.n !== this.n) {
      this.lostError = new LeaseLostError(this.taskId);
      this.stop();
      this.opts.onLost?.(this.lostError);
      return;
    }
    this.entry = { ...this.entry, heartbeat_at: new Date().toISOString() };
    // A heartbeat is not fsynced: after a power cut an older one only makes the lease look staler.
    const target = path.join(this.leaseDir, entryName(this.n));
    await commitReplace(nodeFs, await writeTemp(nodeFs, target, JSON.stringify(this.entry) + '\n', { sync: false }), target);
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Give the lease up by writing a released entry after ours. */
  async release(): Promise<void> {
    this.stop();
    this.checkFolder();
    if (this.lostError || this.releasing) return;
    this.releasing = true;
    const now = new Date().toISOString();
    await writeExclusive(this.leaseDir, this.n + 1, { ...this.entry, heartbeat_at: now, released: true });
    await syncDir(nodeFs, this.leaseDir).catch(() => undefined);
  }
}

/**
 * Take the lease on a task folder, or fail with LeaseHeldError naming the holder.
 *
 * Stale entries (released, dead process, old heartbeat) are taken over.
 */
export async function acquireLease(taskDir: string, taskId: string, opts: LeaseOptions): Promise<Lease> {
  const leaseDir = path.join(taskDir, 'lease');
  const ttl = opts.ttlMs ?? leaseTtlMs();
  await fs.mkdir(leaseDir, { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await highestEntry(leaseDir);
    if (current?.entry && leaseIsLive(current.entry, ttl)) throw new LeaseHeldError(taskId, current.entry);
    const n = (current?.n ?? 0) + 1;
    const now = new Date().toISOString();
    const entry: LeaseEntry = {
      owner: `${opts.owner}:${randomBytes(4).toString('hex')}`,
      pid: process.pid,
      hostname: os.hostname(),
      acquired_at: now,
      heartbeat_at: now,
      released: false,
    };
    const started = processStartToken(process.pid);
    if (started !== null) entry.process_start = started;
    if (await writeExclusive(leaseDir, n, entry)) {
      await syncDir(nodeFs, leaseDir);
      await pruneOldEntries(leaseDir, n);
      const lease = new Lease(taskId, leaseDir, n, entry, opts);
      const st = await fs.stat(taskDir);
      lease.folder = { dev: st.dev, ino: st.ino };
      lease.startHeartbeat();
      return lease;
    }
    // Someone linked entry n first; look again: it is most likely live now.
  }
  const current = await highestEntry(leaseDir);
  throw new LeaseHeldError(
    taskId,
    current?.entry ?? { owner: 'unknown', pid: 0, hostname: 'unknown', acquired_at: '', heartbeat_at: '', released: false },
  );
}

/** Keep the lease folder small: entries far below the current one decide nothing. */
async function pruneOldEntries(leaseDir: string, current: number): Promise<void> {
  const keep = 8;
  if (current <= keep) return;
  const names = await fs.readdir(leaseDir).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      // Stop requests (`<n>.stop.json`) of runs long gone go with their entries.
      const m = ENTRY_RE.exec(name) ?? STOP_RE.exec(name);
      if (m && Number(m[1]) < current - keep) await fs.rm(path.join(leaseDir, name), { force: true });
    }),
  );
}
