/**
 * Audits of a task from what its store holds (a checkpoint directory or a
 * PostgreSQL URL, as `openLocation` takes): every version readable and
 * contiguous, and no step that was done ever run again.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { openLocation } from '../../../electron/store/open-location.js';
import type { CheckpointSource } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { messageOf } from './scenario.js';

/** Problems that make a task corrupt or unreadable; an interrupted create (no version yet) is not one. */
export function corruptionOf(location: string, taskId: string): Promise<string | null> {
  return withSource(location, (store) => corruptionIn(store, taskId));
}

/** Open the store at `location` for one audit, and close it after (a database's connections with it). */
async function withSource<T>(location: string, fn: (store: CheckpointSource) => Promise<T>): Promise<T> {
  const store = openLocation(location);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function corruptionIn(store: CheckpointSource, taskId: string): Promise<string | null> {
  const entry = await store.getTask(taskId);
  if (!entry) return null;
  const errors = entry.problems.filter((p) => p.severity === 'error');
  if (!entry.checkpoint) {
    if (errors.every((p) => p.reason === 'missing-version')) return null;
    return `unreadable: ${errors.map((p) => `${p.file}: ${p.message}`).join('; ')}`;
  }
  if (errors.length > 0) return errors.map((p) => `${p.file}: ${p.message}`).join('; ');
  // Read after the task: a writer still at work (the orphaned worker of a killed runner) may have added versions since.
  const history = await store.history(taskId);
  const numbers = history.map((h) => h.version);
  const contiguous = numbers.every((n, i) => n === i + 1);
  if (!contiguous || numbers.length < entry.checkpoint.version)
    return `versions ${numbers.join(',')} for a task at version ${entry.checkpoint.version}`;
  return null;
}

/**
 * Steps that ran again after they were done, from two records: the versions
 * (a done step's status and result never change afterwards, as no human edit
 * or drift rerun happens in these scenarios) and the event log (no step-start
 * after the step's done step-finish).
 */
export function doneStepsRunAgain(location: string, taskId: string): Promise<string[]> {
  return withSource(location, (store) => doneStepsIn(store, taskId));
}

async function doneStepsIn(store: CheckpointSource, taskId: string): Promise<string[]> {
  const out: string[] = [];
  const history = await store.history(taskId);
  const doneAt = new Map<string, { version: number; ref: string | null | undefined }>();
  for (const { version } of history) {
    let cp: Checkpoint;
    try {
      cp = await store.readVersion(taskId, version);
    } catch (err) {
      out.push(`version ${version} cannot be read: ${messageOf(err)}`);
      continue;
    }
    for (const s of cp.plan) {
      const done = doneAt.get(s.id);
      if (done && (s.status !== 'done' || s.result_ref !== done.ref)) {
        out.push(`step ${s.id} was done at version ${done.version} and is ${s.status} at version ${version}`);
        doneAt.delete(s.id);
      } else if (!done && s.status === 'done') {
        doneAt.set(s.id, { version, ref: s.result_ref });
      }
    }
  }
  const finished = new Set<string>();
  for (const e of await store.readEvents(taskId)) {
    if (!e.step_id) continue;
    if (e.type === 'step-finish' && (e.data as { status?: string } | undefined)?.status === 'done') finished.add(e.step_id);
    else if (e.type === 'step-start' && finished.has(e.step_id))
      out.push(`event ${e.id}: step ${e.step_id} started again after it was done`);
  }
  return out;
}

/**
 * The parts of a finished task that must not depend on its id or on crashes:
 * step results and the artifacts' contents, the task id replaced by `<task>`.
 */
export function finalResults(location: string, taskId: string): Promise<string> {
  return withSource(location, (store) => finalResultsIn(store, taskId));
}

async function finalResultsIn(store: CheckpointSource, taskId: string): Promise<string> {
  // Relative artifact paths resolve where the store says: a directory's root, a database's artifact folder.
  const root = store.artifactRoot;
  const cp = (await store.getTask(taskId))?.checkpoint;
  if (!cp) return 'no checkpoint';
  const results: Record<string, unknown> = {};
  for (const s of cp.plan) {
    const value = s.result_ref ? await store.readBlob(taskId, s.result_ref) : null;
    results[s.id] = { status: s.status, value };
  }
  const artifacts: Record<string, string> = {};
  for (const a of cp.artifacts) {
    const abs = path.isAbsolute(a.path) ? a.path : path.join(root, a.path);
    const bytes = await fs.readFile(abs, 'utf8').catch(() => '<missing>');
    artifacts[a.path] = createHash('sha256').update(bytes.replaceAll(taskId, '<task>')).digest('hex');
  }
  const text = JSON.stringify({ status: cp.status, results, artifacts });
  // Publication ids are the service's own numbering, not part of the result.
  return text.replaceAll(taskId, '<task>').replace(/"pub-\d+"/g, '"pub-N"');
}
