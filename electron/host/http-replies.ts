/**
 * How the loopback host answers: the headers every reply carries, JSON
 * bodies, errors as `ApiErrorBody` with their status, and request bodies
 * read within a size limit.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../../shared/api/api-error.js';
import { asServiceError, httpStatusOf } from '../../shared/api/dispatch.js';

/** Headers on every reply, whatever it holds. */
export const COMMON_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  // The page URL carries the token: never send it anywhere as a referrer.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** A refusal with its own HTTP status (401, 405, 413, 415, ...), carrying the API error its body holds. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly apiError: ApiError,
  ) {
    super(apiError.message);
  }
}

/** Send `body` as JSON with `status`; never cached. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Send JSON text made in `pieces` with `status`, each piece written as it is
 * made and the next one made once the socket has taken it (chunked, so no
 * length is needed up front); never cached. A client gone mid-way ends it.
 */
export async function sendJsonPieces(res: http.ServerResponse, status: number, pieces: Iterable<string>): Promise<void> {
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  for (const piece of pieces) {
    if (res.destroyed) return;
    if (!res.write(piece))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
  }
  res.end();
}

/** Send whatever a request failed with as an ApiErrorBody and its status; a reply already under way is cut off. */
export function sendError(res: http.ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof HttpFailure) return sendJson(res, err.status, err.apiError.toBody());
  const apiError = asServiceError(err);
  sendJson(res, httpStatusOf(apiError.code), apiError.toBody());
}

/** A request's JSON body (`{}` when empty), refused past `maxBody` bytes or when it does not parse. */
export function readBody(req: http.IncomingMessage, maxBody: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBody) {
      reject(new HttpFailure(413, new ApiError('too-large', `the request body is larger than ${maxBody} bytes; nothing was done`)));
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
        reject(new HttpFailure(413, new ApiError('too-large', `the request body is larger than ${maxBody} bytes; nothing was done`)));
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
}

/**
 * Answer a request Node's parser refused before it reached a handler, on its socket: a request line and headers
 * over Node's limit (16 KiB; a long URL) gets 431, anything else malformed 400, each as an ApiErrorBody, and the
 * connection is closed. Without this the socket was only dropped, and a client saw a reset it could not explain.
 * A client already gone, and a request too slow to arrive (connection-guard.ts: a half-sent request holds a
 * descriptor), are let go without a word.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!err.code?.startsWith('HPE_') || !socket.writable) {
    socket.destroy();
    return;
  }
  const overflow = err.code === 'HPE_HEADER_OVERFLOW';
  const [status, apiError] = overflow
    ? [
        431,
        new ApiError(
          'too-large',
          `the request's URL and headers are over ${Math.round(http.maxHeaderSize / 1024)} KiB, the most the host reads; send long values in a request body`,
        ),
      ]
    : [400, new ApiError('invalid-input', `the request is not well-formed HTTP (${err.code ?? err.message})`)];
  const text = JSON.stringify(apiError.toBody());
  const headers = {
    ...COMMON_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(text),
    Connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head}\r\n${text}`);
}
