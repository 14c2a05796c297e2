/**
 * What can go wrong between Waystation and a PostgreSQL server, as errors a
 * person can act on. Each says which database (its URL without the
 * password), what happened, and what was left untouched.
 */
import { ServiceError } from '../../../shared/api/error-codes.js';
import { redactSecret } from './redact-url.js';

export type PostgresFault =
  'unreachable' | 'auth' | 'database-missing' | 'schema-missing' | 'schema-newer' | 'connection-lost' | 'timeout' | 'server';

/** A fault of the database connection or its schema; `fault` says which. */
export class PostgresStoreError extends ServiceError {
  readonly code = 'database';
  constructor(
    readonly fault: PostgresFault,
    message: string,
  ) {
    super(message);
  }
}

/** The driver's error code (SQLSTATE or a Node socket code), if any. */
export function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004']);

/** Whether an error means the connection went away (so a statement's outcome is unknown). */
export function isConnectionLost(err: unknown): boolean {
  const code = pgCode(err);
  if (code && LOST_CODES.has(code)) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /Connection terminated|connection .*closed|Client has encountered a connection error|not queryable/i.test(message);
}

/**
 * A driver error turned into a PostgresStoreError naming `shown` (the URL
 * without its password), or the error itself when it is about the data.
 */
export function mapConnectError(err: unknown, shown: string, password?: string): Error {
  const code = pgCode(err);
  const said = redactSecret(err instanceof Error ? err.message : String(err), password);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ETIMEDOUT' || code === 'ENOENT')
    return new PostgresStoreError(
      'unreachable',
      `cannot reach the PostgreSQL server of ${shown} (${code}): is it running, and are the host and port right? Nothing was read or written.`,
    );
  if (code === '28P01' || code === '28000')
    return new PostgresStoreError(
      'auth',
      `the PostgreSQL server of ${shown} refused the login (${said}): check the user and the password (in the URL, PGPASSWORD or ~/.pgpass). Nothing was read or written.`,
    );
  if (code === '3D000')
    return new PostgresStoreError(
      'database-missing',
      `the database of ${shown} does not exist: create it (createdb), then run \`waystation db init ${shown}\`. Nothing was read or written.`,
    );
  if (code === '57014')
    return new PostgresStoreError(
      'timeout',
      `a statement on ${shown} ran past the statement timeout and was cancelled; nothing of it was written.`,
    );
  if (/timeout expired|Connection terminated due to connection timeout/i.test(said))
    return new PostgresStoreError('unreachable', `the PostgreSQL server of ${shown} did not answer in time; nothing was read or written.`);
  if (isConnectionLost(err)) return new PostgresStoreError('connection-lost', `the connection to ${shown} was lost (${said}).`);
  if (err instanceof Error) {
    err.message = redactSecret(err.message, password);
    return err;
  }
  return new Error(said);
}
