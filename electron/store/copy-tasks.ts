/**
 * Copying tasks from one store to another (a directory to a database and
 * back): every version, the blobs they name and the events, checked by hash
 * afterwards, the source only read.
 *
 * A task is copied by replaying it: its events in order, and at each
 * `version` event the save that wrote that version, handing over the step
 * results and messages the version introduced, so the destination stores
 * the same blobs under the same names and writes the version event itself.
 * Each copied version is then compared with the source's by the SHA-256 of
 * its canonical JSON. A task already in the destination with the same
 * versions is skipped; one that holds the first versions of the source's
 * (an interrupted copy) is continued; one that differs is refused.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/checkpoint/canonical-json.js';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { CheckpointSource, CheckpointStore, TaskEvent } from './store-types.js';

export interface CopyOutcome {
  task_id: string;
  /** `copied`: versions were written; `up-to-date`: the destination had them all; `refused`: see `reason`. */
  status: 'copied' | 'up-to-date' | 'refused';
  /** Versions written by this copy. */
  versions: number;
  events: number;
  reason?: string;
}

function hashOf(cp: Checkpoint): string {
  return createHash('sha256').update(canonicalJson(cp)).digest('hex');
}

/** The checkpoint as a save hands it over: without version and history, which the destination fills in. */
function saveInput(cp: Checkpoint): Omit<Checkpoint, 'version' | 'history'> {
  const { version: _v, history: _h, ...rest } = cp;
  return rest;
}

/** Copy one task (or every task) from `source` to `dest`. */
export async function copyTasks(source: CheckpointSource, dest: CheckpointStore, opts: { taskId?: string } = {}): Promise<CopyOutcome[]> {
  const ids = opts.taskId !== undefined ? [opts.taskId] : await source.listTasks((entries) => entries.map((e) => e.task_id));
  const out: CopyOutcome[] = [];
  if (ids.length > 0) await dest.prepareForWrites();
  for (const id of ids) out.push(await copyTask(source, dest, id));
  return out;
}

async function copyTask(source: CheckpointSource, dest: CheckpointStore, taskId: string): Promise<CopyOutcome> {
  const refused = (reason: string): CopyOutcome => ({ task_id: taskId, status: 'refused', versions: 0, events: 0, reason });
  const entry = await source.getTask(taskId);
  if (!entry) return refused(`there is no task ${taskId} in ${source.root}`);
  if (entry.format !== 'waystation')
    return refused(
      `it is in the legacy ${entry.format} format, shown read-only: it is copied once imported as a Waystation task, which a ` +
        'resume by an agent that recognises the format does (`waystation ls` says whether one does)',
    );
  if (!entry.checkpoint) return refused(`its checkpoint cannot be read (${entry.problems.map((p) => p.message).join('; ')})`);
  const versions = (await source.history(taskId)).map((v) => v.version);
  const last = entry.checkpoint.version;
  if (versions.length !== last || versions.some((v, i) => v !== i + 1))
    return refused(`its history has gaps (versions ${versions.join(', ')} of ${last}); nothing was copied`);

  // What the destination already holds must be the source's first versions, byte for byte.
  const there = await dest.getTask(taskId);
  let have = 0;
  if (there) {
    const theirs = (await dest.history(taskId)).map((v) => v.version);
    if (theirs.length > last)
      return refused(`${dest.root} holds more versions of it (${theirs.length}) than ${source.root} (${last}); nothing was copied`);
    for (const v of theirs) {
      const [a, b] = await Promise.all([source.readVersion(taskId, v), dest.readVersion(taskId, v)]);
      if (hashOf(a) !== hashOf(b)) return refused(`${dest.root} holds a different version ${v} of it; nothing was copied`);
    }
    have = theirs.length;
    if (have === last) return { task_id: taskId, status: 'up-to-date', versions: 0, events: 0 };
  }

  const events = await source.readEvents(taskId);
  const destLastEvent = there ? ((await dest.readEvents(taskId)).at(-1)?.id ?? 0) : 0;
  let prev: Checkpoint | null = have > 0 ? await source.readVersion(taskId, have) : null;
  let written = 0;
  let logged = 0;

  // A version's event is the destination's save's own: it keeps the time the source's event gives it.
  const writeVersion = async (v: number, eventAt?: string) => {
    const cp = await source.readVersion(taskId, v);
    const results: Record<string, unknown> = {};
    for (const step of cp.plan) {
      const before = prev?.plan.find((s) => s.id === step.id)?.result_ref;
      if (step.result_ref && step.result_ref !== before) results[step.id] = await source.readBlob(taskId, step.result_ref);
    }
    let appendHistory: Awaited<ReturnType<CheckpointSource['readHistoryAfter']>>['messages'] | undefined;
    if (cp.history.head !== (prev?.history.head ?? null)) {
      const tail = await source.readHistoryAfter(taskId, v, prev ? prev.history : undefined);
      if (prev && tail.from !== prev.history.count)
        throw new Error(`version ${v} rewrote the message history; it cannot be copied as appended messages`);
      appendHistory = tail.messages;
    }
    const more = {
      ...(Object.keys(results).length ? { results } : {}),
      ...(appendHistory?.length ? { appendHistory } : {}),
      ...(eventAt ? { eventAt } : {}),
    };
    const saved =
      v === 1
        ? await dest.create(saveInput(cp), more)
        : await dest.save(taskId, { expectedVersion: v - 1, checkpoint: saveInput(cp), ...more });
    if (hashOf(saved.checkpoint) !== hashOf(cp))
      throw new Error(`version ${v} came out different in ${dest.root} (its hash does not match the source's)`);
    prev = cp;
    written++;
  };

  try {
    let next = have + 1;
    for (const e of events) {
      if (e.type === 'version' && e.version !== undefined) {
        if (e.version < next) continue;
        while (next <= e.version && next <= last) {
          const v = next++;
          await writeVersion(v, v === e.version ? e.at : undefined);
        }
      } else if (e.id > destLastEvent && next > 1) {
        await dest.appendEvent(taskId, eventInput(e));
        logged++;
      }
    }
    // Versions whose event the source's log lost (a log is not fsynced): written after the rest.
    while (next <= last) await writeVersion(next++);
  } catch (err) {
    return { ...refused(`${(err as Error).message}; the versions before it were copied`), versions: written, events: logged + written };
  }
  // Each version written brought its version event with it.
  return { task_id: taskId, status: 'copied', versions: written, events: logged + written };
}

function eventInput(e: TaskEvent): Parameters<CheckpointStore['appendEvent']>[1] {
  const { id: _id, task_id: _t, ...rest } = e;
  return rest;
}
