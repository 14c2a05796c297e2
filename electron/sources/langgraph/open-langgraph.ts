/**
 * Opening a LangGraph checkpointer as a Waystation source: a SQLite file or a
 * `postgres://` URL whose database holds LangGraph's tables.
 */
import { detectLangGraph } from './detect-langgraph.js';
import { LangGraphSource } from './langgraph-source.js';
import { PostgresRows } from './postgres-rows.js';
import { SqliteRows } from './sqlite-rows.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

export { detectLangGraph, type LangGraphLocation } from './detect-langgraph.js';

/** Raised when a location is no LangGraph checkpointer; the message says what it is instead. */
export class NotLangGraphLocation extends ServiceError {
  readonly code = 'not-found' as const;
}

/**
 * Open `location` as a LangGraph source, read-only; NotLangGraphLocation
 * (with the reason) when it is not one. A directory is not one either: it is
 * for the checkpoint directory store.
 */
export async function openLangGraphSource(location: string): Promise<LangGraphSource> {
  const found = await detectLangGraph(location);
  if (found.kind === 'sqlite') return new LangGraphSource(new SqliteRows(found.file));
  if (found.kind === 'postgres') return new LangGraphSource(new PostgresRows(found.url));
  throw new NotLangGraphLocation(
    found.kind === 'directory' ? `${location} is a directory, not a LangGraph checkpointer file or database` : found.reason,
  );
}
