/**
 * A store entry turned into the summary that `ls` and `GET /api/tasks` show:
 * the entry's own problems, plus broken invariants, whether a live runner
 * holds the lease, and whether its artifacts visibly drifted, which the store
 * does not judge.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { checkInvariants } from '../../shared/checkpoint/invariants.js';
import { hasErrors, mayBeDriven, toTaskSummary, type TaskSummary, type TaskSummarySource } from '../../shared/checkpoint/task-summary.js';
import { plainProblem, type Problem } from '../../shared/checkpoint/problem.js';
import type { CheckpointSource, ListedTask, TaskEntry } from '../store/store-types.js';
import { leaseInfoOf } from '../store/lease-rules.js';

/** How a lease is judged: the runtime's time-to-live by default, at the present time. */
export interface LeaseReadOptions {
  ttlMs?: number;
  now?: number;
}
import { quickDriftCheck } from './quick-drift.js';
import { checkpointFileOf } from './verify-task.js';
import { mapLimit, SYNC_SLICE } from '../store/directory-scan.js';

export interface SummarizeOptions {
  /**
   * Whether artifacts drifted, when the caller knows better (a full verify).
   * By default the stat-only quickDriftCheck decides.
   */
  drift?: boolean;
  lease?: LeaseReadOptions;
}

/**
 * A task to summarize: a listing's entry or a whole one. `has_lease: false`
 * (the listing saw no `lease/` folder) spares reading a lease that is not there,
 * and `lease` (the entry the listing read) reading the one that is.
 */
export type SummarizedEntry = TaskSummarySource & Pick<ListedTask, 'has_lease' | 'lease'>;

/**
 * Summarize one task of a source (its lease as the source reads it, its artifacts under `source.artifactRoot`).
 *
 * Artifacts are stat-ed, not hashed (hashing is `verifyTask`, too slow for a
 * listing): a missing or resized artifact makes the task `drifted`, a
 * same-size rewrite does not, unless the caller passes `drift`.
 */
export async function summarizeEntry(source: CheckpointSource, entry: SummarizedEntry, opts: SummarizeOptions = {}): Promise<TaskSummary> {
  const cp = entry.checkpoint;
  // Legacy files are never driven in place (mayBeDriven). The lease tells a running task
  // from an interrupted one and nothing else of a summary (deriveDisplayStatus): a task whose checkpoint says it is
  // not running (every finished task the runtime wrote keeps its lease/ folder) need not have it read.
  const leased = mayBeDriven(entry.format) && entry.has_lease !== false && cp?.status === 'running';
  // A lease the listing read with the task (a database's) is judged as read; otherwise it is read now.
  const lease = !leased
    ? { held: false }
    : entry.lease !== undefined
      ? leaseInfoOf(entry.lease, opts.lease)
      : (await source.readLease(entry.task_id, opts.lease)).info;
  // A task a live runner is driving shows as running whatever its files say (see deriveDisplayStatus): no need to stat them.
  const drivenNow = cp?.status === 'running' && lease.held;
  const drift = opts.drift ?? (cp && !drivenNow ? await quickDriftCheck(source.artifactRoot, cp) : false);
  return toTaskSummary(entry, {
    leaseHeld: lease.held,
    drift,
    problems: cp ? checkInvariants(cp, checkpointFileOf(entry.location), { legacy: entry.format !== 'waystation' }) : [],
  });
}

/** How many tasks are summarized at once: enough to overlap stat latency, few enough not to exhaust file handles. */
const LIST_CONCURRENCY = 16;

/** A listed task and its summary. */
export interface SummarizedRow<E extends SummarizedEntry> {
  entry: E;
  summary: TaskSummary;
}

/**
 * Summarize every entry of a listing, in order, a bounded number at a time.
 *
 * The one implementation behind `waystation ls` and the host's `listTasks`,
 * so `GET /api/tasks` answers what `ls --json` prints. What the listing does
 * not read for (a misnumbered version file: CheckpointSource.fileProblems) is
 * asked by each caller beside it, and added with withFileProblems: `ls` as it
 * lists (a directory answers on a thread of its own while the next slice is
 * read), the host once its list is built (its rows gain those problems a
 * moment after the first answer).
 */
export async function summarizeListing<E extends SummarizedEntry>(
  source: CheckpointSource,
  entries: readonly E[],
  opts: { concurrency?: number; lease?: LeaseReadOptions } = {},
): Promise<SummarizedRow<E>[]> {
  const out: SummarizedRow<E>[] = [];
  // Most tasks need no I/O to summarize (no lease folder, no artifacts), so a slice runs start to end in one
  // turn of the event loop: 10,000 at once held the host for ~180 ms while the page's own files waited.
  for (let start = 0; start < entries.length; start += SYNC_SLICE) {
    if (start > 0) await nextTurn();
    const slice = entries.slice(start, start + SYNC_SLICE);
    const summaries = await mapLimit(slice, opts.concurrency ?? LIST_CONCURRENCY, (entry) =>
      summarizeEntry(source, entry, { lease: opts.lease }),
    );
    for (let i = 0; i < slice.length; i++) out.push({ entry: slice[i], summary: summaries[i] });
  }
  return out;
}

/** A summary (or listing) with the problems its files were found to have (CheckpointSource.fileProblems) added. */
export function withFileProblems<S extends TaskSummary>(summary: S, found: readonly Problem[]): S {
  if (found.length === 0) return summary;
  const added = found.map(plainProblem);
  return { ...summary, problems: [...summary.problems, ...added] };
}

/**
 * The row of a listed task whose files show an error the listing did not read for (`found`, fileProblems), read
 * whole as the task view reads it: a listing takes checkpoint.json at its word, where the whole read does not (a copy
 * claiming a version no file holds gives way to the newest version that reads), so the row would show one version
 * and the task another. The whole read checks the files itself, so its problems hold `found`. Null when nothing in
 * `found` is an error, or the task is no longer at the listed location: the caller adds `found` to its row.
 */
export async function rowReadWhole(
  source: CheckpointSource,
  listed: Pick<TaskSummary, 'task_id' | 'location'>,
  found: readonly Problem[],
): Promise<{ entry: TaskEntry; summary: TaskSummary } | null> {
  if (!hasErrors(found.map(plainProblem))) return null;
  const entry = await source.getTask(listed.task_id).catch(() => null);
  if (!entry || entry.location !== listed.location) return null;
  return { entry, summary: await summarizeEntry(source, entry) };
}
