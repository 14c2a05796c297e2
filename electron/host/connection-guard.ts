/**
 * Connections that have not shown the token cannot exhaust the host.
 *
 * Anyone on the machine can open connections to the loopback port without
 * the token: a thousand half-sent requests once held every file descriptor
 * the process had, and legitimate requests failed until they closed. So:
 * headers must arrive within a few seconds and a whole request within a
 * bounded time; connections that have not yet carried a request with the
 * token are capped, the oldest closed to make room for the newest (a real
 * client's request is always among the newest); and event streams, which
 * are long-lived by design, are counted apart under a cap of their own.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Connections that have not yet sent a request with the token, at most. */
  maxUnauthenticated?: number;
  /** Time for a request's headers to arrive, ms. */
  headersTimeoutMs?: number;
  /** Time for a whole request (headers and body) to arrive, ms. */
  requestTimeoutMs?: number;
  /** An idle kept-alive connection is closed after this, ms. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_CONNECTION_LIMITS: Required<ConnectionLimits> = {
  maxUnauthenticated: 128,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

export interface ConnectionGuard {
  /** A request on this socket carried the token: it no longer counts against the cap. */
  authenticated(socket: Socket): void;
  /** Connections not yet authenticated, now. */
  readonly unauthenticated: number;
}

/** Apply the limits to a server; see the module comment. */
export function guardConnections(server: http.Server, limits: ConnectionLimits = {}): ConnectionGuard {
  const l = { ...DEFAULT_CONNECTION_LIMITS, ...limits };
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.requestTimeoutMs;
  server.keepAliveTimeout = l.keepAliveTimeoutMs;
  // Node checks the two timeouts above on this interval; by default only every 30 s.
  (server as http.Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(1000, l.headersTimeoutMs);
  // Insertion order is age: the first is the oldest.
  const pending = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    pending.add(socket);
    socket.once('close', () => pending.delete(socket));
    while (pending.size > l.maxUnauthenticated) {
      const oldest = pending.values().next().value as Socket;
      pending.delete(oldest);
      oldest.destroy();
    }
  });
  return {
    authenticated(socket) {
      pending.delete(socket);
    },
    get unauthenticated() {
      return pending.size;
    },
  };
}
