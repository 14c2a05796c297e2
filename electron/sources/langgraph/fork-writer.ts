/**
 * The one write Waystation makes to a LangGraph checkpointer: a new
 * checkpoint on a thread, forked from one of its checkpoints with some
 * channels set to new values, the way LangGraph's `updateState` writes one.
 *
 * The new checkpoint is the chosen one with the given channels replaced:
 * parent = the chosen checkpoint, a new (later) checkpoint id, the changed
 * channels' versions bumped past the highest version in the checkpoint,
 * metadata `{source: "update", step: parent step + 1}`, no pending writes.
 * What triggers the next nodes (`branch:to:*` and `versions_seen`) is kept,
 * so invoking the graph on the thread runs the nodes that were due at the
 * chosen checkpoint, on the edited state. (updateState also runs the
 * reducers and edges of an `asNode`; those live in the graph's code, which
 * Waystation never loads, so the values given are the channels' new values.)
 *
 * Only a new row is inserted, in one transaction; existing rows are never
 * changed. Supported: SQLite files of LangGraph's JavaScript SqliteSaver (the
 * `json` serde). Anything else is refused before anything is written.
 */
import Database from 'better-sqlite3';
import { newCheckpointId } from './checkpoint-id.js';
import { isPlainObject } from './inert-value.js';
import type { LangGraphSource } from './langgraph-source.js';
import { SqliteRows } from './sqlite-rows.js';
import { encodeValue } from './state-encoding.js';
import { threadOf } from './task-ids.js';
import { versionNumber } from './thread-mapping.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** Raised when a fork cannot be made; nothing was written. */
export class ForkRefused extends ServiceError {
  readonly code = 'read-only' as const;
}

export interface ForkPlan {
  file: string;
  thread_id: string;
  checkpoint_ns: string;
  parent: { checkpoint_id: string; version: number };
  checkpoint_id: string;
  step: number;
  /** Each changed channel with its version before and after. */
  channels: { name: string; from: unknown; to: unknown }[];
  /** The rows' columns, as they will be inserted. */
  row: { type: string; checkpoint: string; metadata: string };
}

const nextVersion = (max: unknown): unknown =>
  typeof max === 'number'
    ? max + 1
    : `${String(versionNumber(max) + 1).padStart(32, '0')}.${Math.random().toFixed(16).slice(2, 18).padStart(16, '0')}`;

/**
 * Work out the fork of `taskId` at `checkpoint` (a checkpoint id, or a
 * version number) with `values` (channel -> new value). Reads only.
 */
export async function planFork(
  source: LangGraphSource,
  taskId: string,
  checkpoint: string,
  values: Record<string, unknown>,
): Promise<ForkPlan> {
  const rows = source.rows;
  if (!(rows instanceof SqliteRows))
    throw new ForkRefused(
      `forking is supported for LangGraph SQLite files; ${source.root} is a ${rows.kind} checkpointer. Nothing was written.`,
    );
  const history = await source.history(taskId);
  if (history.length === 0) throw new ForkRefused(`there is no thread "${taskId}" in ${source.root}; nothing was written`);
  const { thread_id, checkpoint_ns } = threadOf(taskId);
  const ids = history.map((v) => (v.source as { langgraph?: { checkpoint_id: string } }).langgraph?.checkpoint_id ?? '');
  const index = /^\d+$/.test(checkpoint) ? Number(checkpoint) - 1 : ids.indexOf(checkpoint);
  if (index < 0 || index >= ids.length) {
    throw new ForkRefused(`thread ${thread_id} has no checkpoint ${checkpoint} (it has versions 1 to ${ids.length}); nothing was written`);
  }
  const parentId = ids[index];
  const row = await rows.checkpoint(thread_id, checkpoint_ns, parentId);
  if (!row || row.checkpoint.type !== 'json') {
    const type = row?.checkpoint.type ?? 'unknown';
    throw new ForkRefused(
      `checkpoint ${parentId} is stored with the "${type}" serde; Waystation forks only checkpoints of LangGraph's JavaScript checkpointers ("json"). Nothing was written.`,
    );
  }
  const data = (row.checkpoint as { data: Uint8Array | string | null }).data;
  const doc = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data ?? new Uint8Array())) as Record<string, unknown>;
  const metaData = (row.metadata as { data: Uint8Array | string | null }).data;
  const parentMeta = JSON.parse(typeof metaData === 'string' ? metaData : new TextDecoder().decode(metaData ?? new Uint8Array())) as Record<
    string,
    unknown
  >;
  const channelValues = isPlainObject(doc.channel_values) ? { ...doc.channel_values } : {};
  const versions = isPlainObject(doc.channel_versions) ? { ...doc.channel_versions } : {};
  const names = Object.keys(values);
  if (names.length === 0) throw new ForkRefused('--values names no channel; nothing was written');
  const max =
    Object.values(versions).reduce<unknown>((m, v) => (m === undefined || versionNumber(v) > versionNumber(m) ? v : m), undefined) ?? 0;
  const bumped = nextVersion(max);
  const changed: ForkPlan['channels'] = [];
  for (const name of names) {
    if (name.startsWith('branch:') || name.startsWith('__'))
      throw new ForkRefused(`channel ${name} is LangGraph's own bookkeeping and cannot be set; nothing was written`);
    channelValues[name] = encodeValue(values[name], name);
    changed.push({ name, from: versions[name] ?? null, to: bumped });
    versions[name] = bumped;
  }
  const step = (typeof parentMeta.step === 'number' ? parentMeta.step : -1) + 1;
  const newest = ids.reduce((a, b) => (a > b ? a : b));
  const id = newCheckpointId(step, newest);
  const newDoc = { ...doc, id, ts: new Date().toISOString(), channel_values: channelValues, channel_versions: versions };
  const metadata = { source: 'update', step, parents: isPlainObject(parentMeta.parents) ? parentMeta.parents : {} };
  return {
    file: rows.locator,
    thread_id,
    checkpoint_ns,
    parent: { checkpoint_id: parentId, version: index + 1 },
    checkpoint_id: id,
    step,
    channels: changed,
    row: { type: 'json', checkpoint: JSON.stringify(newDoc), metadata: JSON.stringify(metadata) },
  };
}

/** Insert the planned checkpoint: one new row in one transaction, or nothing when the parent is gone or the id is taken. */
export function writeFork(plan: ForkPlan): void {
  const db = new Database(plan.file, { fileMustExist: true, timeout: 5000 });
  try {
    db.transaction(() => {
      const parent = db
        .prepare('SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?')
        .get(plan.thread_id, plan.checkpoint_ns, plan.parent.checkpoint_id);
      if (!parent) throw new ForkRefused(`checkpoint ${plan.parent.checkpoint_id} is no longer in ${plan.file}; nothing was written`);
      // A plain INSERT: should the id exist after all, the insert fails and no row is replaced.
      db.prepare(
        'INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(
        plan.thread_id,
        plan.checkpoint_ns,
        plan.checkpoint_id,
        plan.parent.checkpoint_id,
        plan.row.type,
        Buffer.from(plan.row.checkpoint),
        Buffer.from(plan.row.metadata),
      );
    })();
  } finally {
    db.close();
  }
}
