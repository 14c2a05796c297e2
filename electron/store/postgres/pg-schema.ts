/**
 * The tables of a PostgreSQL store (docs/POSTGRES.md), and the migrations
 * that bring a database to the schema this build knows.
 *
 * The schema carries its own version (`waystation_meta.schema_version`).
 * Migrations are explicit: `waystation db init URL` (or the first write,
 * when allowed) applies them, each in its own transaction, and a database
 * whose schema is newer than this build opens read-only. A database holding
 * LangGraph's checkpointer tables is never given the schema (databaseKind).
 */
import type pg from 'pg';
import { PostgresStoreError } from './pg-errors.js';

/** One step from schema `version - 1` to `version`. */
export interface Migration {
  version: number;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE waystation_meta (
        key text PRIMARY KEY,
        value text NOT NULL
      );
      -- One row a task: the newest version's checkpoint (what a listing shows) and the counters saves advance.
      CREATE TABLE waystation_tasks (
        task_id text PRIMARY KEY,
        last_version integer NOT NULL,
        head text NOT NULL,
        last_event_id bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- A version is a full snapshot or a delta against the version before; the key is the commit point.
      CREATE TABLE waystation_versions (
        task_id text NOT NULL,
        version integer NOT NULL,
        kind text NOT NULL CHECK (kind IN ('full', 'delta')),
        body text NOT NULL,
        bytes integer NOT NULL,
        source text NOT NULL,
        updated_at text NOT NULL,
        writer text NOT NULL,
        PRIMARY KEY (task_id, version)
      );
      -- Content-addressed: the hex SHA-256 of the canonical JSON bytes names the blob.
      CREATE TABLE waystation_blobs (
        hex text PRIMARY KEY,
        bytes bytea NOT NULL
      );
      -- The lease: one row a task; a takeover or a release raises the generation, which saves are fenced by.
      CREATE TABLE waystation_leases (
        task_id text PRIMARY KEY,
        generation integer NOT NULL,
        entry text NOT NULL
      );
      CREATE TABLE waystation_events (
        task_id text NOT NULL,
        id bigint NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (task_id, id)
      );
      INSERT INTO waystation_meta (key, value) VALUES ('schema_version', '1');
    `,
  },
  {
    version: 2,
    sql: `
      -- A person's request that the current holding stop (stop-request.ts's fields, as JSON); cleared whenever the generation changes.
      ALTER TABLE waystation_leases ADD COLUMN stop_request text;
    `,
  },
  {
    version: 3,
    sql: `
      -- The version \`head\` holds: brought up to date every few saves (pg-writes.ts, HEAD_EVERY), not on every one; readers apply the deltas after it.
      ALTER TABLE waystation_tasks ADD COLUMN head_version integer;
      UPDATE waystation_tasks SET head_version = last_version;
      ALTER TABLE waystation_tasks ALTER COLUMN head_version SET NOT NULL;
    `,
  },
  {
    version: 4,
    sql: `
      -- The listing's fields of the newest version (pg-summary.ts), written by the transaction that commits it; NULL for a task
      -- too long to keep them in its row (the listing then reads its head and the deltas after it). A head that holds the newest
      -- version is a summary already.
      ALTER TABLE waystation_tasks ADD COLUMN summary text;
      UPDATE waystation_tasks SET summary = head WHERE head_version = last_version AND length(head) <= 65536;
      -- The megabytes of a long task's head and full snapshots are compressed with lz4 where the server has it: pglz took
      -- tens of milliseconds a megabyte, in the saving transaction. Values written before keep theirs; both read the same.
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
          ALTER TABLE waystation_tasks ALTER COLUMN head SET COMPRESSION lz4;
          ALTER TABLE waystation_versions ALTER COLUMN body SET COMPRESSION lz4;
        END IF;
      END
      $$;
    `,
  },
  {
    version: 5,
    sql: `
      -- A version's commit in one statement, so a save is one trip to the server instead of six (pg-writes.ts): the fence
      -- (the lease row's generation, under a share lock, when the save holds a lease), the blobs, the version's row, the task
      -- row brought up to it, and its \`version\` event. Any refusal ends the statement, and with it everything it wrote:
      -- WSL01 the lease was taken over or let go; WSC01 the task row is not at the version before (another writer's save);
      -- a second row for (task, version) fails the key (23505).
      CREATE FUNCTION waystation_commit_version(
        p_task text, p_version integer, p_kind text, p_body text, p_bytes integer, p_source text, p_updated_at text,
        p_writer text, p_summary text, p_head text, p_blob_hex text[], p_blob_bytes bytea[], p_generation integer,
        p_event_at text
      ) RETURNS void LANGUAGE plpgsql AS $fn$
      DECLARE
        held integer;
        event_id bigint;
      BEGIN
        IF p_generation IS NOT NULL THEN
          SELECT generation INTO held FROM waystation_leases WHERE task_id = p_task FOR SHARE;
          IF held IS DISTINCT FROM p_generation THEN
            RAISE EXCEPTION 'the lease of % is no longer the saving runner''s', p_task USING ERRCODE = 'WSL01';
          END IF;
        END IF;
        IF cardinality(p_blob_hex) > 0 THEN
          INSERT INTO waystation_blobs (hex, bytes) SELECT * FROM unnest(p_blob_hex, p_blob_bytes) ON CONFLICT (hex) DO NOTHING;
        END IF;
        INSERT INTO waystation_versions (task_id, version, kind, body, bytes, source, updated_at, writer)
          VALUES (p_task, p_version, p_kind, p_body, p_bytes, p_source, p_updated_at, p_writer);
        IF p_version = 1 THEN
          INSERT INTO waystation_tasks (task_id, last_version, head, head_version, summary, last_event_id)
            VALUES (p_task, 1, p_head, 1, p_summary, 1) RETURNING last_event_id INTO event_id;
        ELSIF p_head IS NULL THEN
          UPDATE waystation_tasks SET last_version = p_version, summary = p_summary, last_event_id = last_event_id + 1
            WHERE task_id = p_task AND last_version = p_version - 1 RETURNING last_event_id INTO event_id;
        ELSE
          UPDATE waystation_tasks SET last_version = p_version, summary = p_summary, last_event_id = last_event_id + 1,
              head = p_head, head_version = p_version
            WHERE task_id = p_task AND last_version = p_version - 1 RETURNING last_event_id INTO event_id;
        END IF;
        IF event_id IS NULL THEN
          RAISE EXCEPTION 'task % is not at version %', p_task, p_version - 1 USING ERRCODE = 'WSC01';
        END IF;
        INSERT INTO waystation_events (task_id, id, body) VALUES (p_task, event_id,
          json_build_object('id', event_id, 'task_id', p_task, 'type', 'version', 'version', p_version, 'at', p_event_at)::text);
      END
      $fn$;
    `,
  },
  {
    version: 6,
    sql: `
      -- The listing reads the tasks in the order of their ids' bytes (COLLATE "C", a directory's order) through a cursor
      -- (pg-reads.ts). Without an index in that order the server sorted every row, summaries and all, before it sent the
      -- first (10,000 tasks: 12 MB sorted on disk, the first row after 43 ms); with it the rows leave as they are read.
      CREATE INDEX waystation_tasks_listing_order ON waystation_tasks (task_id COLLATE "C");
    `,
  },
];

/** The schema version this build reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** The channel each commit notifies, with the task id as payload. */
export const CHANGES_CHANNEL = 'waystation_changes';

/**
 * The tables LangGraph's PostgresSaver creates (JavaScript's and Python's alike). Waystation reads a database that
 * holds them as a LangGraph source (electron/sources/langgraph/postgres-rows.ts), and never creates its own schema
 * beside them.
 */
export const LANGGRAPH_TABLES = ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations'] as const;

/** What a database holds: Waystation's schema (its version, 0 for none) and which of LangGraph's tables. */
export interface DatabaseHolds {
  version: number;
  langgraph: string[];
}

/**
 * What a database is, by what it holds: the one rule the store (before creating its schema) and the detection of a
 * location (electron/sources/detect-location.ts) both follow.
 *
 * A database with any of LangGraph's checkpointer tables and no Waystation schema is LangGraph's: it is read as a
 * source and never written to as a store. One with both (Waystation's schema created beside LangGraph's tables by an
 * earlier build, or LangGraph's `setup()` run on a Waystation store) is opened as the Waystation store, and the
 * reading commands say that the threads are there too and not shown.
 */
export function databaseKind(h: DatabaseHolds): 'waystation' | 'langgraph' | 'both' | 'empty' {
  if (h.version === 0) return h.langgraph.length > 0 ? 'langgraph' : 'empty';
  return h.langgraph.length > 0 ? 'both' : 'waystation';
}

/** What the database holds (see databaseKind): one query, two when it has Waystation's schema; reads only. */
export async function readDatabaseHolds(client: pg.ClientBase): Promise<DatabaseHolds> {
  // Resolved through the search path, as the unqualified names of both schemas' own statements are.
  const tables = await client.query<{ meta: string | null; langgraph: string[] }>(
    `SELECT to_regclass('waystation_meta')::text AS meta,
            ARRAY(SELECT t FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i) WHERE to_regclass(t) IS NOT NULL ORDER BY i) AS langgraph`,
    [LANGGRAPH_TABLES],
  );
  const { meta, langgraph } = tables.rows[0];
  if (!meta) return { version: 0, langgraph };
  const row = await client.query<{ value: string }>(`SELECT value FROM waystation_meta WHERE key = 'schema_version'`);
  const n = Number(row.rows[0]?.value);
  return { version: Number.isInteger(n) && n > 0 ? n : 0, langgraph };
}

/** The schema version of the database, or 0 when it has no Waystation schema. */
export async function readSchemaVersion(client: pg.ClientBase): Promise<number> {
  return (await readDatabaseHolds(client)).version;
}

/**
 * Bring the database to SCHEMA_VERSION; returns the versions before and after.
 *
 * Each migration runs in a transaction holding an advisory lock, so two
 * processes initialising one database at once apply each step once.
 * `upTo` stops earlier (tests migrate from every earlier version).
 */
export async function migrate(client: pg.ClientBase, shown: string, upTo = SCHEMA_VERSION): Promise<{ from: number; to: number }> {
  await client.query('SELECT pg_advisory_lock(hashtext($1))', ['waystation-migrate']);
  try {
    const holds = await readDatabaseHolds(client);
    // Checked under the lock, before the first CREATE: a LangGraph database is left as it was, not a row added.
    if (databaseKind(holds) === 'langgraph') throw new LangGraphDatabaseError(shown, holds.langgraph, 'write');
    const from = holds.version;
    if (from > SCHEMA_VERSION) throw newerSchema(shown, from);
    for (const m of MIGRATIONS) {
      if (m.version <= from || m.version > upTo) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(`UPDATE waystation_meta SET value = $1 WHERE key = 'schema_version'`, [String(m.version)]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
    return { from, to: await readSchemaVersion(client) };
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['waystation-migrate']).catch(() => undefined);
  }
}

export function missingSchema(shown: string): PostgresStoreError {
  return new PostgresStoreError(
    'schema-missing',
    `the database ${shown} has no Waystation schema: run \`waystation db init ${shown}\` to create it. Nothing was read or written.`,
  );
}

/**
 * The refusal of a LangGraph checkpointer database (see databaseKind) where a Waystation store is needed: to create
 * the schema in it (`write`), or to read Waystation's tasks from it (`read`). It names no `db init`: that is what
 * must not happen there.
 */
export class LangGraphDatabaseError extends PostgresStoreError {
  constructor(
    shown: string,
    readonly tables: readonly string[],
    attempt: 'read' | 'write',
  ) {
    super(
      'schema-missing',
      `${shown} is a LangGraph checkpointer database (it has LangGraph's ${tables.join(', ')} and no Waystation schema): ` +
        'Waystation reads its threads (ls, show, history, diff, result, serve) but keeps its own tasks in a database of ' +
        'their own or a checkpoint directory, so it does not create its tables here. ' +
        (attempt === 'write' ? 'Nothing was written.' : 'Nothing was read or written.'),
    );
  }
}

export function newerSchema(shown: string, found: number): PostgresStoreError {
  return new PostgresStoreError(
    'schema-newer',
    `the database ${shown} has Waystation schema version ${found}, newer than this build knows (${SCHEMA_VERSION}): it is opened read-only; upgrade Waystation to write to it. Nothing was written.`,
  );
}

export function olderSchema(shown: string, found: number): PostgresStoreError {
  return new PostgresStoreError(
    'schema-missing',
    `the database ${shown} has Waystation schema version ${found}, older than this build's ${SCHEMA_VERSION}: run \`waystation db init ${shown}\` to migrate it. Nothing was written.`,
  );
}
