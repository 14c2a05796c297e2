/**
 * The tables of a PostgreSQL store (docs/POSTGRES.md), and the migrations
 * that bring a database to the schema this build knows.
 *
 * The schema carries its own version (`waystation_meta.schema_version`).
 * Migrations are explicit: `waystation db init URL` (or the first write,
 * when allowed) applies them, each in its own transaction, and a database
 * whose schema is newer than this build opens read-only.
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
];

/** The schema version this build reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** The channel each commit notifies, with the task id as payload. */
export const CHANGES_CHANNEL = 'waystation_changes';

/** The schema version of the database, or 0 when it has no Waystation schema. */
export async function readSchemaVersion(client: pg.ClientBase): Promise<number> {
  const table = await client.query<{ t: string | null }>(`SELECT to_regclass('waystation_meta')::text AS t`);
  if (!table.rows[0]?.t) return 0;
  const row = await client.query<{ value: string }>(`SELECT value FROM waystation_meta WHERE key = 'schema_version'`);
  const n = Number(row.rows[0]?.value);
  return Number.isInteger(n) && n > 0 ? n : 0;
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
    const from = await readSchemaVersion(client);
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
