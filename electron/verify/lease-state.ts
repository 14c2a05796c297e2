/**
 * Whether a live process holds a task's lease, read from `lease/` as
 * docs/FORMAT.md lays it out, without ever writing to it.
 *
 * This is how a reader tells a task that is running from one whose runner
 * crashed with the checkpoint still saying `running`.
 */
import * as fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LeaseInfo } from '../../shared/api/contract.js';

/** A lease whose heartbeat is older than this is considered abandoned, as the writer side does. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

export interface LeaseReadOptions {
  ttlMs?: number;
  now?: number;
  hostname?: string;
  /** Whether a pid is alive on this host; injectable for tests. */
  isAlive?: (pid: number) => boolean;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Read the current lease state of a task folder.
 *
 * Held means: the highest `lease/<n>.json` parses, is not released, its
 * heartbeat is within the time-to-live, and, when it was taken on this host,
 * its pid is alive. Anything unreadable counts as not held: a reader must not
 * claim a task is running on evidence it cannot read.
 */
export async function readLeaseState(taskDir: string, opts: LeaseReadOptions = {}): Promise<LeaseInfo> {
  let names: string[];
  try {
    names = await fsp.readdir(path.join(taskDir, 'lease'));
  } catch {
    return { held: false };
  }
  const numbers = names.map((n) => /^(\d+)\.json$/.exec(n)).filter((m) => m !== null).map((m) => Number(m[1]));
  if (numbers.length === 0) return { held: false };
  const latest = Math.max(...numbers);
  let entry: Record<string, unknown>;
  try {
    const raw = await fsp.readFile(path.join(taskDir, 'lease', `${latest}.json`), 'utf8');
    entry = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return { held: false };
  }
  const owner = typeof entry.owner === 'string' ? entry.owner : undefined;
  const pid = typeof entry.pid === 'number' ? entry.pid : undefined;
  const since = typeof entry.acquired_at === 'string' ? entry.acquired_at : undefined;
  const info = { owner, pid, since };
  if (entry.released !== false) return { held: false, ...info };
  const heartbeat = typeof entry.heartbeat_at === 'string' ? Date.parse(entry.heartbeat_at) : NaN;
  const now = opts.now ?? Date.now();
  if (Number.isNaN(heartbeat) || now - heartbeat > (opts.ttlMs ?? DEFAULT_LEASE_TTL_MS)) return { held: false, ...info };
  if (entry.hostname === (opts.hostname ?? os.hostname()) && pid !== undefined && !(opts.isAlive ?? pidAlive)(pid)) {
    return { held: false, ...info };
  }
  return { held: true, ...info };
}
