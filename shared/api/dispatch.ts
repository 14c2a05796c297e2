/**
 * The one place where a raw request becomes a service call.
 *
 * Both transports (IPC handlers in the main process, the loopback HTTP host)
 * hand untrusted input here: the method name is checked against the contract,
 * the input is validated with its zod schema, and any failure comes back as an
 * ApiError with a code the transport can map to its own status.
 */
import { apiInputs, parseApiInput } from './contract.js';
import { ApiError } from './api-error.js';
import type { ApiMethod, ApiOutputs, WaystationService } from './contract.js';
import { apiOutputIssues, outputChecksEnabled } from './api-outputs.js';
import { apiCodeOf, apiErrorStatus, type ApiErrorCode } from './error-codes.js';

/** True for the names of the contract's methods, and nothing inherited (`constructor`, `__proto__`). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(apiInputs, name);
}

/**
 * Turn anything a service threw into an ApiError.
 *
 * Service errors carry a `code` (`conflict`, `read-only`, `busy`,
 * `agent-unavailable`, ...), mapped to the API's codes by serviceErrorCodes
 * (a store's `problems` become issues); anything else is `failed` with the
 * original message, so the renderer always has a sentence to show.
 */
export function asServiceError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const problems = (err as { problems?: unknown }).problems;
    const issues = Array.isArray(problems)
      ? problems.map((p) =>
          p && typeof p === 'object' ? `${(p as { file?: string }).file ?? ''}: ${(p as { message?: string }).message ?? ''}` : String(p),
        )
      : [];
    return new ApiError(apiCodeOf(code), err.message || 'the request failed', issues);
  }
  return new ApiError('failed', typeof err === 'string' && err ? err : 'the request failed');
}

/** The HTTP status that goes with an error code (see apiErrorStatus). */
export function httpStatusOf(code: ApiErrorCode): number {
  return apiErrorStatus[code] ?? 500;
}

/**
 * Validate and run one API call.
 *
 * @param service the serving side (the host service, or a fake in tests)
 * @param method  the method name as received; unknown names are refused
 * @param rawInput the input as received; validated with the method's schema
 * @param checkOutputs check the answer against apiOutputs (default: outputChecksEnabled())
 * @returns what the service returned; throws ApiError on any failure
 */
export async function dispatch<M extends ApiMethod>(
  service: WaystationService,
  method: M,
  rawInput: unknown,
  checkOutputs?: boolean,
): Promise<ApiOutputs[M]>;
export async function dispatch(service: WaystationService, method: string, rawInput: unknown, checkOutputs?: boolean): Promise<unknown>;
export async function dispatch(service: WaystationService, method: string, rawInput: unknown, checkOutputs?: boolean): Promise<unknown> {
  if (!isApiMethod(method)) throw new ApiError('not-found', `there is no API method named ${JSON.stringify(method).slice(0, 80)}`);
  const input = parseApiInput(method, rawInput);
  let output: unknown;
  try {
    const handler = service[method] as (input: unknown) => Promise<unknown>;
    output = await handler.call(service, input);
  } catch (err) {
    throw asServiceError(err);
  }
  if (checkOutputs ?? outputChecksEnabled()) {
    const issues = apiOutputIssues(method, output);
    // The host's own mistake, not the caller's: said as such, with what does not fit.
    if (issues.length > 0)
      throw new ApiError(
        'failed',
        `the host answered ${method} with a value the API contract does not allow: ${issues.slice(0, 5).join('; ')}`,
        issues,
      );
  }
  return output;
}
