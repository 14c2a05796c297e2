/**
 * The task lease as files in the task folder: only its holder runs steps and
 * writes versions.
 *
 * `lease/<n>.json` entries form a sequence; the highest is the current state
 * (docs/FORMAT.md). Whether a holder is presumed gone is decided by
 * `leaseIsLive` (lease-record.ts). New entries are created with `link`, which
 * fails if another runner got there first, so two runners never both win.
 * The directory store hands these leases out (`acquireLease`) and fences its
 * saves with them: a save under entry n is refused once entry n+1 exists.
 */
import { promises as fs, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { commitCreate, commitReplace, syncDir, writeTemp } from './atomic-file.js';
import { nodeFs, syncReadsOf } from './store-fs.js';
import { entryName, ENTRY_MAX_BYTES, ENTRY_RE, highestEntry, leaseIsLive, leaseTtlMs, type LeaseEntry } from './lease-record.js';
import {
  startHeartbeatTimer,
  LeaseHeldError,
  LeaseLostError,
  newLeaseEntry,
  TaskFolderGoneError,
  UNKNOWN_HOLDER,
  type LeaseOptions,
} from './lease-rules.js';
import { readStopRequest, type StopRequest } from './stop-request.js';
import type { TaskLease } from './store-types.js';

export const LEASE_DIR = 'lease';
export { entryName as leaseEntryName };

/**
 * The task folder a lease was taken in, as last seen to be it: its device and inode, which a rename keeps, and its
 * change time when it was last checked. Device and inode alone do not tell a folder from one deleted and made again
 * under the name, which gets the same inode number back (here nearly every time: ext4 hands the freed number out
 * again), and a birth time is not to be had everywhere (libuv puts the change time in its place where the kernel
 * has no statx). So a folder whose change time moved is looked into: it is the lease's folder while it holds the
 * holder's own entry, whose owner is a token no other holder has (a takeover writes an entry after it, never over it).
 * The folder's change time moves when an entry of the folder itself changes (checkpoint.json rewritten when a
 * segment closes), not at every save.
 */
export interface FolderIdentity {
  dev: number;
  ino: number;
  ctimeMs: number;
}

const STOP_RE = /^(\d+)\.stop\.json$/;

/** The current lease entry of a task folder with its number, or null when it has never been leased. */
export async function readLeaseEntry(taskDir: string): Promise<{ n: number; entry: LeaseEntry | null } | null> {
  return highestEntry(path.join(taskDir, LEASE_DIR));
}

/** Create lease entry `n`, durably, unless it exists: false when another process created it first. */
async function writeExclusive(leaseDir: string, n: number, entry: LeaseEntry): Promise<boolean> {
  const temp = await writeTemp(nodeFs, path.join(leaseDir, entryName(n)), JSON.stringify(entry) + '\n');
  return commitCreate(nodeFs, temp, path.join(leaseDir, entryName(n)));
}

/** A held lease. */
export class Lease implements TaskLease {
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

  /** The entry's number: the lease's generation, which a takeover raises. */
  get generation(): number {
    return this.n;
  }

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
    const folder = this.folder;
    if (!folder || this.lostError) return;
    const taskDir = path.dirname(this.leaseDir);
    let now: Stats | null;
    try {
      now = statSync(taskDir);
    } catch {
      now = null;
    }
    if (now && now.dev === folder.dev && now.ino === folder.ino) {
      if (now.ctimeMs === folder.ctimeMs) return;
      if (this.ownEntryThere()) {
        this.folder = { ...folder, ctimeMs: now.ctimeMs };
        return;
      }
    }
    this.lostError = new TaskFolderGoneError(this.taskId, taskDir, now ? 'replaced' : 'deleted');
    this.stop();
  }

  /** Whether this holder's entry is in the lease folder (see FolderIdentity). */
  private ownEntryThere(): boolean {
    try {
      // Through the store's reader, as highestEntry reads an entry: a pipe or a device in its place is refused, not waited on.
      const read = syncReadsOf(nodeFs)!.readWholeFile(path.join(this.leaseDir, entryName(this.n)), {
        maxBytes: ENTRY_MAX_BYTES,
        followLinks: true,
      });
      return read.ok && (JSON.parse(read.bytes.toString('utf8')) as { owner?: unknown } | null)?.owner === this.entry.owner;
    } catch {
      return false;
    }
  }

  /** A person's request that this holder stop (stop-request.ts), or null: checked at each safe boundary. */
  stopRequest(): Promise<StopRequest | null> {
    return Promise.resolve(readStopRequest(this.leaseDir, this.n));
  }

  startHeartbeat(): void {
    this.timer = startHeartbeatTimer(this.opts, () => this.heartbeat());
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
  const leaseDir = path.join(taskDir, LEASE_DIR);
  const ttl = opts.ttlMs ?? leaseTtlMs();
  await fs.mkdir(leaseDir, { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await highestEntry(leaseDir);
    if (current?.entry && leaseIsLive(current.entry, ttl)) throw new LeaseHeldError(taskId, current.entry);
    const n = (current?.n ?? 0) + 1;
    const entry = newLeaseEntry(opts.owner);
    if (await writeExclusive(leaseDir, n, entry)) {
      await syncDir(nodeFs, leaseDir);
      await pruneOldEntries(leaseDir, n);
      const lease = new Lease(taskId, leaseDir, n, entry, opts);
      const st = await fs.stat(taskDir);
      lease.folder = { dev: st.dev, ino: st.ino, ctimeMs: st.ctimeMs };
      lease.startHeartbeat();
      return lease;
    }
    // Someone linked entry n first; look again: it is most likely live now.
  }
  const current = await highestEntry(leaseDir);
  throw new LeaseHeldError(taskId, current?.entry ?? UNKNOWN_HOLDER);
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
