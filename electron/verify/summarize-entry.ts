/**
 * A store entry turned into the summary that `ls` and `GET /api/tasks` show:
 * the entry's own problems, plus broken invariants and whether a live runner
 * holds the lease, which the store does not judge.
 */
import path from 'node:path';
import { checkInvariants } from '../../shared/checkpoint/invariants.js';
import { toTaskSummary, type TaskSummary, type TaskSummarySource } from '../../shared/checkpoint/task-summary.js';
import { readLeaseState, type LeaseReadOptions } from './lease-state.js';
import { checkpointFileOf } from './verify-task.js';

/**
 * Summarize one task of the directory at `root`.
 *
 * Artifacts are not hashed here (that is `verifyTask`, too slow for a listing),
 * so a summary never says `drifted` unless the caller passes what it verified.
 */
export async function summarizeEntry(
  root: string,
  entry: TaskSummarySource,
  opts: { drift?: boolean; lease?: LeaseReadOptions } = {},
): Promise<TaskSummary> {
  const cp = entry.checkpoint;
  // Only native tasks have a lease folder; legacy files are never driven in place.
  const lease = entry.format === 'waystation' ? await readLeaseState(path.join(root, entry.location), opts.lease) : { held: false };
  return toTaskSummary(entry, {
    leaseHeld: lease.held,
    drift: opts.drift ?? false,
    problems: cp ? checkInvariants(cp, checkpointFileOf(entry.location), { legacy: entry.format !== 'waystation' }) : [],
  });
}
