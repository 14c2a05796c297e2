/**
 * What can go wrong between Waystation and a PostgreSQL server, as errors a
 * person can act on. Each says which database (its URL without the
 * password), what happened, and what was left untouched.
 */
import { ServiceError } from '../../../shared/api/error-codes.js';
import { redactSecret } from './redact-url.js';

export type PostgresFault =
  'unreachable' | 'auth' | 'permission' | 'database-missing' | 'schema-missing' | 'schema-newer' | 'connection-lost' | 'timeout' | 'server';

/** The faults that mean the server could not be had for a while (down, out of reach, too slow): trying again later may succeed. */
export const OUT_OF_REACH: ReadonlySet<PostgresFault> = new Set(['unreachable', 'connection-lost', 'timeout']);

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

/**
 * A save cut off by a dropped connection and learnt, on a new connection, not
 * to be stored (pg-writes.ts): nothing was written, and the server answered
 * since, so what follows may go on at once.
 */
export class NotCommittedError extends PostgresStoreError {
  constructor(message: string) {
    super('connection-lost', message);
  }
}

/**
 * A save cut off by a dropped connection whose outcome could not be learnt
 * since (the server out of reach): the version may or may not be stored
 * (pg-writes.ts). One learnt not to be stored is a NotCommittedError, and one
 * stored is no error at all.
 */
export class CommitUnknownError extends PostgresStoreError {
  constructor(message: string) {
    super('connection-lost', message);
  }
}

/**
 * The server asked for a password and none was to be had (not in the URL,
 * PGPASSWORD or the password file): thrown by the driver's password lookup
 * (pg-client.ts) instead of handing the server no password, which the driver
 * answers with an error of its own and leaves the half-done login open until
 * the server times it out.
 */
export class PasswordMissingError extends PostgresStoreError {
  constructor(
    /** Why the password file was not read, if it was there: said to the person, who may fix that instead. */
    readonly passFileNote: string | null,
  ) {
    super('auth', `the server asks for a password and none was given${passFileNote ? ` (${passFileNote})` : ''}`);
  }
}

/**
 * A PostgreSQL URL that does not parse: bad input, refused before anything
 * is connected. Said without the URL's user part (`shown`), since the
 * password is what most often breaks it.
 */
export class PostgresUrlError extends ServiceError {
  readonly code = 'invalid-input';
  constructor(readonly shown: string) {
    super(
      `cannot parse the PostgreSQL URL ${shown}: if the password holds characters such as @ : / ? # % or a space, ` +
        'percent-encode them in the URL (@ is %40, : is %3A, / is %2F, # is %23, % is %25), or leave the password out of the URL ' +
        'and give it in PGPASSWORD or ~/.pgpass. Nothing was read or written.',
    );
  }
}

/** The driver's error code (SQLSTATE or a Node socket code), if any. */
export function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/**
 * What node-postgres says when it had no password to give the server (pg
 * 8.23, SCRAM): our lookup (pg-client.ts) throws first, but a client made
 * without it says this.
 */
const CLIENT_NO_PASSWORD = /client password must be a (non-empty )?string/;

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
  if (err instanceof PasswordMissingError || (err instanceof Error && CLIENT_NO_PASSWORD.test(err.message)))
    return new PostgresStoreError(
      'auth',
      `the PostgreSQL server of ${shown} refused the login (it asks for a password, and none was given${
        err instanceof PasswordMissingError && err.passFileNote ? `; ${err.passFileNote}` : ''
      }): check the user and the password (in the URL, PGPASSWORD or ~/.pgpass). Nothing was read or written.`,
    );
  // Already said in Waystation's words (a URL that does not parse, a fault named further down).
  if (err instanceof ServiceError) return err;
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
  // 42501: no right on a schema, table or function; 3F000: no schema on the search path the role may use.
  if (code === '3F000' || (code === '42501' && /\bschema\b/.test(said)))
    return new PostgresStoreError(
      'permission',
      `the PostgreSQL server of ${shown} refused a statement: the role may not create Waystation's tables there (${said}). Run ` +
        `\`waystation db init ${shown}\` as the database's owner, or have it grant this role CREATE on the schema (docs/POSTGRES.md, Errors). ` +
        'The statement was refused before it changed anything.',
    );
  if (code === '42501')
    return new PostgresStoreError(
      'permission',
      `the PostgreSQL server of ${shown} refused a statement: the role has no right to Waystation's tables (${said}). Use the role that ` +
        'ran `waystation db init` there (it owns them), or have that role grant this one the rights docs/POSTGRES.md lists under Errors. ' +
        'The statement was refused before it changed anything.',
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
