/**
 * A flood of half-sent requests without the token cannot take the host
 * down: beyond the cap the oldest are closed, the rest time out, and a
 * request with the token is answered throughout. Event streams are counted
 * apart.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { WaystationService } from '../../../shared/api/contract.js';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { EventHub } from '../../../electron/host/event-hub.js';
import { startHttpHost, type HttpHost, type WebHostedService } from '../../../electron/host/http-host.js';

function service(): WebHostedService {
  const hub = new EventHub();
  const s = Object.fromEntries(
    apiMethods.map((m) => [m, async (input: unknown) => ({ method: m, input })]),
  ) as unknown as WaystationService & WebHostedService;
  s.subscribe = (l, id) => hub.subscribe(l, id);
  s.listTaskListings = async () => [];
  return s;
}

let host: HttpHost | null = null;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await host?.close();
  host = null;
});

/** Open a connection that sends the start of a request and never finishes it; resolves once connected. */
function halfSent(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET /api/tasks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      resolve(s);
    });
    s.on('error', () => {});
    s.once('error', reject);
    sockets.push(s);
  });
}

const closed = (s: net.Socket) =>
  new Promise<void>((resolve) => (s.destroyed || s.readyState === 'closed' ? resolve() : s.once('close', () => resolve())));

describe('connections without the token', () => {
  it('are capped, oldest closed first, and a request with the token is answered during the flood', async () => {
    host = await startHttpHost({ service: service(), staticDir: null, checkOutputs: false, connections: { maxUnauthenticated: 40 } });
    const flood: net.Socket[] = [];
    for (let i = 0; i < 200; i++) flood.push(await halfSent(host.port));
    // The first 160 were closed to make room; the newest 40 are held.
    await Promise.all(flood.slice(0, 160).map(closed));
    expect(host.unauthenticatedConnections).toBeLessThanOrEqual(40);
    const res = await fetch(`${host.origin}/api/rpc/getTask`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${host.token}`, 'Content-Type': 'application/json', Connection: 'close' },
      body: JSON.stringify({ taskId: 'victim' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ method: 'getTask' });
  });

  it('time out when their headers never finish', async () => {
    host = await startHttpHost({ service: service(), staticDir: null, connections: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const slow = await halfSent(host.port);
    await closed(slow);
    expect(slow.destroyed).toBe(true);
  });
});

describe('event streams', () => {
  it('are capped apart: one beyond the cap closes the oldest', async () => {
    host = await startHttpHost({ service: service(), staticDir: null, maxStreams: 2 });
    const open = async () => {
      const ac = new AbortController();
      const res = await fetch(`${host!.origin}/api/events?token=${host!.token}`, { signal: ac.signal });
      return { res, ac };
    };
    const first = await open();
    const reader = first.res.body!.getReader();
    await open();
    await open();
    // The first stream ends: its reader reaches the end after the greeting.
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
    expect(host.openStreams).toBe(2);
  });
});
