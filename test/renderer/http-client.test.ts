import { describe, expect, it, vi } from 'vitest';
import type { HostEvent } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import { createHttpApi, loadEventCheck, type EventCheck } from '../../renderer/src/api/http-client.js';

type Req = { url: string; init: RequestInit };

function fakeFetch(answer: (req: Req) => { status: number; body: unknown }) {
  const requests: Req[] = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    const req = { url, init };
    requests.push(req);
    const { status, body } = answer(req);
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
  return { fetchImpl, requests };
}

/** A promise the test settles when it chooses. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const event = (id: number) => JSON.stringify({ id, type: 'task-changed', taskId: 'a', version: id });

/** Stands in for the browser's EventSource: the test drives messages and failures. */
class FakeEventSource {
  static instances: FakeEventSource[] = [];
  readyState = 1;
  onmessage: ((m: { data: string }) => void) | null = null;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
}

/** A client whose event stream is a FakeEventSource and whose schema loads as `loadEventCheck` says. */
function streamingApi(loadEventCheck: () => Promise<EventCheck>) {
  FakeEventSource.instances = [];
  return createHttpApi({ baseUrl: 'http://h', token: 't', EventSource: FakeEventSource as unknown as typeof EventSource, loadEventCheck });
}

describe('the HTTP API client', () => {
  it('posts each method to /api/rpc/<method> with the bearer token and returns the JSON answer', async () => {
    const { fetchImpl, requests } = fakeFetch(() => ({ status: 200, body: [{ task_id: 'a' }] }));
    const api = createHttpApi({ baseUrl: 'http://127.0.0.1:9/', token: 'tok', fetch: fetchImpl });
    expect(await api.listTasks({})).toEqual([{ task_id: 'a' }]);
    expect(requests[0].url).toBe('http://127.0.0.1:9/api/rpc/listTasks');
    expect(requests[0].init.method).toBe('POST');
    expect((requests[0].init.headers as Record<string, string>).authorization).toBe('Bearer tok');
    expect(requests[0].init.body).toBe('{}');
  });

  it('turns an error body into an ApiError with the host’s code, message and issues', async () => {
    const { fetchImpl } = fakeFetch(() => ({
      status: 400,
      body: { error: { code: 'invalid-input', message: 'invalid input for rejectResume', issues: ['reason: a reason is required'] } },
    }));
    const api = createHttpApi({ baseUrl: 'http://h', token: 't', fetch: fetchImpl });
    const err = await api.rejectResume({ taskId: 'a', reason: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 'invalid-input',
      message: 'invalid input for rejectResume',
      issues: ['reason: a reason is required'],
    });
  });

  it('reports an unreachable host as a failure that says nothing was changed', async () => {
    const api = createHttpApi({
      baseUrl: 'http://h',
      token: 't',
      fetch: (async () => {
        throw new TypeError('connection refused');
      }) as unknown as typeof fetch,
    });
    await expect(api.resumeTask({ taskId: 'a' })).rejects.toThrow(/could not reach the Waystation host.*nothing was changed/);
  });

  it('streams events with the token in the URL, drops malformed ones, and reopens from the last id', async () => {
    FakeEventSource.instances = [];
    vi.useFakeTimers();
    const api = createHttpApi({ baseUrl: 'http://h', token: 's3cret', EventSource: FakeEventSource as unknown as typeof EventSource });
    const seen: HostEvent[] = [];
    const stop = api.subscribe((e) => seen.push(e), 4);
    const first = FakeEventSource.instances[0];
    expect(first.url).toBe('http://h/api/events?token=s3cret&lastEventId=4');

    first.onmessage!({ data: JSON.stringify({ id: 5, type: 'task-changed', taskId: 'a', version: 2 }) });
    first.onmessage!({ data: '{"id":6,"type":"nonsense"}' });
    first.onmessage!({ data: 'not json' });
    // The first events wait for the contract's schema, loaded at the first of them.
    await vi.waitFor(() => expect(seen.map((e) => e.id)).toEqual([5]));
    first.onmessage!({ data: event(7) });
    // Once it has loaded, an event is delivered as it comes.
    expect(seen.map((e) => e.id)).toEqual([5, 7]);

    // The browser gives up on the stream (CLOSED): the client reopens it from event 5.
    first.readyState = 2;
    first.onerror!();
    vi.advanceTimersByTime(600);
    vi.useRealTimers();
    const second = FakeEventSource.instances[1];
    expect(second.url).toBe('http://h/api/events?token=s3cret&lastEventId=7');
    stop();
    expect(second.closed).toBe(true);
  });

  it('reports a dropped stream as offline at once, retries with a growing wait, and reports live when the host is back', async () => {
    FakeEventSource.instances = [];
    vi.useFakeTimers();
    try {
      // The host is down: the call made to tell why the stream dropped gets no answer.
      const down = (async () => {
        throw new TypeError('fetch failed');
      }) as unknown as typeof fetch;
      const api = createHttpApi({
        baseUrl: 'http://h',
        token: 't',
        EventSource: FakeEventSource as unknown as typeof EventSource,
        fetch: down,
      });
      const states: string[] = [];
      const waits: number[] = [];
      const stop = api.subscribe(
        () => undefined,
        undefined,
        (s) => {
          states.push(s.state);
          if (s.state === 'offline') waits.push(s.retryAt - Date.now());
        },
      );
      FakeEventSource.instances[0].onopen!();
      expect(states).toEqual(['live']);

      // The host stops: the browser would retry silently (CONNECTING), the client says so at once.
      FakeEventSource.instances[0].readyState = 0;
      FakeEventSource.instances[0].onerror!();
      expect(states).toEqual(['live', 'offline']);
      expect(FakeEventSource.instances[0].closed).toBe(true);
      vi.advanceTimersByTime(500);
      expect(FakeEventSource.instances).toHaveLength(2);
      FakeEventSource.instances[1].onerror!();
      vi.advanceTimersByTime(1000);
      expect(FakeEventSource.instances).toHaveLength(3);
      expect(waits).toEqual([500, 1000]);

      // The host is back.
      FakeEventSource.instances[2].onopen!();
      expect(states.at(-1)).toBe('live');
      stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops retrying a host that refuses the token (started again, with a new one) and says so with its sentence', async () => {
    FakeEventSource.instances = [];
    vi.useFakeTimers();
    try {
      const sentence = "this request's token is not this host's: the host makes a new one each time it starts";
      const { fetchImpl, requests } = fakeFetch(() => ({ status: 401, body: { error: { code: 'forbidden', message: sentence } } }));
      const api = createHttpApi({
        baseUrl: 'http://h',
        token: 't',
        EventSource: FakeEventSource as unknown as typeof EventSource,
        fetch: fetchImpl,
      });
      const statuses: { state: string; reason?: string }[] = [];
      const stop = api.subscribe(
        () => undefined,
        undefined,
        (s) => statuses.push(s),
      );
      FakeEventSource.instances[0].onopen!();
      FakeEventSource.instances[0].onerror!();
      await vi.advanceTimersByTimeAsync(0);
      expect(requests.map((r) => r.url)).toEqual(['http://h/api/rpc/getDirectory']);
      expect(statuses.at(-1)).toEqual({ state: 'refused', reason: sentence });
      // Not tried again, however long the page stays open.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(FakeEventSource.instances).toHaveLength(1);
      expect(FakeEventSource.instances[0].closed).toBe(true);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds the events that come before the schema has loaded, delivers them in order once it has, and reopens only after', async () => {
    const schema = deferred<EventCheck>();
    const loads: number[] = [];
    vi.useFakeTimers();
    try {
      const api = streamingApi(() => {
        loads.push(1);
        return schema.promise;
      });
      const seen: number[] = [];
      const stop = api.subscribe((e) => seen.push(e.id), 4);
      // Asked for at the stream's first event, not before: the page's first rows are drawn meanwhile.
      expect(loads).toHaveLength(0);
      const first = FakeEventSource.instances[0];
      first.onmessage!({ data: event(5) });
      expect(loads).toHaveLength(1);
      first.onmessage!({ data: '{"id":6,"type":"nonsense"}' });
      first.onmessage!({ data: event(7) });
      // The stream drops with events still held: the reopen waits for them, so it asks after the last one.
      first.onerror!();
      vi.advanceTimersByTime(5_000);
      expect(FakeEventSource.instances).toHaveLength(1);
      expect(seen).toEqual([]);

      schema.resolve(await loadEventCheck());
      await vi.waitFor(() => expect(FakeEventSource.instances).toHaveLength(2));
      expect(seen).toEqual([5, 7]);
      expect(FakeEventSource.instances[1].url).toBe('http://h/api/events?token=t&lastEventId=7');
      expect(loads).toHaveLength(1);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops the stream, saying why, when the schema cannot load, and reads it again from the last event delivered', async () => {
    const attempts = [deferred<EventCheck>(), deferred<EventCheck>()];
    let load = 0;
    vi.useFakeTimers();
    try {
      const api = streamingApi(() => attempts[load++].promise);
      const seen: number[] = [];
      const states: { state: string; reason?: string }[] = [];
      const stop = api.subscribe(
        (e) => seen.push(e.id),
        4,
        (s) => states.push(s),
      );
      const first = FakeEventSource.instances[0];
      first.onopen!();
      first.onmessage!({ data: event(5) });
      attempts[0].reject(new Error('Failed to fetch dynamically imported module'));
      await vi.waitFor(() => expect(first.closed).toBe(true));
      expect(states.at(-1)).toMatchObject({ state: 'offline', reason: expect.stringMatching(/event reader.*Failed to fetch/) });
      expect(seen).toEqual([]);

      // The next stream loads the schema again, and asks for what the first could not deliver.
      vi.advanceTimersByTime(500);
      const second = FakeEventSource.instances[1];
      expect(second.url).toBe('http://h/api/events?token=t&lastEventId=4');
      second.onmessage!({ data: event(5) });
      expect(load).toBe(2);
      attempts[1].resolve(await loadEventCheck());
      await vi.waitFor(() => expect(seen).toEqual([5]));
      stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
