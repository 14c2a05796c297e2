/**
 * How the API reports a failure: a code of apiErrorCodes, a sentence, and the
 * issues behind it. Apart from the contract's schemas (contract.ts), so that
 * the page can tell its errors without loading zod first.
 */
import { isApiErrorCode, ServiceError, type ApiErrorCode } from './error-codes.js';

/** A failure the renderer can show as is: what went wrong and what was left untouched. */
export interface ApiErrorBody {
  /** `code` is one of apiErrorCodes (shared/api/error-codes.ts), which also gives its HTTP status. */
  error: { code: ApiErrorCode; message: string; issues?: string[] };
}

/** An error as the API sends it: a code of apiErrorCodes, a sentence, and the issues behind it, if any. */
export class ApiError extends ServiceError {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly issues: string[] = [],
  ) {
    super(message);
  }
  toBody(): ApiErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.issues.length ? { issues: this.issues } : {}) } };
  }
}

/**
 * Normalise whatever a call rejected with into an ApiError.
 *
 * Across Electron's contextBridge a thrown class instance arrives as a plain
 * object or a bare Error, so the renderer's catch blocks pass the reason
 * through this to get `code` and `message` back whichever transport failed.
 */
export function toApiError(reason: unknown): ApiError {
  if (reason instanceof ApiError) return reason;
  if (reason !== null && typeof reason === 'object') {
    const r = reason as { code?: unknown; message?: unknown; issues?: unknown; error?: unknown };
    // An ApiErrorBody as the HTTP host sends it.
    if (r.error && typeof r.error === 'object' && !(reason instanceof Error)) return toApiError(r.error);
    const code = isApiErrorCode(r.code) ? r.code : 'failed';
    const message = typeof r.message === 'string' && r.message ? r.message : 'the request failed';
    const issues = Array.isArray(r.issues) ? r.issues.filter((i): i is string => typeof i === 'string') : [];
    return new ApiError(code, message, issues);
  }
  return new ApiError('failed', typeof reason === 'string' && reason ? reason : 'the request failed');
}
