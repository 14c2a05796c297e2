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
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ApiMethod, WaystationService } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import type { TaskListing } from '../../shared/checkpoint/task-summary.js';
import { dispatch, isApiMethod } from '../../shared/api/dispatch.js';
import { openEventStream } from './http-event-stream.js';
import { answerClientError, HttpFailure, readBody, sendError, sendJson, sendJsonPieces } from './http-replies.js';
import { serveStatic } from './http-static.js';
import { jsonArrayPieces } from './json-pieces.js';
import { guardConnections, type ConnectionGuard, type ConnectionLimits } from './connection-guard.js';

/** The API as the web host serves it: the service, plus the listing `waystation ls --json` prints. */
export type WebHostedService = WaystationService & {
  /** Every task's summary with its plan's steps, in the order and shape of `waystation ls --json`. */
  listTaskListings(): Promise<TaskListing[]>;
  /** The same as JSON text in pieces, sent as they are made; when absent, listTaskListings is sent whole. */
  listTaskListingsJson?(): Promise<Iterable<string>>;
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
  /**
   * The directory opening while the host already serves the page (web-server.ts): API requests wait for it, as
   * the desktop app's IPC calls do. A failed opening lets them through, answered as the service then stands.
   */
  ready?: Promise<unknown>;
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

/**
 * Refuse a request whose Host header does not name this host (a DNS-rebinding
 * page cannot pass) or whose Origin, when present, is not this host's own.
 */
function checkHostAndOrigin(req: http.IncomingMessage, allowedHosts: Set<string>, allowedOrigins: Set<string>): void {
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
}

/**
 * The decoded segments of an /api path, trailing empty ones dropped.
 * Dot-segments and encoded separators never name a task: they are refused
 * before any lookup, as is a segment that is not valid percent-encoding.
 */
function apiSegments(rawSegments: string[]): string[] {
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
  return segments;
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

  const call = async (res: http.ServerResponse, method: ApiMethod, input: unknown) => {
    const value = await dispatch(options.service, method, input, options.checkOutputs);
    // A list (the summaries of 10,000 tasks are 3.8 MiB of JSON) goes out in pieces, never as one string.
    if (Array.isArray(value)) return sendJsonPieces(res, 200, jsonArrayPieces<unknown>(value));
    sendJson(res, 200, value ?? null);
  };

  const routeApi = async (req: http.IncomingMessage, res: http.ServerResponse, segments: string[], query: URLSearchParams) => {
    const auth = req.headers.authorization;
    const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
    const given = bearer || query.get('token');
    if (!tokenMatches(given)) {
      throw new HttpFailure(
        401,
        new ApiError(
          'forbidden',
          given
            ? "this request's token is not this host's: the host makes a new one each time it starts, so open the URL it printed when it started (`waystation serve` prints it)"
            : 'this request carries no token: send the one `waystation serve` printed (Authorization: Bearer <token> or ?token=<token>)',
        ),
      );
    }
    guard?.authenticated(req.socket);
    if (options.ready) await options.ready.catch(() => {});
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
      return call(res, id, await readBody(req, maxBody));
    }
    if (!isGet)
      throw new HttpFailure(
        405,
        new ApiError('invalid-input', `${method} is not allowed here; only POST /api/rpc/<method> changes anything`),
      );
    if (rest.length === 0 && resource === 'events' && id === undefined)
      return openEventStream(req, res, query, { service: options.service, streams, heartbeatMs, maxBuffered, maxStreams });
    if (rest.length === 0 && resource === 'tasks') {
      if (id === undefined) {
        const service = options.service;
        if (service.listTaskListingsJson) return sendJsonPieces(res, 200, await service.listTaskListingsJson());
        return sendJsonPieces(res, 200, jsonArrayPieces(await service.listTaskListings()));
      }
      if (sub === undefined) {
        const version = query.get('version');
        const input: Record<string, unknown> = { taskId: id };
        if (version !== null) {
          // A query parameter is text: one that is not a version number is said so, not as "expected number, received string".
          if (!/^[1-9]\d{0,14}$/.test(version)) {
            throw new HttpFailure(
              400,
              new ApiError('invalid-input', `?version= takes a version number (1, 2, 3, ...), not ${JSON.stringify(version.slice(0, 40))}`),
            );
          }
          input.version = Number(version);
        }
        return call(res, 'getTask', input);
      }
      if (sub === 'history') {
        // The route takes no parameter: one given is refused rather than left unread (the RPC getHistory takes `after`).
        const unknown = [...query.keys()].filter((k) => k !== 'token');
        if (unknown.length > 0) {
          throw new HttpFailure(
            400,
            new ApiError(
              'invalid-input',
              `GET /api/tasks/<id>/history takes no parameter (${unknown.map((k) => `?${k}=`).join(', ')} given); POST /api/rpc/getHistory takes {"after": ...}`,
            ),
          );
        }
        return call(res, 'getHistory', { taskId: id });
      }
    }
    if (rest.length === 0 && sub === undefined && id === undefined) {
      if (resource === 'agents') return call(res, 'listAgents', {});
      if (resource === 'directory') return call(res, 'getDirectory', {});
    }
    throw new HttpFailure(404, new ApiError('not-found', `no API route ${method} /${segments.join('/')}`));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    checkHostAndOrigin(req, allowedHosts, allowedOrigins);
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1));
    if (!rawPath.startsWith('/')) throw new HttpFailure(400, new ApiError('invalid-input', 'the request path must start with /'));
    const rawSegments = rawPath.split('/').slice(1);
    if (rawSegments[0] === 'api') {
      const segments = apiSegments(rawSegments);
      return routeApi(req, res, segments, query);
    }
    return serveStatic(req, res, rawPath, staticDir);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => sendError(res, err));
  });
  server.on('clientError', answerClientError);
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
