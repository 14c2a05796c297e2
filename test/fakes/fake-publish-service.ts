/**
 * A fake external publish service that counts what it received by idempotency key.
 *
 * Protocol (the one md-summarizer speaks, docs/RUNTIME.md):
 * - `POST /` with header `Idempotency-Key: K` and a JSON body: 201 `{id, key}` the
 *   first time, 200 with the same record for a repeated key (not applied again);
 * - `GET /?key=K`: 200 with the record if K was published, 404 if not.
 *
 * `failNext` scripts trouble for the next POSTs: `drop-after-apply` applies the
 * publication and then drops the connection, so the caller cannot know it worked.
 */
import http from 'node:http';
import { listenOnLoopback, readJsonBody } from './loopback-server.js';

export type PublishTrouble = 'drop-after-apply' | 'drop-before-apply' | '500';

export interface PublishRecord {
  id: string;
  key: string;
  body: unknown;
}

export interface FakePublishService {
  url: string;
  /** Publications applied, by key: each should be 1. */
  applied: Map<string, number>;
  /** POSTs received with a key already applied (deduplicated, not applied again). */
  duplicates: Map<string, number>;
  records: Map<string, PublishRecord>;
  /** GET probes received, by key. */
  probes: Map<string, number>;
  failNext(...trouble: PublishTrouble[]): void;
  close(): Promise<void>;
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

/** Start the fake service on an ephemeral port. */
export async function startFakePublishService(): Promise<FakePublishService> {
  const applied = new Map<string, number>();
  const duplicates = new Map<string, number>();
  const probes = new Map<string, number>();
  const records = new Map<string, PublishRecord>();
  const trouble: PublishTrouble[] = [];
  let seq = 0;
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readJsonBody(req);
    if (req.method === 'GET') {
      const key = url.searchParams.get('key') ?? '';
      bump(probes, key);
      const rec = records.get(key);
      res.writeHead(rec ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(rec ?? { error: 'not found' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || !key) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Idempotency-Key header required' }));
      return;
    }
    const t = trouble.shift();
    if (t === 'drop-before-apply') {
      req.socket.destroy();
      return;
    }
    if (t === '500') {
      res.writeHead(500).end();
      return;
    }
    const existing = records.get(key);
    if (existing) {
      bump(duplicates, key);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(existing));
      return;
    }
    const rec = { id: `pub-${++seq}`, key, body };
    records.set(key, rec);
    bump(applied, key);
    if (t === 'drop-after-apply') {
      req.socket.destroy();
      return;
    }
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: rec.id, key }));
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/publish`,
    applied,
    duplicates,
    records,
    probes,
    failNext: (...t) => trouble.push(...t),
    close,
  };
}
