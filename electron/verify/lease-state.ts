/**
 * Whether a live process holds a task's lease, as readers (ls, the host) need
 * to know it: the runtime's own liveness rule, never writing to `lease/`.
 *
 * This is how a reader tells a task that is running from one whose runner
 * crashed with the checkpoint still saying `running`.
 */
import type { LeaseInfo } from '../../shared/api/contract.js';
import { DEFAULT_LEASE_TTL_MS, leaseIsLive, readLease, type LeaseEntry } from '../runtime/lease.js';

export interface LeaseReadOptions {
  ttlMs?: number;
  now?: number;
}

/**
 * Read the current lease state of a task folder.
 *
 * Held means what it means to the runtime (`leaseIsLive`): the highest
 * `lease/<n>.json` is not released, its heartbeat is within the time-to-live
 * and, when taken on this host, its pid is alive. Anything unreadable counts
 * as not held: a reader must not claim a task is running on evidence it
 * cannot read.
 */
export async function readLeaseState(taskDir: string, opts: LeaseReadOptions = {}): Promise<LeaseInfo> {
  let entry: LeaseEntry | null;
  try {
    entry = await readLease(taskDir);
  } catch {
    return { held: false };
  }
  if (!entry) return { held: false };
  const info = {
    ...(typeof entry.owner === 'string' ? { owner: entry.owner } : {}),
    ...(typeof entry.pid === 'number' ? { pid: entry.pid } : {}),
    ...(typeof entry.acquired_at === 'string' ? { since: entry.acquired_at } : {}),
  };
  return { held: leaseIsLive(entry, opts.ttlMs ?? DEFAULT_LEASE_TTL_MS, opts.now ?? Date.now()), ...info };
}
