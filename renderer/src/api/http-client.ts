/**
 * The WaystationApi over the loopback host: JSON RPC over HTTP, events over SSE.
 *
 * Browser mode only; inside Electron the preload's `window.waystation` is used
 * instead (see pick-api.ts). The token comes from the page URL, is sent as a
 * bearer header on every call, and as `?token=` on the event stream because
 * EventSource cannot send headers.
 */
import { ApiError, type ApiErrorBody } from '../../../shared/api/api-error.js';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { isApiErrorCode } from '../../../shared/api/error-codes.js';
import type {
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
  /** Injected in tests; defaults to loading the contract's event schema (loadEventCheck). */
  loadEventCheck?: () => Promise<EventCheck>;
}

/** The check of one event from the stream: the event, or null when it is not one the contract knows. */
export type EventCheck = (data: unknown) => HostEvent | null;

/**
 * The contract's event schema, loaded when the stream's first event comes.
 * It is zod's, and the first rows need none of zod: the page's first script
 * leaves it out (`test/lint/page-first-script.test.ts`), and building its
 * schemas waits until there is an event to check, instead of taking the main
 * thread while React draws the first rows. The events that come meanwhile
 * wait for it, in order.
 */
export async function loadEventCheck(): Promise<EventCheck> {
  const { HostEventSchema } = await import('../../../shared/api/contract.js');
  return (data) => {
    const parsed = HostEventSchema.safeParse(data);
    return parsed.success ? parsed.data : null;
  };
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

  // Told of a 401 from any call: the stream stops retrying and the page says the token is not the host's.
  const refusedListeners = new Set<(reason: string) => void>();
  const refused = (reason: string) => {
    for (const l of [...refusedListeners]) l(reason);
  };

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
      const message = err?.message ?? `${method} failed with HTTP ${response.status}`;
      if (response.status === 401) refused(message);
      throw new ApiError(code, message, err?.issues ?? []);
    }
    return body as ApiOutputs[M];
  }

  const methods = Object.fromEntries(apiMethods.map((m) => [m, (input: ApiInput<typeof m>) => call(m, input)])) as {
    [M in ApiMethod]: (input: ApiInput<M>) => Promise<ApiOutputs[M]>;
  };

  let check: EventCheck | null = null;
  let checkLoad: Promise<EventCheck> | null = null;
  // A load that failed is tried again by the next stream that needs it.
  const eventCheck = () =>
    (checkLoad ??= (options.loadEventCheck ?? loadEventCheck)().then(
      (loaded) => (check = loaded),
      (err: unknown) => {
        checkLoad = null;
        throw err;
      },
    ));

  function subscribe(listener: HostEventListener, lastEventId?: number, onStatus?: (status: StreamStatus) => void): () => void {
    const ES = options.EventSource ?? globalThis.EventSource;
    let closed = false;
    let source: EventSource | null = null;
    let lastId = lastEventId;
    let retryTimer: ReturnType<typeof setTimeout> | null = null;
    let backoff = FIRST_RETRY_MS;
    let live = false;
    // Events that came before the check had loaded, in the order they came; delivered, in that order, once it has.
    let held: string[] = [];
    let draining: Promise<void> | null = null;

    const deliver = (data: string) => {
      let event: HostEvent | null;
      try {
        // A malformed event is dropped rather than allowed to corrupt the store.
        event = check!(JSON.parse(data));
      } catch {
        return;
      }
      if (!event || closed) return;
      if (typeof event.id === 'number') lastId = event.id;
      listener(event);
    };

    const drain = () =>
      (draining ??= eventCheck()
        .then(
          () => {
            const waiting = held;
            held = [];
            for (const data of waiting) deliver(data);
          },
          (err: unknown) => {
            // Events that cannot be checked are not delivered: the stream is read again from the last event
            // delivered, once the check loads.
            held = [];
            if (source) dropped(source, `cannot load the page's event reader (${err instanceof Error ? err.message : String(err)})`);
          },
        )
        .finally(() => {
          draining = null;
        }));

    // The stream dropped (the host stopped, answered with an error, or its events could not be read). The
    // browser's own retry is silent and fixed; closing and reopening here lets the page say so at once and back off.
    const dropped = (mine: EventSource, reason?: string) => {
      if (closed || source !== mine) return;
      mine.close();
      source = null;
      // An EventSource does not say why it failed: one call tells a host that refuses the token (it answers 401, and
      // `refused` below ends the stream) from one that is down or restarting (it does not answer; retried as ever).
      void methods.getDirectory({}).catch(() => undefined);
      const retryAt = Date.now() + backoff;
      onStatus?.({
        state: 'offline',
        reason: reason ?? (live ? `lost the connection to the Waystation host at ${base}` : `cannot reach the Waystation host at ${base}`),
        retryAt,
      });
      live = false;
      retryTimer = setTimeout(open, backoff);
      backoff = Math.min(backoff * 2, MAX_RETRY_MS);
    };

    const open = () => {
      retryTimer = null;
      if (closed) return;
      // Reopened from the last event delivered: events still waiting for the check go first, or they would come twice.
      if (draining) {
        void draining.then(open);
        return;
      }
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
        if (check && !draining) deliver(message.data);
        else {
          held.push(message.data);
          void drain();
        }
      };
      mine.onerror = () => dropped(mine);
    };
    const onRefused = (reason: string) => {
      if (closed) return;
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      source?.close();
      source = null;
      onStatus?.({ state: 'refused', reason });
    };
    refusedListeners.add(onRefused);
    open();
    return () => {
      closed = true;
      refusedListeners.delete(onRefused);
      if (retryTimer) clearTimeout(retryTimer);
      source?.close();
    };
  }

  return { ...methods, subscribe } satisfies WaystationApi;
}
