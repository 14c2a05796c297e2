/**
 * What kind of place a location argument names, as far as LangGraph is
 * concerned: a LangGraph SQLite checkpointer file, a PostgreSQL database with
 * LangGraph's checkpointer tables, or neither (and why not, in a sentence).
 *
 * Detection only reads: a file's first 16 bytes, then its table names from
 * an in-memory copy or a read-only open (see sqlite-rows.ts); a database's
 * catalog, in a read-only transaction.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { NotLangGraphError, SqliteRows } from './sqlite-rows.js';
import { isPostgresUrl, PostgresRows, redactUrl } from './postgres-rows.js';

export type LangGraphLocation =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string; locator: string }
  /** A directory: not LangGraph's, but maybe a Waystation checkpoint directory. */
  | { kind: 'directory'; dir: string }
  | { kind: 'neither'; reason: string };

const SQLITE_MAGIC = 'SQLite format 3\0';

/** Which kind of place `location` is; never throws, never writes. */
export async function detectLangGraph(location: string): Promise<LangGraphLocation> {
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
  const rows = new SqliteRows(file);
  try {
    await rows.changeMark();
    return { kind: 'sqlite', file };
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

async function detectPostgres(url: string): Promise<LangGraphLocation> {
  const rows = new PostgresRows(url);
  try {
    await rows.changeMark();
    return { kind: 'postgres', url, locator: redactUrl(url) };
  } catch (err) {
    return { kind: 'neither', reason: err instanceof Error ? err.message : String(err) };
  } finally {
    await rows.close();
  }
}
