/**
 * The one write Waystation makes to a LangGraph checkpointer: a new
 * checkpoint on a thread, forked from one of its checkpoints with some
 * channels set to new values, the way LangGraph's `updateState` writes one.
 *
 * The new checkpoint is the chosen one with the given channels replaced:
 * parent = the chosen checkpoint, a new (later) checkpoint id, the changed
 * channels' versions bumped, metadata `{source: "update", step: parent step
 * + 1}`, no pending writes. What triggers the next nodes (`branch:to:*` and
 * `versions_seen`) is kept, so invoking the graph on the thread runs the
 * nodes that were due at the chosen checkpoint, on the edited state.
 * (updateState also runs the reducers and edges of an `asNode`; those live in
 * the graph's code, which Waystation never loads, so the values given are
 * the channels' new values.)
 *
 * Written as each checkpointer writes a checkpoint (see fork-rows.ts):
 *   - SQLite, JavaScript (`json`): one `checkpoints` row of JSON text;
 *   - SQLite, Python (`msgpack`): one row whose msgpack is the parent's with
 *     the changed entries replaced, every other byte kept;
 *   - PostgreSQL (JavaScript or Python): the `checkpoints` row and a
 *     `checkpoint_blobs` row per changed channel at its new version, as
 *     PostgresSaver.put writes them.
 * Only new rows are inserted, in one transaction; existing rows are never
 * changed. Anything that cannot be written as LangGraph would is refused
 * before anything is written.
 */
import type { CheckpointRow } from './checkpoint-rows.js';
import { isPlainObject } from './inert-value.js';
import type { LangGraphSource } from './langgraph-source.js';
import { PostgresRows } from './postgres-rows.js';
import { SqliteRows } from './sqlite-rows.js';
import { threadOf } from './task-ids.js';
import { versionNumber } from './thread-mapping.js';
import { ForkRefused, jsonPostgresRows, jsonSqliteRow, pythonPostgresRows, pythonSqliteRow, type ForkRows } from './fork-rows.js';
import { insertPostgresFork, insertSqliteFork } from './fork-insert.js';

export { ForkRefused } from './fork-rows.js';

export interface ForkPlan {
  /** Where it is written: the file, or the database's URL without its password. */
  file: string;
  thread_id: string;
  checkpoint_ns: string;
  parent: { checkpoint_id: string; version: number };
  checkpoint_id: string;
  step: number;
  /** How the checkpoint is stored: `json` (JavaScript's serializer) or `msgpack` (Python's). */
  serde: 'json' | 'msgpack';
  /** Each changed channel with its version before and after. */
  channels: { name: string; from: unknown; to: unknown }[];
  /** The rows, as they will be inserted. */
  rows: ForkRows;
}

/** Channel version `n` as a checkpointer writes it: JavaScript counts with integers, Python with `"<32-digit counter>.<random>"` (get_next_version). */
export const versionText = (n: number, python: boolean): unknown =>
  python ? `${String(n).padStart(32, '0')}.${String(Math.random()).padStart(16, '0')}` : n;

const highestNumber = (versions: Iterable<unknown>): number => {
  let max = 0;
  for (const v of versions) max = Math.max(max, versionNumber(v));
  return max;
};

/** The serde a checkpoint row was written with: what its fork is written with. */
function serdeOf(row: CheckpointRow): 'json' | 'msgpack' | string {
  if (row.checkpoint.type !== 'jsonb') return row.checkpoint.type ?? 'json';
  const blobTypes = new Set(Object.values(row.blobs ?? {}).map((b) => b.type));
  if (blobTypes.has('msgpack')) return 'msgpack';
  if (blobTypes.has('json')) return 'json';
  // No blob to tell by: JavaScript numbers its channel versions, Python writes them as strings.
  const versions = (row.checkpoint as { json: unknown }).json;
  const cv = isPlainObject(versions) && isPlainObject(versions.channel_versions) ? Object.values(versions.channel_versions) : [];
  return cv.some((v) => typeof v === 'string') ? 'msgpack' : 'json';
}

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
  const history = await source.history(taskId);
  if (history.length === 0) throw new ForkRefused(`there is no thread "${taskId}" in ${source.root}; nothing was written`);
  const { thread_id, checkpoint_ns } = threadOf(taskId);
  const ids = history.map((v) => (v.source as { langgraph?: { checkpoint_id: string } }).langgraph?.checkpoint_id ?? '');
  const index = /^\d+$/.test(checkpoint) ? Number(checkpoint) - 1 : ids.indexOf(checkpoint);
  if (index < 0 || index >= ids.length) {
    throw new ForkRefused(`thread ${thread_id} has no checkpoint ${checkpoint} (it has versions 1 to ${ids.length}); nothing was written`);
  }
  const names = Object.keys(values);
  if (names.length === 0) throw new ForkRefused('the new values name no channel; nothing was written');
  for (const name of names) {
    if (name.startsWith('branch:') || name.startsWith('__'))
      throw new ForkRefused(`channel ${name} is LangGraph's own bookkeeping and cannot be set; nothing was written`);
  }
  const parentId = ids[index];
  const row = await rows.checkpoint(thread_id, checkpoint_ns, parentId);
  if (!row) throw new ForkRefused(`checkpoint ${parentId} went away while it was being read; nothing was written`);
  const serde = serdeOf(row);
  if (serde !== 'json' && serde !== 'msgpack') {
    throw new ForkRefused(
      `checkpoint ${parentId} is stored with the "${serde}" serde; Waystation forks checkpoints of LangGraph's serializers ("json" of JavaScript, "msgpack" of Python)${serde.includes('+') ? ', never encrypted ones: it does not hold the key' : ''}. Nothing was written.`,
    );
  }
  const newest = ids.reduce((a, b) => (a > b ? a : b));
  const fork = { thread_id, checkpoint_ns, parentId, values, names, newest };
  // A PostgreSQL thread's blobs are keyed by channel and version across all its branches: the bumped version goes past
  // every version the thread has stored, so neither this checkpoint nor what LangGraph writes after it meets an old blob.
  const threadMax = rows instanceof PostgresRows ? await rows.highestBlobVersion(thread_id, checkpoint_ns) : undefined;
  const bump = (checkpointVersions: Record<string, unknown>) => {
    const own = Object.values(checkpointVersions);
    const python = own.length > 0 ? own.some((v) => typeof v === 'string') : serde === 'msgpack';
    return versionText(highestNumber([...own, ...(threadMax === undefined ? [] : [threadMax])]) + 1, python);
  };
  const built =
    rows instanceof SqliteRows
      ? serde === 'json'
        ? jsonSqliteRow(row, fork, bump)
        : pythonSqliteRow(row, fork, bump)
      : serde === 'json'
        ? jsonPostgresRows(row, fork, bump)
        : pythonPostgresRows(row, fork, bump);
  return {
    file: rows.locator,
    thread_id,
    checkpoint_ns,
    parent: { checkpoint_id: parentId, version: index + 1 },
    checkpoint_id: built.checkpoint_id,
    step: built.step,
    serde,
    channels: built.channels,
    rows: built.rows,
  };
}

/** Insert the planned checkpoint: new rows in one transaction, or nothing when the parent is gone or a key is taken. */
export async function writeFork(source: LangGraphSource, plan: ForkPlan): Promise<void> {
  const rows = source.rows;
  if (plan.rows.kind === 'sqlite') {
    if (!(rows instanceof SqliteRows))
      throw new ForkRefused(`the fork was planned for a SQLite file, not ${rows.locator}; nothing was written`);
    insertSqliteFork(rows.locator, plan, plan.rows);
  } else {
    if (!(rows instanceof PostgresRows))
      throw new ForkRefused(`the fork was planned for a database, not ${rows.locator}; nothing was written`);
    await rows.writeTransaction((client) => insertPostgresFork(client, plan, plan.rows as Extract<ForkRows, { kind: 'postgres' }>));
  }
}
