/**
 * What every fake HTTP service in the tests does the same way: read a JSON
 * body, listen on 127.0.0.1 at an ephemeral port, and close without waiting
 * for connections the fake left open on purpose.
 */
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The request's body parsed as JSON.
 *
 * Null when it is empty or not JSON: the fakes record what they were sent,
 * garbage included, instead of failing the request.
 */
export function readJsonBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(null);
      }
    });
  });
}

export interface LoopbackListener {
  port: number;
  /** Stop listening, dropping open connections (kept alive, or left hanging by a scripted fault). */
  close(): Promise<void>;
}

/** Start `server` on 127.0.0.1 at an ephemeral port. */
export async function listenOnLoopback(server: http.Server): Promise<LoopbackListener> {
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
