/**
 * The API's errors as one list: the codes a client can receive, the HTTP
 * status of each, and the code of every error the services throw, mapped to
 * one of them.
 *
 * A service error is a class extending ServiceError, whose `code` must be a
 * key of `serviceErrorCodes`: an error class with a code that has no mapping
 * does not compile, and test/shared/api/error-codes.test.ts fails on an error
 * class under electron/ that extends Error without going through here. Codes
 * are matched as strings too, because a refusal crosses a process boundary
 * (a worker's outcome) as its code alone.
 */

/** Every code an API error can carry, as the client receives it. */
export const apiErrorCodes = [
  'invalid-input',
  'too-large',
  'not-found',
  'conflict',
  'read-only',
  'forbidden',
  'unavailable',
  'failed',
] as const;
export type ApiErrorCode = (typeof apiErrorCodes)[number];

/**
 * The HTTP status of each code.
 *
 * `unavailable` (422): the request is understood, but what it needs cannot be
 * had: the task's agent module is missing, throws on load or exports no
 * agent. Retrying changes nothing until the module is fixed, so it is not a
 * 5xx; the task was left untouched, so it is not a conflict.
 *
 * `too-large` (413): a request, or a part of it (an agent's options), over a
 * size limit; the message names the limit and what to send instead.
 */
export const apiErrorStatus = {
  'invalid-input': 400,
  forbidden: 403,
  'too-large': 413,
  'not-found': 404,
  conflict: 409,
  'read-only': 409,
  unavailable: 422,
  failed: 500,
} as const satisfies Record<ApiErrorCode, number>;

/** True for the codes of apiErrorCodes. */
export function isApiErrorCode(code: unknown): code is ApiErrorCode {
  return typeof code === 'string' && (apiErrorCodes as readonly string[]).includes(code);
}

/**
 * The code of every error a service throws, mapped to the API's code.
 *
 * The API's own codes map to themselves (a path refused outside the root is
 * `forbidden` from where it is thrown); the others are the runtime's, the
 * lease's, the store's, the agent loader's and the model provider's.
 */
export const serviceErrorCodes = {
  // The API's codes, thrown as they are.
  'invalid-input': 'invalid-input',
  'too-large': 'too-large',
  'not-found': 'not-found',
  conflict: 'conflict',
  'read-only': 'read-only',
  forbidden: 'forbidden',
  unavailable: 'unavailable',
  failed: 'failed',
  // The runtime's OperationError.
  exists: 'conflict',
  busy: 'conflict',
  'no-approval': 'conflict',
  halted: 'conflict',
  moved: 'conflict',
  'agent-mismatch': 'conflict',
  'agent-unavailable': 'unavailable',
  'future-schema': 'read-only',
  invalid: 'invalid-input',
  'unknown-step': 'not-found',
  unreadable: 'failed',
  /** The disk refused a write (full, read-only, no permission): the message names the file and what to do. */
  disk: 'failed',
  /** A worker that failed with anything but an OperationError (its stack went to its stderr). */
  internal: 'failed',
  // The lease.
  'lease-held': 'conflict',
  'lease-lost': 'conflict',
  // The store: TaskReadError, StoreWriteError.
  read: 'failed',
  io: 'failed',
  // A model call that failed for good, after its retries.
  llm: 'failed',
  // A PostgreSQL store that cannot be reached or used (server down, wrong password, schema missing or newer).
  database: 'unavailable',
} as const satisfies Record<string, ApiErrorCode>;
export type ServiceErrorCode = keyof typeof serviceErrorCodes;

/** True for the codes of serviceErrorCodes. */
export function isServiceErrorCode(code: unknown): code is ServiceErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(serviceErrorCodes, code);
}

/**
 * Node's error codes a service lets through, mapped: a file gone between a
 * listing and a read is the task not being there.
 */
const systemErrorCodes: Record<string, ApiErrorCode> = { ENOENT: 'not-found' };

/** The API code of whatever code an error carries; `failed` for none or an unknown one. */
export function apiCodeOf(code: unknown): ApiErrorCode {
  if (isServiceErrorCode(code)) return serviceErrorCodes[code];
  if (typeof code === 'string' && Object.prototype.hasOwnProperty.call(systemErrorCodes, code)) return systemErrorCodes[code];
  return 'failed';
}

/**
 * The base of every error a service throws on purpose: a sentence a human can
 * act on, and a code the API maps (see serviceErrorCodes).
 */
export abstract class ServiceError extends Error {
  abstract readonly code: ServiceErrorCode;
}

/** An error's message, for anything thrown: an Error's message, else the value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
