import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HostEvent } from '../../../shared/api/contract.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { apiMethods } from '../../../shared/api/api-methods.js';
import type { TaskListing } from '../../../shared/checkpoint/task-summary.js';
import { EventHub } from '../../../electron/host/event-hub.js';
import { startHttpHost, type HttpHost, type WebHostedService } from '../../../electron/host/http-host.js';
import { PAGE_CSP } from '../../../shared/api/page-csp.js';
import { sseReader } from '../../../bench/lib/sse-reader.js';

/** A service that records what it was asked and echoes it (so outputs go unchecked); the transport is what is under test. */
function fakeService(hub: EventHub) {
  const calls: Array<{ method: string; input: unknown }> = [];
  const service = Object.fromEntries(
    apiMethods.map((m) => [
      m,
      async (input: unknown) => {
        calls.push({ method: m, input });
        if (m === 'getTask' && (input as { taskId: string }).taskId === 'missing') throw new ApiError('not-found', 'no task "missing"');
        if (m === 'listTasks') return [{ task_id: 't1' }];
        return { method: m, input };
      },
    ]),
  ) as unknown as WebHostedService;
  service.subscribe = (listener, lastEventId) => hub.subscribe(listener, lastEventId);
  service.listTaskListings = async () => {
    calls.push({ method: 'listTaskListings', input: undefined });
    return [{ task_id: 't1', plan: [] }] as unknown as TaskListing[];
  };
  return { service, calls };
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw request, so headers (Host, Origin) and paths are sent exactly as written. */
function request(host: HttpHost, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: host.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const auth = (host: HttpHost) => ({ Authorization: `Bearer ${host.token}` });

/** An SSE client that collects parsed events until told to stop. */
function openStream(host: HttpHost, opts: { lastEventId?: number; query?: string } = {}) {
  const events: HostEvent[] = [];
  let waiters: Array<() => void> = [];
  let response: http.IncomingMessage | null = null;
  const headers: Record<string, string> = {};
  if (opts.lastEventId !== undefined) headers['Last-Event-ID'] = String(opts.lastEventId);
  const req = http.request({ host: '127.0.0.1', port: host.port, path: `/api/events?token=${host.token}${opts.query ?? ''}`, headers });
  const opened = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on('response', (res) => {
      response = res;
      const read = sseReader(({ id, data }) => {
        const event = JSON.parse(data) as HostEvent;
        expect(id).toBe(String(event.id));
        events.push(event);
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        read(chunk);
        const pending = waiters;
        waiters = [];
        for (const w of pending) w();
      });
      resolve(res);
    });
    req.on('error', reject);
  });
  req.end();
  return {
    events,
    opened,
    until(count: number): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`stream got ${events.length} events, wanted ${count}`)), 15_000);
        const check = () => {
          if (events.length >= count) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    close() {
      response?.destroy();
      req.destroy();
    },
  };
}

let hub: EventHub;
let host: HttpHost;
let calls: Array<{ method: string; input: unknown }>;
let staticDir: string;
let outside: string;

beforeAll(async () => {
  staticDir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-static-'));
  outside = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-outside-'));
  await fs.writeFile(path.join(staticDir, 'index.html'), '<!doctype html><title>Waystation</title>');
  await fs.mkdir(path.join(staticDir, 'assets'));
  await fs.writeFile(path.join(staticDir, 'assets', 'app.js'), 'console.log("app")');
  await fs.writeFile(path.join(outside, 'secret.txt'), 'outside the root');
  await fs.symlink(outside, path.join(staticDir, 'escape'));
});

afterAll(async () => {
  await fs.rm(staticDir, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

beforeEach(async () => {
  hub = new EventHub({ capacity: 1000 });
  const fake = fakeService(hub);
  calls = fake.calls;
  host = await startHttpHost({ service: fake.service, staticDir, checkOutputs: false });
});

afterEach(async () => {
  await host.close();
});

describe('the loopback host', () => {
  it('listens on 127.0.0.1 and prints a URL with a 64-hex-digit token', () => {
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/);
    expect(host.url).toContain(host.token);
  });

  it('gives each start its own token', async () => {
    const other = await startHttpHost({ service: fakeService(hub).service, staticDir: null, checkOutputs: false });
    try {
      expect(other.token).not.toBe(host.token);
      expect((await request(other, { path: '/api/tasks', headers: auth(host) })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe('the token', () => {
  it('is required on every API route', async () => {
    for (const p of ['/api/tasks', '/api/tasks/t1', '/api/events', '/api/agents', '/api/nothing']) {
      const reply = await request(host, { path: p });
      expect(reply.status, p).toBe(401);
      expect(JSON.parse(reply.body).error.code).toBe('forbidden');
    }
    const post = await request(host, {
      method: 'POST',
      path: '/api/rpc/listTasks',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(post.status).toBe(401);
    expect(calls).toEqual([]);
  });

  it('refuses a wrong token of any length', async () => {
    for (const t of ['x', host.token.slice(0, -1) + (host.token.endsWith('0') ? '1' : '0'), host.token + '00']) {
      expect((await request(host, { path: '/api/tasks', headers: { Authorization: `Bearer ${t}` } })).status).toBe(401);
      expect((await request(host, { path: `/api/tasks?token=${t}` })).status).toBe(401);
    }
  });

  it('is accepted as a Bearer header or a token query parameter', async () => {
    const viaHeader = await request(host, { path: '/api/tasks', headers: auth(host) });
    const viaQuery = await request(host, { path: `/api/tasks?token=${host.token}` });
    expect(viaHeader.status).toBe(200);
    expect(viaQuery.status).toBe(200);
    // GET /api/tasks is the listing `ls --json` prints, plans included; the app's list is POST /api/rpc/listTasks.
    expect(JSON.parse(viaHeader.body)).toEqual([{ task_id: 't1', plan: [] }]);
    expect(viaHeader.headers['content-type']).toMatch(/^application\/json/);
  });

  it('sends the listing in the pieces the service makes it in, when it makes them, with the headers of any JSON answer', async () => {
    const fake = fakeService(hub);
    // Large enough that the socket asks the host to wait before the next piece.
    const rows = Array.from({ length: 2000 }, (_, i) => ({ task_id: `t${i}`, note: 'x'.repeat(500), plan: [] }));
    fake.service.listTaskListingsJson = async () => ['[', rows.map((r) => JSON.stringify(r)).join(','), ']'];
    const pieced = await startHttpHost({ service: fake.service, staticDir: null, checkOutputs: false });
    try {
      const reply = await request(pieced, { path: '/api/tasks', headers: auth(pieced) });
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body)).toEqual(rows);
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(fake.calls.some((c) => c.method === 'listTaskListings')).toBe(false);
    } finally {
      await pieced.close();
    }
  });
});

describe('a list an API method answers', () => {
  it('goes out in pieces (chunked), the very text of the whole list, where any other answer has its length', async () => {
    const fake = fakeService(hub);
    const rows = Array.from({ length: 2000 }, (_, i) => ({ task_id: `t${i}`, note: 'x'.repeat(500) }));
    fake.service.listTasks = (async () => rows) as unknown as WebHostedService['listTasks'];
    const pieced = await startHttpHost({ service: fake.service, staticDir: null, checkOutputs: false });
    try {
      const json = { ...auth(pieced), 'Content-Type': 'application/json' };
      const list = await request(pieced, { method: 'POST', path: '/api/rpc/listTasks', headers: json, body: '{}' });
      expect(list.status).toBe(200);
      expect(list.body).toBe(JSON.stringify(rows));
      expect(list.headers['transfer-encoding']).toBe('chunked');
      expect(list.headers['content-length']).toBeUndefined();
      expect(list.headers['content-type']).toMatch(/^application\/json/);
      expect(list.headers['cache-control']).toBe('no-store');
      const one = await request(pieced, { method: 'POST', path: '/api/rpc/getTask', headers: json, body: '{"taskId":"t1"}' });
      expect(one.status).toBe(200);
      expect(one.headers['content-length']).toBe(String(Buffer.byteLength(one.body)));
    } finally {
      await pieced.close();
    }
  });
});

describe('a host started while its directory opens', () => {
  /** A second host on the same fake service, given `ready`; closed by the test. */
  const startWaiting = async (ready: Promise<unknown>) => {
    const fake = fakeService(new EventHub({ capacity: 10 }));
    return { waiting: await startHttpHost({ service: fake.service, staticDir, checkOutputs: false, ready }), calls: fake.calls };
  };
  const rpc = (h: HttpHost, method: string) =>
    request(h, { method: 'POST', path: `/api/rpc/${method}`, headers: { ...auth(h), 'Content-Type': 'application/json' }, body: '{}' });

  it('serves the page at once and holds every API request until the opening is done', async () => {
    let open!: () => void;
    const opening = new Promise<void>((resolve) => (open = resolve));
    // Counts the requests that have come to wait on it (each waits through `catch`).
    let arrived = 0;
    const ready = { catch: (onFail: () => void) => (arrived++, opening.catch(onFail)) } as unknown as Promise<void>;
    const { waiting, calls: asked } = await startWaiting(ready);
    try {
      expect((await request(waiting, { path: '/' })).status).toBe(200);
      let answered = 0;
      const pending = [rpc(waiting, 'getDirectory'), request(waiting, { path: '/api/tasks', headers: auth(waiting) })].map((r) =>
        r.then((reply) => (answered++, reply)),
      );
      await vi.waitFor(() => expect(arrived).toBe(2));
      expect((await request(waiting, { path: '/assets/app.js' })).status).toBe(200);
      expect(answered).toBe(0);
      expect(asked).toEqual([]);
      open();
      expect((await Promise.all(pending)).map((r) => r.status)).toEqual([200, 200]);
      expect(asked.map((c) => c.method).sort()).toEqual(['getDirectory', 'listTaskListings']);
    } finally {
      await waiting.close();
    }
  });

  it('answers as the service stands once the opening has failed', async () => {
    let fail!: (err: Error) => void;
    const opening = new Promise<void>((_resolve, reject) => (fail = reject));
    // As web-server.ts does: whoever opened it hears the failure; the host only waits on it.
    opening.catch(() => {});
    const { waiting } = await startWaiting(opening);
    try {
      const reply = rpc(waiting, 'getDirectory');
      fail(new Error('the server refused the password'));
      expect((await reply).status).toBe(200);
    } finally {
      await waiting.close();
    }
  });

  it('still refuses a request without the token before the opening is done', async () => {
    const { waiting } = await startWaiting(new Promise<void>(() => {}));
    try {
      expect((await request(waiting, { path: '/api/tasks' })).status).toBe(401);
    } finally {
      await waiting.close();
    }
  });
});

describe('origins and hosts', () => {
  it('refuses a foreign Origin, even with the token', async () => {
    const reply = await request(host, { path: '/api/tasks', headers: { ...auth(host), Origin: 'http://evil.example' } });
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body).error.message).toContain('evil.example');
    const otherPort = await request(host, { path: '/api/tasks', headers: { ...auth(host), Origin: `http://127.0.0.1:${host.port + 1}` } });
    expect(otherPort.status).toBe(403);
    expect(calls).toEqual([]);
  });

  it("accepts the host's own origin", async () => {
    expect((await request(host, { path: '/api/tasks', headers: { ...auth(host), Origin: host.origin } })).status).toBe(200);
    expect((await request(host, { path: '/api/tasks', headers: { ...auth(host), Origin: `http://localhost:${host.port}` } })).status).toBe(
      200,
    );
  });

  it('refuses a Host header that is not this loopback host (DNS rebinding)', async () => {
    const reply = await request(host, { path: '/api/tasks', headers: { ...auth(host), Host: `attacker.example:${host.port}` } });
    expect(reply.status).toBe(403);
    expect((await request(host, { path: '/', headers: { Host: 'attacker.example' } })).status).toBe(403);
  });
});

describe('the API routes', () => {
  it('routes GET /api/tasks/:id with a version to getTask', async () => {
    const reply = await request(host, { path: '/api/tasks/t1?version=3', headers: auth(host) });
    expect(reply.status).toBe(200);
    expect(calls).toEqual([{ method: 'getTask', input: { taskId: 't1', version: 3 } }]);
  });

  it('answers service errors as ApiErrorBody with the matching status', async () => {
    const reply = await request(host, { path: '/api/tasks/missing', headers: auth(host) });
    expect(reply.status).toBe(404);
    expect(JSON.parse(reply.body)).toEqual({ error: { code: 'not-found', message: 'no task "missing"' } });
  });

  it('validates input before the service sees it', async () => {
    const bad = await request(host, { path: '/api/tasks/t1?version=0', headers: auth(host) });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('invalid-input');
    // A version that is not a number is said to be one the route does not take, in words.
    for (const v of ['-1', '1.5', 'abc']) {
      const odd = await request(host, { path: `/api/tasks/t1?version=${v}`, headers: auth(host) });
      expect(odd.status).toBe(400);
      expect(JSON.parse(odd.body).error.message).toBe(`?version= takes a version number (1, 2, 3, ...), not "${v}"`);
    }
    // A parameter the history route does not take is refused, not ignored.
    const after = await request(host, { path: '/api/tasks/t1/history?after=abc', headers: auth(host) });
    expect(after.status).toBe(400);
    expect(JSON.parse(after.body).error.message).toContain('takes no parameter (?after= given)');
    expect(calls.filter((c) => c.method === 'getTask' || c.method === 'getHistory')).toEqual([]);
    const reject = await request(host, {
      method: 'POST',
      path: '/api/rpc/rejectResume',
      headers: { ...auth(host), 'Content-Type': 'application/json' },
      body: JSON.stringify({ taskId: 't1', reason: '   ' }),
    });
    expect(reject.status).toBe(400);
    expect(JSON.parse(reject.body).error.issues.join(' ')).toContain('reason');
    expect(calls).toEqual([]);
  });

  it('serves every method over POST /api/rpc/<method>', async () => {
    const reply = await request(host, {
      method: 'POST',
      path: '/api/rpc/startTask',
      headers: { ...auth(host), 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent: 'checkpoint-demo' }),
    });
    expect(reply.status).toBe(200);
    // Defaults of the contract are filled in on the way.
    expect(calls).toEqual([{ method: 'startTask', input: { agent: 'checkpoint-demo', options: {}, mode: 'manual' } }]);
  });

  it('refuses unknown methods, inherited names, wrong verbs, non-JSON bodies and bodies over 1 MiB', async () => {
    const post = (p: string, body: string, type = 'application/json') =>
      request(host, { method: 'POST', path: p, headers: { ...auth(host), 'Content-Type': type }, body });
    expect((await post('/api/rpc/noSuchMethod', '{}')).status).toBe(404);
    expect((await post('/api/rpc/constructor', '{}')).status).toBe(404);
    expect((await post('/api/rpc/__proto__', '{}')).status).toBe(404);
    expect((await request(host, { method: 'DELETE', path: '/api/tasks/t1', headers: auth(host) })).status).toBe(405);
    expect((await post('/api/rpc/listTasks', '{}', 'text/plain')).status).toBe(415);
    expect((await post('/api/rpc/listTasks', '{not json')).status).toBe(400);
    const big = await post('/api/rpc/editStepResult', JSON.stringify({ taskId: 't1', stepId: 's', value: 'x'.repeat(1024 * 1024) }));
    expect(big.status).toBe(413);
    expect(calls).toEqual([]);
  });

  it('answers a URL over the header limit, and a request that is not HTTP, with an error body rather than a reset', async () => {
    const long = await request(host, { path: `/api/tasks?x=${'a'.repeat(20_000)}`, headers: auth(host) });
    expect(long.status).toBe(431);
    expect(long.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(long.body)).toMatchObject({
      error: { code: 'too-large', message: expect.stringMatching(/over 16 KiB.*request body/) },
    });

    const garbled = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(host.port, '127.0.0.1', () => socket.write('GET /api/tasks HTTP/1.1\r\nHost bad header\r\n\r\n'));
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(garbled).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(garbled.slice(garbled.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'invalid-input' } });
    expect(calls).toEqual([]);
  });
});

describe('path confinement', () => {
  it('refuses task ids that are paths, before any lookup', async () => {
    for (const p of [
      '/api/tasks/..%2F..%2Fetc%2Fpasswd',
      '/api/tasks/%2Fetc%2Fpasswd',
      '/api/tasks/..',
      '/api/tasks/a%5Cb',
      '/api/tasks/%2E%2E',
      '/api/tasks/bad%00id',
      '/api/tasks/%E0%A4%A',
    ]) {
      const reply = await request(host, { path: p, headers: auth(host) });
      expect([400, 404], p).toContain(reply.status);
      expect(JSON.parse(reply.body).error.code).toMatch(/invalid-input|not-found/);
    }
    expect(calls).toEqual([]);
  });

  it('serves the renderer and falls back to index.html for app routes', async () => {
    const page = await request(host, { path: `/?token=${host.token}` });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Waystation</title>');
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const asset = await request(host, { path: '/assets/app.js' });
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    expect((await request(host, { path: '/tasks/t1' })).body).toContain('<title>Waystation</title>');
    expect((await request(host, { path: '/assets/missing.js' })).status).toBe(404);
  });

  it('refuses static paths that leave the renderer folder: ../, encoded ../, absolute, a symlink out', async () => {
    for (const p of [
      '/../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/assets/..%2F..%2F' + path.basename(outside) + '%2Fsecret.txt',
      '//etc/passwd',
      '/%2Fetc%2Fpasswd',
      '/escape/secret.txt',
      '/C:%5Cwindows',
    ]) {
      const reply = await request(host, { path: p });
      expect(reply.status, p).toBe(403);
      expect(reply.body).not.toContain('outside the root');
      expect(reply.body).not.toContain('root:');
    }
  });

  it('says how to build the renderer when it is missing', async () => {
    const bare = await startHttpHost({ service: fakeService(hub).service, staticDir: path.join(staticDir, 'nope'), checkOutputs: false });
    try {
      const reply = await request(bare, { path: '/' });
      expect(reply.status).toBe(503);
      expect(reply.body).toContain('npm run build:renderer');
    } finally {
      await bare.close();
    }
  });
});

describe('the event stream', () => {
  const publishTasks = (n: number) => {
    for (let i = 0; i < n; i++) hub.publish({ type: 'task-changed', taskId: `t${i}`, version: i + 1 });
  };

  it('delivers only new events to a fresh client, with SSE ids equal to event ids', async () => {
    publishTasks(3);
    const stream = openStream(host);
    await stream.opened;
    publishTasks(2);
    await stream.until(2);
    expect(stream.events.map((e) => e.id)).toEqual([4, 5]);
    stream.close();
  });

  it('resumes exactly after Last-Event-ID: no gap, no duplicate', async () => {
    publishTasks(10);
    const first = openStream(host, { lastEventId: 0 });
    await first.until(10);
    first.close();
    // Events published while the client is away.
    publishTasks(5);
    const resumed = openStream(host, { lastEventId: 7 });
    await resumed.opened;
    publishTasks(3);
    await resumed.until(11);
    expect(resumed.events.map((e) => e.id)).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
    resumed.close();
  });

  it('lets the Last-Event-ID header win over the lastEventId query of the first connection', async () => {
    publishTasks(6);
    const stream = openStream(host, { lastEventId: 4, query: '&lastEventId=1' });
    await stream.until(2);
    expect(stream.events.map((e) => e.id)).toEqual([5, 6]);
    stream.close();
  });

  it('tells a client to resync when its id is older than the replay ring', async () => {
    publishTasks(1200);
    const stream = openStream(host, { lastEventId: 5 });
    await stream.opened;
    publishTasks(1);
    await stream.until(2);
    expect(stream.events[0]).toMatchObject({ type: 'resync', id: 1200 });
    expect(stream.events[1].id).toBe(1201);
    stream.close();
  });

  it('refuses a malformed Last-Event-ID', async () => {
    const reply = await request(host, { path: `/api/events?token=${host.token}`, headers: { 'Last-Event-ID': 'abc' } });
    expect(reply.status).toBe(400);
  });

  it('serves many concurrent clients, each every event in order', async () => {
    const streams = Array.from({ length: 40 }, () => openStream(host));
    await Promise.all(streams.map((s) => s.opened));
    expect(hub.subscriberCount).toBe(40);
    publishTasks(100);
    await Promise.all(streams.map((s) => s.until(100)));
    for (const s of streams) expect(s.events.map((e) => e.id)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    streams.forEach((s) => s.close());
  });

  it('forgets a client that drops mid-stream and keeps serving the others', async () => {
    const dropping = openStream(host);
    const staying = openStream(host);
    await Promise.all([dropping.opened, staying.opened]);
    publishTasks(5);
    await dropping.until(5);
    dropping.close();
    // The server notices the closed socket; publishing to it must not disturb anyone.
    await new Promise<void>((resolve) => {
      const poll = () => (hub.subscriberCount === 1 && host.openStreams === 1 ? resolve() : setImmediate(poll));
      poll();
    });
    publishTasks(5);
    await staying.until(10);
    expect(staying.events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(dropping.events).toHaveLength(5);
    expect((await request(host, { path: '/api/tasks', headers: auth(host) })).status).toBe(200);
    staying.close();
  });

  it('ends every stream on close', async () => {
    const stream = openStream(host);
    const res = await stream.opened;
    const ended = new Promise<void>((resolve) => res.on('close', () => resolve()));
    await host.close();
    await ended;
    expect(hub.subscriberCount).toBe(0);
    host = await startHttpHost({ service: fakeService(hub).service, staticDir, checkOutputs: false });
  });
});
