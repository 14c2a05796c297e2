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
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { commitCreate, commitReplace, syncDir, writeTemp } from '../store/atomic-file.js';
import { nodeFs } from '../store/store-fs.js';
import { ServiceError } from '../../shared/api/error-codes.js';

/** The time-to-live of a heartbeat when `WAYSTATION_LEASE_TTL_MS` does not set one; writers and readers (electron/verify/lease-state.ts) both use `leaseTtlMs`, so they agree on staleness. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** The environment variable that overrides the lease time-to-live, in milliseconds. */
export const LEASE_TTL_ENV = 'WAYSTATION_LEASE_TTL_MS';

/**
 * The lease time-to-live: `WAYSTATION_LEASE_TTL_MS` when it is a positive number, else 30 s.
 *
 * It decides only for holders whose process cannot be checked from here.
 */
export function leaseTtlMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[LEASE_TTL_ENV];
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isFinite(n) && n > 0 ? n : DEFAULT_LEASE_TTL_MS;
}

export interface LeaseEntry {
  owner: string;
  pid: number;
  hostname: string;
  acquired_at: string;
  heartbeat_at: string;
  released: boolean;
  /** When the holder's process started (Linux: boot id and start time from /proc), to tell a reused pid from the holder. */
  process_start?: string;
}

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

const ENTRY_RE = /^(\d+)\.json$/;

/** Unpadded, as docs/FORMAT.md writes it and readers look it up. */
function entryName(n: number): string {
  return `${n}.json`;
}

/** Whether a process with this pid exists on this host. EPERM means it exists but is not ours. */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process `pid` started, as a token that differs between two
 * processes that had the same pid; null where the platform does not say
 * (no /proc), or when the process does not exist.
 */
export function processStartToken(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = fields[19];
    if (!startTicks || !/^\d+$/.test(startTicks)) return null;
    return `${bootId()}:${startTicks}`;
  } catch {
    return null;
  }
}

let cachedBootId: string | null = null;
/** Start times count from boot: the boot id keeps a token from one boot matching a process of the next. */
function bootId(): string {
  if (cachedBootId === null) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

async function highestEntry(leaseDir: string): Promise<{ n: number; entry: LeaseEntry | null } | null> {
  let names: string[];
  try {
    names = await fs.readdir(leaseDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let best = -1;
  for (const name of names) {
    const m = ENTRY_RE.exec(name);
    if (m) best = Math.max(best, Number(m[1]));
  }
  if (best < 0) return null;
  try {
    // Through the store's reader: a named pipe or a device in place of an entry is refused, not waited on.
    const read = await nodeFs.readWholeFile(path.join(leaseDir, entryName(best)), { maxBytes: 64 * 1024, followLinks: true });
    if (!read.ok) return { n: best, entry: null };
    const entry = JSON.parse(read.bytes.toString('utf8')) as LeaseEntry;
    return { n: best, entry };
  } catch {
    // Entries are linked into place whole, so an unreadable one is damage, not a write in progress: treat it as stale.
    return { n: best, entry: null };
  }
}

/**
 * Whether an entry still stands for a live holder.
 *
 * On this host the process decides: a dead pid, or one that now names a
 * process started at another time, is stale at once; the holder's own process
 * holds the lease however old its heartbeat (a blocked event loop cannot
 * heartbeat). Where that cannot be checked (another host, an entry without a
 * start time, no /proc), the heartbeat must be younger than `ttlMs`.
 */
export function leaseIsLive(entry: LeaseEntry | null, ttlMs = leaseTtlMs(), now = Date.now()): boolean {
  if (!entry || entry.released) return false;
  if (entry.hostname === os.hostname()) {
    if (!pidAlive(entry.pid)) return false;
    if (typeof entry.process_start === 'string') {
      const current = processStartToken(entry.pid);
      if (current !== null) return current === entry.process_start;
    }
  }
  const beat = Date.parse(entry.heartbeat_at);
  return Number.isFinite(beat) && now - beat <= ttlMs;
}

/** The current lease entry of a task folder, or null when it has never been leased. */
export async function readLease(taskDir: string): Promise<LeaseEntry | null> {
  return (await highestEntry(path.join(taskDir, 'lease')))?.entry ?? null;
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
      const m = ENTRY_RE.exec(name);
      if (m && Number(m[1]) < current - keep) await fs.rm(path.join(leaseDir, name), { force: true });
    }),
  );
}
