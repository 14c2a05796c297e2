import { describe, expect, it, vi } from 'vitest';
import { ApiError, type HostEvent } from '../../shared/api/contract.js';
import { createHttpApi } from '../../renderer/src/api/http-client.js';

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
    expect(seen.map((e) => e.id)).toEqual([5]);

    // The browser gives up on the stream (CLOSED): the client reopens it from event 5.
    first.readyState = 2;
    first.onerror!();
    vi.advanceTimersByTime(600);
    vi.useRealTimers();
    const second = FakeEventSource.instances[1];
    expect(second.url).toBe('http://h/api/events?token=s3cret&lastEventId=5');
    stop();
    expect(second.closed).toBe(true);
  });

  it('reports a dropped stream as offline at once, retries with a growing wait, and reports live when the host is back', async () => {
    FakeEventSource.instances = [];
    vi.useFakeTimers();
    try {
      const api = createHttpApi({ baseUrl: 'http://h', token: 't', EventSource: FakeEventSource as unknown as typeof EventSource });
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
});
