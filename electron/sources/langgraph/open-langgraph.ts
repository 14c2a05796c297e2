/**
 * Opening a LangGraph checkpointer as a Waystation source: a SQLite file or a
 * `postgres://` URL whose database holds LangGraph's tables.
 */
import { detectLocation, type DetectedLocation } from '../detect-location.js';
import { LangGraphSource } from './langgraph-source.js';
import { PostgresRows } from './postgres-rows.js';
import { LANGGRAPH_TABLES } from '../../store/postgres/pg-schema.js';
import { redactUrl } from '../../store/postgres/redact-url.js';
import { SqliteRows } from './sqlite-rows.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** Raised when a location is no LangGraph checkpointer; the message says what it is instead. */
export class NotLangGraphLocation extends ServiceError {
  readonly code = 'not-found' as const;
}

/**
 * Open `location` as a LangGraph source, read-only; NotLangGraphLocation
 * (with the reason) when it is not one. `detected`: what detectLocation
 * found it to be, when the caller asked already.
 */
export async function openLangGraphSource(location: string, detected?: DetectedLocation): Promise<LangGraphSource> {
  const found = detected ?? (await detectLocation(location));
  if (found.kind === 'langgraph-sqlite') return new LangGraphSource(new SqliteRows(found.file));
  if (found.kind === 'langgraph-postgres') return new LangGraphSource(new PostgresRows(found.url));
  if (found.kind === 'neither') throw new NotLangGraphLocation(found.reason);
  if (found.kind === 'directory')
    throw new NotLangGraphLocation(`${location} is a directory, not a LangGraph checkpointer file or database`);
  // A database that could not be asked: the read says why (cannot connect, no such database).
  if (found.holds === 'unknown') return new LangGraphSource(new PostgresRows(found.url));
  const shown = redactUrl(found.url);
  throw new NotLangGraphLocation(
    found.holds === 'waystation'
      ? `the database at ${shown} holds a Waystation store, not LangGraph's checkpointer tables`
      : found.holds === 'waystation-and-langgraph'
        ? `the database at ${shown} holds a Waystation store beside LangGraph's checkpointer tables: it is opened as the Waystation store (docs/POSTGRES.md, "A LangGraph database")`
        : `the database at ${shown} has none of LangGraph's checkpointer tables (${LANGGRAPH_TABLES.join(', ')}): it is not a LangGraph checkpointer database`,
  );
}
