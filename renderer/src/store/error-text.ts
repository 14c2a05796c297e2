import { toApiError } from '../../../shared/api/api-error.js';

/** A sentence for the UI from anything a call rejected with, whichever transport: the host's own message. */
export function errorText(err: unknown): string {
  return toApiError(err).message;
}

/** The per-field issues of an invalid-input error, or the message alone. */
export function errorIssues(err: unknown): string[] {
  const e = toApiError(err);
  return e.issues.length > 0 ? e.issues : [e.message];
}
