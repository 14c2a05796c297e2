/**
 * The loopback web host: the built renderer and the Waystation API over HTTP
 * and Server-Sent Events, on 127.0.0.1 only, behind a per-start token.
 *
 * Routes (every /api route needs the token, as `Authorization: Bearer <token>`
 * or `?token=<token>`; JSON in and out; errors are `ApiErrorBody` with a
 * matching status: 400 invalid-input, 401/403 forbidden, 404 not-found,
 * 409 conflict/read-only, 413 body too large, 500 failed):
 *
 *   POST /api/rpc/<method>      body: the method's input as JSON ({} when none)
 *                               -> 200 the method's output. Every WaystationApi
 *                               method is reachable this way.
 *   GET  /api/tasks             -> the JSON `waystation ls --json` prints: every
 *                               task's summary with its plan's steps. The app's
 *                               own list goes through POST /api/rpc/listTasks,
 *                               which leaves the plans out (step counts only).
 *   GET  /api/tasks/<id>        ?version=N -> getTask
 *   GET  /api/tasks/<id>/history          -> getHistory
 *   GET  /api/agents            -> listAgents
 *   GET  /api/directory         -> getDirectory
 *   GET  /api/events            SSE; ?token=... (EventSource cannot send
 *                               headers), optional ?lastEventId=N for the first
 *                               connection; the browser's `Last-Event-ID`
 *                               header on reconnects wins over the query.
 *                               Each event: `id: <HostEvent.id>` and
 *                               `data: <HostEvent as JSON>` (default `message`
 *                               type); `: ping` comments keep it open.
 *   GET  /*                     the renderer from dist-renderer/ (no token; it
 *                               holds no data), index.html for unknown routes.
 *
 * The page is opened as http://127.0.0.1:<port>/?token=<token>.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApiError, type ApiMethod, type HostEvent, type WaystationService } from '../../shared/api/contract.js';
import type { TaskListing } from '../../shared/checkpoint/task-summary.js';
import { asServiceError, dispatch, httpStatusOf, isApiMethod } from '../../shared/api/dispatch.js';
import { PAGE_CSP } from '../../shared/api/page-csp.js';
import { PathOutsideRootError, checkRelativePath, resolveInsideRoot } from './path-confinement.js';
import { guardConnections, type ConnectionGuard, type ConnectionLimits } from './connection-guard.js';

/** The API as the web host serves it: the service, plus the listing `waystation ls --json` prints. */
export type WebHostedService = WaystationService & {
  /** Every task's summary with its plan's steps, in the order and shape of `waystation ls --json`. */
  listTaskListings(): Promise<TaskListing[]>;
};

export interface HttpHostOptions {
  service: WebHostedService;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The built renderer (dist-renderer/); null serves the API only. */
  staticDir?: string | null;
  /** Fixed token, for tests; by default 32 random bytes per start. */
  token?: string;
  /** Largest accepted request body, bytes. */
  maxBodyBytes?: number;
  /** Interval of SSE keep-alive comments, ms. */
  heartbeatMs?: number;
  /** An SSE client that lets this much output pile up unread is dropped (it resumes with Last-Event-ID). */
  maxBufferedBytes?: number;
  /** Check every answer against the contract's output schemas (default: in development and tests, see outputChecksEnabled). */
  checkOutputs?: boolean;
  /** Timeouts and the cap on connections without the token (connection-guard.ts). */
  connections?: ConnectionLimits;
  /** Open event streams, at most: a new one beyond it closes the oldest (which resumes by Last-Event-ID). */
  maxStreams?: number;
}

export interface HttpHost {
  /** The URL to open, token included. */
  readonly url: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  /** Open SSE streams (for tests and diagnostics). */
  readonly openStreams: number;
  /** Connections open that have not yet carried a request with the token. */
  readonly unauthenticatedConnections: number;
  /** Stop accepting, end every stream and connection. */
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const COMMON_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  // The page URL carries the token: never send it anywhere as a referrer.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly apiError: ApiError,
  ) {
    super(apiError.message);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * Start the loopback host.
 *
 * Binds 127.0.0.1 only. Every request is checked, in order: the Host header
 * names this host (a DNS-rebinding page cannot pass), an Origin header, when
 * present, is this host's own, and /api requests carry the token.
 */
export async function startHttpHost(options: HttpHostOptions): Promise<HttpHost> {
  const token = options.token ?? randomBytes(32).toString('hex');
  const tokenDigest = sha256(token);
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
  const staticDir = options.staticDir ? path.resolve(options.staticDir) : null;
  const streams = new Set<http.ServerResponse>();
  const maxStreams = options.maxStreams ?? 64;
  let guard: ConnectionGuard | null = null;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  const tokenMatches = (candidate: string | null | undefined): boolean => {
    if (!candidate) return false;
    // Equal-length digests make the comparison constant-time whatever was sent.
    return timingSafeEqual(sha256(candidate), tokenDigest);
  };

  const sendJson = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...COMMON_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
  };

  const sendError = (res: http.ServerResponse, err: unknown) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof HttpFailure) return sendJson(res, err.status, err.apiError.toBody());
    const apiError = asServiceError(err);
    sendJson(res, httpStatusOf(apiError.code), apiError.toBody());
  };

  const readBody = (req: http.IncomingMessage): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > maxBody) {
        reject(new HttpFailure(413, new ApiError('invalid-input', `the request body is larger than ${maxBody} bytes; nothing was done`)));
        req.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let failed = false;
      req.on('data', (chunk: Buffer) => {
        if (failed) return;
        size += chunk.length;
        if (size > maxBody) {
          failed = true;
          reject(new HttpFailure(413, new ApiError('invalid-input', `the request body is larger than ${maxBody} bytes; nothing was done`)));
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (failed) return;
        const text = Buffer.concat(chunks).toString('utf8');
        if (text.trim() === '') return resolve({});
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new HttpFailure(400, new ApiError('invalid-input', 'the request body is not valid JSON')));
        }
      });
      req.on('error', reject);
    });

  const call = async (res: http.ServerResponse, method: ApiMethod, input: unknown) => {
    const value = await dispatch(options.service, method, input, options.checkOutputs);
    sendJson(res, 200, value ?? null);
  };

  const openEventStream = (req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams) => {
    const header = req.headers['last-event-id'];
    const raw = (Array.isArray(header) ? header[0] : header) ?? query.get('lastEventId') ?? undefined;
    let lastEventId: number | undefined;
    if (raw !== undefined && raw !== '') {
      if (!/^\d{1,15}$/.test(raw.trim())) {
        throw new HttpFailure(
          400,
          new ApiError('invalid-input', `Last-Event-ID must be a non-negative integer, got ${JSON.stringify(raw.slice(0, 40))}`),
        );
      }
      lastEventId = Number(raw.trim());
    }
    res.writeHead(200, {
      ...COMMON_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 2000\n: connected\n\n');
    streams.add(res);
    // Streams are counted apart from requests: a client beyond the cap closes the oldest, which reconnects if it is still wanted.
    while (streams.size > maxStreams) {
      const oldest = streams.values().next().value as http.ServerResponse;
      streams.delete(oldest);
      oldest.end();
    }
    let unsubscribe: () => void = () => {};
    const drop = () => {
      unsubscribe();
      clearInterval(heartbeat);
      streams.delete(res);
    };
    const send = (event: HostEvent) => {
      if (res.destroyed || res.writableEnded) return drop();
      res.write(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`);
      // A client that stopped reading would make us buffer without bound; it resumes from its last id.
      if (res.writableLength > maxBuffered) {
        drop();
        res.destroy();
      }
    };
    const heartbeat = setInterval(() => {
      if (!res.destroyed) res.write(': ping\n\n');
    }, heartbeatMs);
    heartbeat.unref();
    res.on('close', drop);
    unsubscribe = options.service.subscribe(send, lastEventId);
  };

  const routeApi = async (req: http.IncomingMessage, res: http.ServerResponse, segments: string[], query: URLSearchParams) => {
    const auth = req.headers.authorization;
    const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
    if (!tokenMatches(bearer || query.get('token'))) {
      throw new HttpFailure(
        401,
        new ApiError(
          'forbidden',
          'this request lacks the token printed by `waystation serve` (Authorization: Bearer <token> or ?token=<token>)',
        ),
      );
    }
    guard?.authenticated(req.socket);
    const method = req.method ?? 'GET';
    const [, resource, id, sub, ...rest] = segments;
    const isGet = method === 'GET' || method === 'HEAD';
    if (resource === 'rpc' && id !== undefined && sub === undefined) {
      if (method !== 'POST') throw new HttpFailure(405, new ApiError('invalid-input', 'RPC calls are POST requests'));
      if (!isApiMethod(id))
        throw new HttpFailure(404, new ApiError('not-found', `there is no API method named ${JSON.stringify(id.slice(0, 80))}`));
      const type = req.headers['content-type'] ?? '';
      // A JSON content type cannot be sent cross-site without a CORS preflight, which this host never grants.
      if (!/^application\/json\b/i.test(type)) {
        throw new HttpFailure(415, new ApiError('invalid-input', 'RPC bodies must be sent as Content-Type: application/json'));
      }
      return call(res, id, await readBody(req));
    }
    if (!isGet)
      throw new HttpFailure(
        405,
        new ApiError('invalid-input', `${method} is not allowed here; only POST /api/rpc/<method> changes anything`),
      );
    if (rest.length === 0 && resource === 'events' && id === undefined) return openEventStream(req, res, query);
    if (rest.length === 0 && resource === 'tasks') {
      if (id === undefined) return sendJson(res, 200, await options.service.listTaskListings());
      if (sub === undefined) {
        const version = query.get('version');
        const input: Record<string, unknown> = { taskId: id };
        if (version !== null) input.version = /^\d+$/.test(version) ? Number(version) : version;
        return call(res, 'getTask', input);
      }
      if (sub === 'history') return call(res, 'getHistory', { taskId: id });
    }
    if (rest.length === 0 && sub === undefined && id === undefined) {
      if (resource === 'agents') return call(res, 'listAgents', {});
      if (resource === 'directory') return call(res, 'getDirectory', {});
    }
    throw new HttpFailure(404, new ApiError('not-found', `no API route ${method} /${segments.join('/')}`));
  };

  const serveStatic = async (req: http.IncomingMessage, res: http.ServerResponse, rawPath: string) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...COMMON_HEADERS, Allow: 'GET, HEAD' }).end();
      return;
    }
    const indexFile = staticDir ? path.join(staticDir, 'index.html') : null;
    const hasIndex = indexFile
      ? await fs.stat(indexFile).then(
          (s) => s.isFile(),
          () => false,
        )
      : false;
    if (!staticDir || !hasIndex) {
      const text = `The Waystation renderer is not built${staticDir ? ` (no index.html in ${staticDir})` : ''}.\nRun \`npm run build:renderer\` and restart \`waystation serve\`. The API under /api works without it.\n`;
      res.writeHead(503, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      res.writeHead(400, COMMON_HEADERS).end();
      return;
    }
    let file: string;
    // Only the one leading slash is the URL's; `//etc/passwd` asks for an absolute path and is refused as such.
    const relative = decoded.slice(1);
    try {
      checkRelativePath(relative, staticDir);
      file = await resolveInsideRoot(staticDir, relative);
    } catch (err) {
      if (err instanceof PathOutsideRootError) {
        res.writeHead(403, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' }).end('outside the renderer folder\n');
        return;
      }
      throw err;
    }
    let stats = await fs.stat(file).catch(() => null);
    if (!stats || !stats.isFile()) {
      // Client-side routes fall back to the app; a missing asset is a real 404.
      if (path.extname(decoded) !== '') {
        res.writeHead(404, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      file = indexFile!;
      stats = await fs.stat(file);
    }
    const isHtml = path.extname(file) === '.html';
    res.writeHead(200, {
      ...COMMON_HEADERS,
      'Content-Type': CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': stats.size,
      'Cache-Control': isHtml ? 'no-store' : 'no-cache',
      ...(isHtml ? { 'Content-Security-Policy': PAGE_CSP, 'X-Frame-Options': 'DENY' } : {}),
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.end(await fs.readFile(file));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const host = req.headers.host ?? '';
    if (!allowedHosts.has(host.toLowerCase())) {
      throw new HttpFailure(
        403,
        new ApiError('forbidden', `the Host header ${JSON.stringify(host.slice(0, 100))} is not this loopback host`),
      );
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      throw new HttpFailure(
        403,
        new ApiError(
          'forbidden',
          `requests from ${JSON.stringify(origin.slice(0, 100))} are refused; only ${[...allowedOrigins][0]} may call this host`,
        ),
      );
    }
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1));
    if (!rawPath.startsWith('/')) throw new HttpFailure(400, new ApiError('invalid-input', 'the request path must start with /'));
    const rawSegments = rawPath.split('/').slice(1);
    if (rawSegments[0] === 'api') {
      const segments: string[] = [];
      for (const raw of rawSegments) {
        let segment: string;
        try {
          segment = decodeURIComponent(raw);
        } catch {
          throw new HttpFailure(400, new ApiError('invalid-input', 'the request path is not valid percent-encoding'));
        }
        // Dot-segments and encoded separators never name a task; refuse before any lookup.
        if (raw === '.' || raw === '..' || segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) {
          throw new HttpFailure(
            400,
            new ApiError('invalid-input', `the path segment ${JSON.stringify(segment.slice(0, 80))} is not allowed in an API path`),
          );
        }
        segments.push(segment);
      }
      while (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
      return routeApi(req, res, segments, query);
    }
    return serveStatic(req, res, rawPath);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => sendError(res, err));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  guard = guardConnections(server, options.connections);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  allowedOrigins = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    get openStreams() {
      return streams.size;
    },
    get unauthenticatedConnections() {
      return guard?.unauthenticated ?? 0;
    },
    async close() {
      for (const res of streams) res.end();
      streams.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
