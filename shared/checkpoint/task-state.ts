/**
 * The status a task is shown with, derived from its checkpoint and from the
 * world around it (the lease, the artifacts on disk, whether it could be read).
 *
 * A checkpoint that says `running` only records what the runtime last claimed;
 * after a crash that claim is stale. Only a live lease proves that a process
 * still drives the task, so the checkpoint alone never yields `running`.
 */
import { z } from 'zod';
import type { TaskStatus } from './schema.js';

export const DisplayStatus = z.enum([
  'running',
  'interrupted',
  'failed',
  'waiting_approval',
  'waiting_human',
  'halted',
  'done',
  'drifted',
  'unreadable',
]);
export type DisplayStatus = z.infer<typeof DisplayStatus>;

export interface TaskStateFacts {
  /** A live process holds the task's lease (released leases, dead pids and stale heartbeats do not count). */
  leaseHeld: boolean;
  /** At least one recorded artifact no longer matches the disk (missing, modified, outside the root). */
  drift: boolean;
  /** The task's files could not be read into a checkpoint. */
  unreadable: boolean;
}

/**
 * Derive the status a task is displayed with.
 *
 * Precedence, first match wins:
 * 1. `unreadable` when there is no checkpoint or the caller says it could not be read;
 * 2. `running` when the checkpoint says running and a live lease holds it: a live
 *    runner is mid-step and owns its files, so drift is not judged against it;
 * 3. `drifted` when recorded artifacts no longer match the disk: whatever the task
 *    claims, resuming it or trusting its result needs a human look first;
 * 4. `interrupted` when the checkpoint says running but nothing holds the lease;
 * 5. otherwise the checkpoint's own status.
 */
export function deriveDisplayStatus(cp: { status: TaskStatus } | null, facts: TaskStateFacts): DisplayStatus {
  if (cp === null || facts.unreadable) return 'unreadable';
  if (cp.status === 'running' && facts.leaseHeld) return 'running';
  if (facts.drift) return 'drifted';
  if (cp.status === 'running') return 'interrupted';
  return cp.status;
}
