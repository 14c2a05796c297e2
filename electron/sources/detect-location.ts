/**
 * What a location argument names, so each is opened by what reads it: a
 * Waystation checkpoint directory, a Waystation store in PostgreSQL, a
 * LangGraph SQLite checkpointer file, a PostgreSQL database holding
 * LangGraph's checkpointer tables, or none of these (and why, in a sentence).
 *
 * Detection only reads: a file's first 16 bytes, then its table names from a
 * read-only open (langgraph/sqlite-rows.ts); a database's catalog, over a
 * connection opened read-only.
 *
 * The SQLite reader and the PostgreSQL client are imported only when a
 * location needs them: a directory, what most commands are given, is told by
 * one stat, and the CLI's start-up should not pay for either.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { isPostgresUrl } from '../store/postgres/redact-url.js';
import { loadPgDriver } from '../store/postgres/pg-driver.js';
import { databaseKind, readDatabaseHolds } from '../store/postgres/pg-schema.js';

export type DetectedLocation =
  /** A folder: a Waystation checkpoint directory (its path, resolved). */
  | { kind: 'directory'; dir: string }
  /**
   * A database for Waystation's store: it holds Waystation's tables (and
   * LangGraph's beside them: `waystation-and-langgraph`, whose threads are
   * then not shown), or no one's yet, or it could not be asked (the store
   * then says why, in its own words, without the password).
   */
  | { kind: 'postgres-store'; url: string; holds: 'waystation' | 'waystation-and-langgraph' | 'nothing' | 'unknown' }
  | { kind: 'langgraph-sqlite'; file: string }
  | { kind: 'langgraph-postgres'; url: string }
  | { kind: 'neither'; reason: string };

const SQLITE_MAGIC = 'SQLite format 3\0';

/** Which kind of place `location` is; never throws, never writes. */
export async function detectLocation(location: string): Promise<DetectedLocation> {
  if (isPostgresUrl(location)) return detectPostgres(location);
  const file = path.resolve(location);
  const stats = await fs.stat(file).catch(() => null);
  if (!stats) return { kind: 'neither', reason: `${location}: no such directory or file` };
  if (stats.isDirectory()) return { kind: 'directory', dir: file };
  if (!stats.isFile()) return { kind: 'neither', reason: `${location} is neither a file nor a directory` };
  const head = Buffer.alloc(16);
  const handle = await fs.open(file, 'r').catch((err: NodeJS.ErrnoException) => err);
  if (!('read' in handle)) return { kind: 'neither', reason: `${location} cannot be read (${handle.code ?? handle.message})` };
  try {
    await handle.read(head, 0, 16, 0);
  } finally {
    await handle.close();
  }
  if (head.toString('latin1') !== SQLITE_MAGIC) {
    return {
      kind: 'neither',
      reason: `${location} is not a checkpoint directory, nor an SQLite database (a LangGraph SQLite checkpointer file)`,
    };
  }
  const { NotLangGraphError, SqliteRows } = await import('./langgraph/sqlite-rows.js');
  const rows = new SqliteRows(file);
  try {
    await rows.changeMark();
    return { kind: 'langgraph-sqlite', file };
  } catch (err) {
    const why =
      err instanceof NotLangGraphError
        ? err.message
        : `${location} cannot be opened as SQLite: ${err instanceof Error ? err.message : String(err)}`;
    return { kind: 'neither', reason: `${why}; it is not a LangGraph checkpointer file` };
  } finally {
    await rows.close();
  }
}

/**
 * A database is told apart by the store's own rule (pg-schema.ts,
 * databaseKind): LangGraph's when it holds LangGraph's checkpointer tables
 * and no Waystation schema; a database holding both is opened as Waystation's
 * store. A database that cannot be reached is left to the store, which says
 * why in its own words (without the password).
 */
async function detectPostgres(url: string): Promise<DetectedLocation> {
  const client = new (loadPgDriver().Client)({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    application_name: 'waystation (detect)',
    options: '-c default_transaction_read_only=on',
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const kind = databaseKind(await readDatabaseHolds(client));
    if (kind === 'langgraph') return { kind: 'langgraph-postgres', url };
    return {
      kind: 'postgres-store',
      url,
      holds: kind === 'both' ? 'waystation-and-langgraph' : kind === 'waystation' ? 'waystation' : 'nothing',
    };
  } catch {
    return { kind: 'postgres-store', url, holds: 'unknown' };
  } finally {
    await client.end().catch(() => {});
  }
}
