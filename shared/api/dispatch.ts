/**
 * The one place where a raw request becomes a service call.
 *
 * Both transports (IPC handlers in the main process, the loopback HTTP host)
 * hand untrusted input here: the method name is checked against the contract,
 * the input is validated with its zod schema, and any failure comes back as an
 * ApiError with a code the transport can map to its own status.
 */
import { ApiError, apiInputs, parseApiInput } from './contract.js';
import type { ApiErrorBody, ApiMethod, ApiOutputs, WaystationService } from './contract.js';

/** True for the names of the contract's methods, and nothing inherited (`constructor`, `__proto__`). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(apiInputs, name);
}

const errorCodes = new Set<ApiErrorBody['error']['code']>(['invalid-input', 'not-found', 'conflict', 'read-only', 'forbidden', 'failed']);

/**
 * The `code` of store and runtime errors, mapped to the contract's codes.
 * Matched by string so this module stays free of Node-side imports.
 */
const serviceCodes: Record<string, ApiErrorBody['error']['code']> = {
  // The runtime's OperationError.
  exists: 'conflict',
  busy: 'conflict',
  'no-approval': 'conflict',
  halted: 'conflict',
  moved: 'conflict',
  'agent-mismatch': 'conflict',
  'future-schema': 'read-only',
  invalid: 'invalid-input',
  'unknown-step': 'not-found',
  unreadable: 'failed',
  // The lease.
  'lease-held': 'conflict',
  'lease-lost': 'conflict',
  // The store: TaskReadError, StoreWriteError.
  read: 'failed',
  io: 'failed',
  // Node.
  ENOENT: 'not-found',
};

/**
 * Turn anything a service threw into an ApiError.
 *
 * Store and runtime errors carry a `code` (`conflict`, `read-only`, `busy`,
 * ...): codes the contract knows pass through, the others are mapped (a
 * store's `problems` become issues), and anything else is `failed` with the
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
    if (typeof code === 'string' && errorCodes.has(code as ApiErrorBody['error']['code'])) {
      return new ApiError(code as ApiErrorBody['error']['code'], err.message, issues);
    }
    const mapped = typeof code === 'string' && Object.prototype.hasOwnProperty.call(serviceCodes, code) ? serviceCodes[code] : 'failed';
    return new ApiError(mapped, err.message || 'the request failed', issues);
  }
  return new ApiError('failed', typeof err === 'string' && err ? err : 'the request failed');
}

/** The HTTP status that goes with an error code. */
export function httpStatusOf(code: ApiErrorBody['error']['code']): number {
  switch (code) {
    case 'invalid-input':
      return 400;
    case 'forbidden':
      return 403;
    case 'not-found':
      return 404;
    case 'conflict':
    case 'read-only':
      return 409;
    default:
      return 500;
  }
}

/**
 * Validate and run one API call.
 *
 * @param service the serving side (the host service, or a fake in tests)
 * @param method  the method name as received; unknown names are refused
 * @param rawInput the input as received; validated with the method's schema
 * @returns what the service returned; throws ApiError on any failure
 */
export async function dispatch<M extends ApiMethod>(service: WaystationService, method: M, rawInput: unknown): Promise<ApiOutputs[M]>;
export async function dispatch(service: WaystationService, method: string, rawInput: unknown): Promise<unknown>;
export async function dispatch(service: WaystationService, method: string, rawInput: unknown): Promise<unknown> {
  if (!isApiMethod(method)) throw new ApiError('not-found', `there is no API method named ${JSON.stringify(method).slice(0, 80)}`);
  const input = parseApiInput(method, rawInput);
  try {
    const handler = service[method] as (input: unknown) => Promise<unknown>;
    return await handler.call(service, input);
  } catch (err) {
    throw asServiceError(err);
  }
}
