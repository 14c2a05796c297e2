/**
 * The lease record of a task folder, as anyone may read it: the entries of
 * `lease/<n>.json` (docs/FORMAT.md), the highest of which is the current
 * state, and the rule that says whether it stands for a live holder.
 *
 * Reading sits here, on the store's floor, because readers (ls, the host, the
 * verifier) need it as much as the runtime that takes and renews leases
 * (electron/runtime/lease.ts): a reader that cannot tell a running task from
 * one whose runner crashed would show every interrupted task as running.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeFs, syncReadsOf } from './store-fs.js';

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

export const ENTRY_RE = /^(\d+)\.json$/;

/** The most of a lease entry read back: an entry is about 200 bytes. */
export const ENTRY_MAX_BYTES = 64 * 1024;

/** Unpadded, as docs/FORMAT.md writes it and readers look it up. */
export function entryName(n: number): string {
  return `${n}.json`;
}

/** Whether a process with this pid exists on this host. EPERM means it exists but is not ours. */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A zombie (killed, not yet reaped by its parent) still answers signal 0, but runs nothing: it holds no lease.
  return !isZombie(pid);
}

/** Whether /proc says the process has exited and waits to be reaped (state Z); false where there is no /proc. */
export function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may hold spaces or parentheses itself.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
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

export async function highestEntry(leaseDir: string): Promise<{ n: number; entry: LeaseEntry | null } | null> {
  let names: string[];
  try {
    // Synchronous, as the store's reads of small files are (store-fs.ts): a listing summarizes every task the
    // runtime wrote from its lease/, and through the thread pool the readdir cost more than reading the entry.
    names = readdirSync(leaseDir);
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
    // Through the store's reader (synchronous, as the readdir above): a named pipe or a device in place of an entry
    // is refused, not waited on.
    const read = syncReadsOf(nodeFs)!.readWholeFile(path.join(leaseDir, entryName(best)), { maxBytes: ENTRY_MAX_BYTES, followLinks: true });
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
