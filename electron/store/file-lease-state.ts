/**
 * Whether a live process holds a task's lease, as readers (ls, the host) need
 * to know it: the runtime's own liveness rule, never writing to `lease/`.
 *
 * This is how a reader tells a task that is running from one whose runner
 * crashed with the checkpoint still saying `running`.
 */
import type { LeaseInfo } from '../../shared/api/contract.js';
import { readLease } from './lease-record.js';
import { leaseInfoOf, type LeaseEntry } from './lease-rules.js';

export interface LeaseReadOptions {
  /** Default: the runtime's (`WAYSTATION_LEASE_TTL_MS`, else 30 s), so readers and writers agree. */
  ttlMs?: number;
  now?: number;
}

/**
 * Read the current lease state of a task folder.
 *
 * Held means what it means to the runtime (`leaseIsLive`): the highest
 * `lease/<n>.json` is not released and its holder is alive: on this host, its
 * process (the pid, started when the entry says); elsewhere, a heartbeat within
 * the time-to-live. Anything unreadable counts
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
  return leaseInfoOf(entry, opts);
}
