/**
 * The host's events as Server-Sent Events: one stream per client, resumed
 * from the last event id it saw, kept open by pings, and dropped when the
 * client stops reading (it resumes from its last id).
 */
import http from 'node:http';
import type { HostEvent, WaystationService } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import { COMMON_HEADERS, HttpFailure } from './http-replies.js';

export interface EventStreamOptions {
  service: Pick<WaystationService, 'subscribe'>;
  /** The open streams, so the host can end them when it closes. */
  streams: Set<http.ServerResponse>;
  heartbeatMs: number;
  maxBuffered: number;
  /** Open streams, at most: a new one beyond it closes the oldest (which resumes by Last-Event-ID). */
  maxStreams: number;
}

/** Open an event stream on `res`, from the `Last-Event-ID` header or the `lastEventId` query parameter. */
export function openEventStream(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  query: URLSearchParams,
  opts: EventStreamOptions,
): void {
  const { service, streams, heartbeatMs, maxBuffered, maxStreams } = opts;
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
  unsubscribe = service.subscribe(send, lastEventId);
}
