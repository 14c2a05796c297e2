/**
 * Reading tasks from a PostgreSQL store: the listing from the task rows (a
 * row's head holds version `head_version`, which may lag the newest by a few
 * deltas: they are applied here, see pg-writes.ts), a version rebuilt from
 * its nearest full snapshot and the deltas after it, the history list, blobs
 * checked against their hash, and events.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { problem } from '../../../shared/checkpoint/problem.js';
import { VersionSource, type Checkpoint } from '../../../shared/checkpoint/schema.js';
import { applyDiff, type DiffOp } from '../../../shared/diff/json-diff.js';
import { checkCheckpoint, checkCheckpointHead } from '../checkpoint-check.js';
import { parseBlobRef, walkHistoryChain, type HistoryChainRead } from '../blob-store.js';
import { SYNC_SLICE } from '../directory-scan.js';
import {
  TaskReadError,
  type HistoryMark,
  type KeepListed,
  type ListedTask,
  type TaskEntry,
  type TaskEvent,
  type VersionInfo,
} from '../store-types.js';
import type { Problem } from '../../../shared/checkpoint/problem.js';
import { parseLeaseEntry } from './pg-lease.js';
import { pgCode } from './pg-errors.js';

/** A task row as the listing and getTask read it. */
interface TaskRow {
  task_id: string;
  /** Null when the listing read the row's summary instead. */
  head: string | null;
  head_version: number;
  last_version: number;
}

/** A task row as the listing reads it: its summary when it keeps one (pg-summary.ts), its lease entry. */
interface ListedRow extends TaskRow {
  summary: string | null;
  has_lease: boolean;
  lease_entry: string | null;
}

/** The deltas after each lagging row's head, up to the version the row named, by task id, oldest first. */
async function deltasAfterHeads(
  client: pg.ClientBase,
  rows: readonly TaskRow[],
): Promise<Map<string, { version: number; body: string }[]>> {
  const lagging = rows.filter((r) => r.head_version < r.last_version);
  const out = new Map<string, { version: number; body: string }[]>();
  if (lagging.length === 0) return out;
  // Bounded by what the row said: a save committed since adds versions the head read here must not take.
  const { rows: found } = await client.query<{ task_id: string; version: number; body: string }>(
    `SELECT v.task_id, v.version, v.body
       FROM unnest($1::text[], $2::int[], $3::int[]) AS l(task_id, after, upto)
       JOIN waystation_versions v ON v.task_id = l.task_id AND v.version > l.after AND v.version <= l.upto
      ORDER BY v.task_id, v.version`,
    [lagging.map((r) => r.task_id), lagging.map((r) => r.head_version), lagging.map((r) => r.last_version)],
  );
  for (const f of found) {
    let list = out.get(f.task_id);
    if (!list) out.set(f.task_id, (list = []));
    list.push({ version: f.version, body: f.body });
  }
  return out;
}

/** The row's newest checkpoint as JSON: its head with the deltas after it applied; null when they do not apply. */
function currentDoc(row: TaskRow, deltas: readonly { version: number; body: string }[] = []): unknown {
  let doc = row.head === null ? null : parseOrNull(row.head);
  if (row.head_version >= row.last_version) return doc;
  if (deltas.length !== row.last_version - row.head_version) return null;
  try {
    for (const d of deltas) doc = applyDiff(doc, JSON.parse(d.body) as DiffOp[]);
    return doc;
  } catch {
    return null;
  }
}

/** A task row turned into a listing entry (its summary or head checked as a listing checks it), with its lease. */
function listedOf(row: ListedRow, doc: unknown, readOnly: boolean): ListedTask {
  const checked = checkCheckpointHead(doc, row.task_id);
  return {
    task_id: row.task_id,
    location: row.task_id,
    format: 'waystation',
    checkpoint: checked.checkpoint,
    read_only: readOnly || checked.readOnly,
    problems: checked.problems,
    has_lease: row.has_lease,
    lease: row.has_lease ? parseLeaseEntry(row.lease_entry) : null,
  };
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Rows of a listing fetched at a time, after a first fetch of one slice (SYNC_SLICE): the first screen of a
 * host's list is kept as soon as that slice is in, not once a whole page of summaries has been sent and parsed.
 */
export const LIST_PAGE_ROWS = 1000;

/** The rows of a listing, in the order of the ids' bytes: read through the index of that order (schema 6), nothing sorted. */
export const LISTING_QUERY = `SELECT t.task_id, t.summary, CASE WHEN t.summary IS NULL THEN t.head END AS head, t.head_version, t.last_version,
       (l.task_id IS NOT NULL) AS has_lease, l.entry AS lease_entry
  FROM waystation_tasks t LEFT JOIN waystation_leases l ON l.task_id = t.task_id
 ORDER BY t.task_id COLLATE "C"`;

/**
 * Every task, in task id order, handed to `keep` a slice at a time: the rows,
 * the summary of each and its lease entry, fetched a page at a time through
 * a cursor of one read-only snapshot (one query's rows, without waiting for
 * all 10,000 of them before the first slice is kept); a task too long to keep
 * a summary (pg-summary.ts) is read from its head, with the deltas after it
 * in one more query for such tasks of the page.
 */
export async function listTasks<T>(client: pg.ClientBase, readOnly: boolean, keep: KeepListed<T>): Promise<T[]> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    await client.query(`DECLARE waystation_listing NO SCROLL CURSOR FOR ${LISTING_QUERY}`);
    const out: T[] = [];
    for (let page = SYNC_SLICE; ; page = LIST_PAGE_ROWS) {
      const { rows } = await client.query<ListedRow>(`FETCH ${page} FROM waystation_listing`);
      const deltas = await deltasAfterHeads(
        client,
        rows.filter((r) => r.summary === null),
      );
      for (let i = 0; i < rows.length; i += SYNC_SLICE)
        out.push(
          ...(await keep(
            rows
              .slice(i, i + SYNC_SLICE)
              .map((r) => listedOf(r, r.summary !== null ? parseOrNull(r.summary) : currentDoc(r, deltas.get(r.task_id)), readOnly)),
          )),
        );
      if (rows.length < page) break;
    }
    await client.query('COMMIT');
    return out;
  } catch (err) {
    // The client goes back to the pool: never inside the listing's transaction.
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** One task, validated whole; null when there is none. */
export async function getTask(client: pg.ClientBase, taskId: string, readOnly: boolean): Promise<TaskEntry | null> {
  const { rows } = await client.query<TaskRow>(
    `SELECT task_id, head, head_version, last_version FROM waystation_tasks WHERE task_id = $1`,
    [taskId],
  );
  if (rows.length === 0) return null;
  const deltas = await deltasAfterHeads(client, rows);
  const checked = checkCheckpoint(currentDoc(rows[0], deltas.get(taskId)), taskId);
  return {
    task_id: taskId,
    location: taskId,
    format: 'waystation',
    checkpoint: checked.checkpoint,
    read_only: readOnly || checked.readOnly,
    problems: checked.problems,
  };
}

/**
 * Where the newest version's message history starts (its `history` field),
 * read from the row's summary, or from its head and the deltas after it,
 * without validating the rest of the checkpoint (megabytes for a long task,
 * which getTask validates whole); null when there is no such task or the
 * field is not well formed (getTask then says what is wrong).
 */
export async function latestHistoryRef(client: pg.ClientBase, taskId: string): Promise<{ count: number; head: string | null } | null> {
  const { rows } = await client.query<TaskRow & { summary: string | null }>(
    `SELECT task_id, summary, CASE WHEN summary IS NULL THEN head END AS head, head_version, last_version FROM waystation_tasks WHERE task_id = $1`,
    [taskId],
  );
  if (rows.length === 0) return null;
  const row = rows[0];
  const doc = row.summary !== null ? parseOrNull(row.summary) : currentDoc(row, (await deltasAfterHeads(client, rows)).get(taskId));
  const h = (doc as { history?: { count?: unknown; head?: unknown } } | null)?.history;
  if (!h || !Number.isSafeInteger(h.count) || (h.count as number) < 0) return null;
  if (h.head !== null && (typeof h.head !== 'string' || !parseBlobRef(h.head))) return null;
  return { count: h.count as number, head: h.head };
}

interface VersionRow {
  version: number;
  kind: 'full' | 'delta';
  body: string;
  bytes: number;
}

/**
 * The rows that rebuild version `version`: the nearest full snapshot at or
 * below it and every delta after it, oldest first.
 */
async function rebuildRows(client: pg.ClientBase, taskId: string, version: number): Promise<VersionRow[]> {
  const { rows } = await client.query<VersionRow>(
    `SELECT version, kind, body, bytes FROM waystation_versions
      WHERE task_id = $1 AND version <= $2
        AND version >= (SELECT max(version) FROM waystation_versions WHERE task_id = $1 AND version <= $2 AND kind = 'full')
      ORDER BY version`,
    [taskId, version],
  );
  return rows;
}

/** Version `version`'s document, as JSON (not validated), with the bytes of the snapshot and deltas it was rebuilt from. */
export async function rebuildDoc(
  client: pg.ClientBase,
  taskId: string,
  version: number,
): Promise<{ ok: true; doc: unknown; fullBytes: number; deltaBytes: number } | { ok: false; problem: Problem }> {
  const rows = await rebuildRows(client, taskId, version);
  const where = `${taskId} version ${version}`;
  if (rows.length === 0 || rows[rows.length - 1].version !== version)
    return { ok: false, problem: problem(where, 'missing-version', `task ${taskId} has no version ${version}`) };
  let doc: unknown = null;
  let fullBytes = 0;
  let deltaBytes = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (i > 0 && row.version !== rows[i - 1].version + 1)
      return {
        ok: false,
        problem: problem(
          where,
          'missing-version',
          `version ${rows[i - 1].version + 1} is missing, so version ${version} cannot be rebuilt`,
        ),
      };
    try {
      if (row.kind === 'full') {
        doc = JSON.parse(row.body);
        fullBytes = row.bytes;
      } else {
        doc = applyDiff(doc, JSON.parse(row.body) as DiffOp[]);
        deltaBytes += row.bytes;
      }
    } catch (err) {
      return { ok: false, problem: problem(where, 'schema', `version ${row.version} does not apply: ${(err as Error).message}`) };
    }
  }
  return { ok: true, doc, fullBytes, deltaBytes };
}

/** Version `version`, rebuilt and validated. */
export async function readVersion(client: pg.ClientBase, taskId: string, version: number): Promise<Checkpoint> {
  const built = await rebuildDoc(client, taskId, version);
  if (!built.ok) throw new TaskReadError(taskId, [built.problem]);
  const checked = checkCheckpoint(built.doc, `${taskId} version ${version}`);
  if (!checked.checkpoint) throw new TaskReadError(taskId, checked.problems);
  return checked.checkpoint;
}

/** The history list, oldest first. */
export async function history(client: pg.ClientBase, taskId: string, after = 0): Promise<VersionInfo[]> {
  const { rows } = await client.query<{ version: number; source: string; updated_at: string; bytes: number }>(
    `SELECT version, source, updated_at, bytes FROM waystation_versions WHERE task_id = $1 AND version > $2 ORDER BY version`,
    [taskId, after],
  );
  return rows.map((r) => {
    const source = VersionSource.safeParse(parseOrNull(r.source));
    return {
      version: r.version,
      source: source.success ? source.data : { kind: 'runtime', note: 'source missing or malformed in this version' },
      updated_at: r.updated_at,
      bytes: r.bytes,
    };
  });
}

type BlobRead = { ok: true; value: unknown } | { ok: false; problem: Problem };

/** A blob by reference, checked against its hash. */
export async function readBlob(client: pg.ClientBase, taskId: string, ref: string): Promise<BlobRead> {
  const at = parseBlobRef(ref);
  const where = `${taskId} (${ref})`;
  if (!at) return { ok: false, problem: problem(where, 'unreadable', `${JSON.stringify(ref)} is not a blob reference (sha256:<hex>)`) };
  const { rows } = await client.query<{ bytes: Buffer }>(`SELECT bytes FROM waystation_blobs WHERE hex = $1`, [at.hex]);
  if (rows.length === 0) return { ok: false, problem: problem(where, 'unreadable', `the database holds no blob ${at.hex}`) };
  return checkedBlob(where, at.hex, rows[0].bytes);
}

/**
 * The messages of a history chain, as walkHistoryChain reads them, with the
 * chunks fetched in one query (see prefetchChain) rather than one query a
 * chunk: a task of 10,000 steps has as many chunks.
 */
export async function readHistoryChain(
  client: pg.ClientBase,
  taskId: string,
  head: string | null,
  count: number,
  after?: HistoryMark,
): Promise<HistoryChainRead> {
  const fetched = head === null ? new Map<string, Buffer>() : await prefetchChain(client, head, count + 1, after?.head ?? null);
  return walkHistoryChain(
    (ref) => {
      const hex = parseBlobRef(ref)?.hex;
      const bytes = hex === undefined ? undefined : fetched.get(hex);
      return bytes === undefined ? readBlob(client, taskId, ref) : Promise.resolve(checkedBlob(`${taskId} (${ref})`, hex!, bytes));
    },
    taskId,
    head,
    count,
    after,
  );
}

/**
 * The chunks of a history chain by hex, from the one `head` names back
 * through `prev`, in one recursive query; it stops at `stopAt` (the chunk a
 * caller already holds) and after `limit` chunks. A chunk the server cannot
 * follow (not UTF-8 JSON, a `prev` that is no reference) ends it there: the
 * walk reads the rest one by one and reports what is wrong as it always did.
 */
async function prefetchChain(client: pg.ClientBase, head: string, limit: number, stopAt: string | null): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const at = parseBlobRef(head);
  if (!at) return out;
  const stop = stopAt === null ? null : (parseBlobRef(stopAt)?.hex ?? null);
  try {
    const { rows } = await client.query<{ hex: string; bytes: Buffer }>(
      `WITH RECURSIVE chain (hex, bytes, prev, n) AS (
         SELECT hex, bytes, substring(convert_from(bytes, 'UTF8')::json ->> 'prev' from '^sha256:([0-9a-f]{64})'), 1
           FROM waystation_blobs WHERE hex = $1
         UNION ALL
         SELECT b.hex, b.bytes, substring(convert_from(b.bytes, 'UTF8')::json ->> 'prev' from '^sha256:([0-9a-f]{64})'), c.n + 1
           FROM chain c JOIN waystation_blobs b ON b.hex = c.prev
          WHERE c.n < $2 AND c.hex IS DISTINCT FROM $3::text
       )
       SELECT hex, bytes FROM chain`,
      [at.hex, limit, stop],
    );
    for (const r of rows) out.set(r.hex, r.bytes);
  } catch (err) {
    // 22xxx, a data exception: a chunk is not text or not JSON. The walk finds it and names it.
    if (!pgCode(err)?.startsWith('22')) throw err;
  }
  return out;
}

/** A blob's bytes checked against the hash that names it, and parsed. */
function checkedBlob(where: string, hex: string, bytes: Buffer): BlobRead {
  if (createHash('sha256').update(bytes).digest('hex') !== hex)
    return {
      ok: false,
      problem: problem(where, 'invariant', 'the blob bytes do not hash to its name: they were changed after they were written'),
    };
  try {
    return { ok: true, value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return { ok: false, problem: problem(where, 'invalid-json', 'the blob is not JSON') };
  }
}

/** Events with id > afterId, oldest first. */
export async function readEvents(client: pg.ClientBase, taskId: string, afterId: number): Promise<TaskEvent[]> {
  const { rows } = await client.query<{ body: string }>(`SELECT body FROM waystation_events WHERE task_id = $1 AND id > $2 ORDER BY id`, [
    taskId,
    afterId,
  ]);
  return rows.map((r) => JSON.parse(r.body) as TaskEvent);
}
