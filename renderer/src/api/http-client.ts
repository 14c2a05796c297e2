/**
 * The WaystationApi over the loopback host: JSON RPC over HTTP, events over SSE.
 *
 * Browser mode only; inside Electron the preload's `window.waystation` is used
 * instead (see pick-api.ts). The token comes from the page URL, is sent as a
 * bearer header on every call, and as `?token=` on the event stream because
 * EventSource cannot send headers.
 */
import { ApiError, HostEventSchema, apiMethods } from '../../../shared/api/contract.js';
import { isApiErrorCode } from '../../../shared/api/error-codes.js';
import type {
  ApiErrorBody,
  ApiInput,
  ApiMethod,
  ApiOutputs,
  HostEvent,
  HostEventListener,
  StreamStatus,
  WaystationApi,
} from '../../../shared/api/contract.js';

/** The first reconnect comes this soon after a drop; each failed one doubles the wait, up to the maximum. */
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

export interface HttpApiOptions {
  /** Origin and path prefix of the host, e.g. `http://127.0.0.1:4123`. */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  /** Injected in tests; defaults to the global EventSource. */
  EventSource?: typeof EventSource;
}

/**
 * Build the HTTP + SSE implementation of the API.
 *
 * Errors from the host come back as `ApiError` with its code and issues, so
 * the UI shows the host's own sentence; a dropped connection becomes an
 * ApiError('failed') that says the host could not be reached.
 */
export function createHttpApi(options: HttpApiOptions): WaystationApi {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  async function call<M extends ApiMethod>(method: M, input: ApiInput<M>): Promise<ApiOutputs[M]> {
    let response: Response;
    try {
      response = await doFetch(`${base}/api/rpc/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
        body: JSON.stringify(input ?? {}),
      });
    } catch (err) {
      throw new ApiError('failed', `could not reach the Waystation host at ${base} (${(err as Error).message}); nothing was changed`);
    }
    const text = await response.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Fall through: a non-JSON answer is reported below with its status.
    }
    if (!response.ok) {
      const err = (body as Partial<ApiErrorBody> | null)?.error;
      const code = err && isApiErrorCode(err.code) ? err.code : response.status === 401 ? 'forbidden' : 'failed';
      throw new ApiError(code, err?.message ?? `${method} failed with HTTP ${response.status}`, err?.issues ?? []);
    }
    return body as ApiOutputs[M];
  }

  const methods = Object.fromEntries(apiMethods.map((m) => [m, (input: ApiInput<typeof m>) => call(m, input)])) as {
    [M in ApiMethod]: (input: ApiInput<M>) => Promise<ApiOutputs[M]>;
  };

  function subscribe(listener: HostEventListener, lastEventId?: number, onStatus?: (status: StreamStatus) => void): () => void {
    const ES = options.EventSource ?? globalThis.EventSource;
    let closed = false;
    let source: EventSource | null = null;
    let lastId = lastEventId;
    let retryTimer: ReturnType<typeof setTimeout> | null = null;
    let backoff = FIRST_RETRY_MS;
    let live = false;

    const open = () => {
      retryTimer = null;
      if (closed) return;
      const params = new URLSearchParams({ token: options.token });
      // EventSource sends Last-Event-ID itself only on its own reconnects; after
      // we recreate it, the id travels as a query parameter instead.
      if (lastId !== undefined) params.set('lastEventId', String(lastId));
      const mine = new ES(`${base}/api/events?${params}`);
      source = mine;
      mine.onopen = () => {
        if (closed || source !== mine) return;
        backoff = FIRST_RETRY_MS;
        live = true;
        onStatus?.({ state: 'live' });
      };
      mine.onmessage = (message: MessageEvent<string>) => {
        let event: HostEvent;
        try {
          // A malformed event is dropped rather than allowed to corrupt the store.
          const parsed = HostEventSchema.safeParse(JSON.parse(message.data));
          if (!parsed.success) return;
          event = parsed.data;
        } catch {
          return;
        }
        if (typeof event.id === 'number') lastId = event.id;
        listener(event);
      };
      mine.onerror = () => {
        if (closed || source !== mine) return;
        // The stream dropped (the host stopped, or answered with an error). The browser's own
        // retry is silent and fixed; closing and reopening here lets the page say so at once and back off.
        mine.close();
        source = null;
        const retryAt = Date.now() + backoff;
        onStatus?.({
          state: 'offline',
          reason: live ? `lost the connection to the Waystation host at ${base}` : `cannot reach the Waystation host at ${base}`,
          retryAt,
        });
        live = false;
        retryTimer = setTimeout(open, backoff);
        backoff = Math.min(backoff * 2, MAX_RETRY_MS);
      };
    };
    open();
    return () => {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      source?.close();
    };
  }

  return { ...methods, subscribe } satisfies WaystationApi;
}
