/**
 * A TCP proxy between a store and the test cluster that cuts one connection
 * at the moment a transaction's commit goes by (a COMMIT, or the one
 * statement a save commits by): the faults a network gives
 * a database client, made on purpose against the real server.
 *
 * - `deliver`: the COMMIT reaches the server, which runs it, and the client's
 *   side is cut as the answer comes back, which is dropped (the save
 *   committed; the client cannot know).
 * - `withhold`: the client's side is cut and the COMMIT is kept back, to be
 *   handed to the server later (`release`), as a slow network might: the
 *   server process sits in its transaction meanwhile.
 */
import net from 'node:net';

export type CutMode = 'deliver' | 'withhold';

export interface CutOptions {
  /** What the cut waits for: any commit (a COMMIT, or a save's statement; the default), or only a save's statement. */
  target?: 'commit' | 'save';
  /** From the cut on, every new connection is closed as it opens: the server cannot be asked what became of the commit. */
  thenRefuse?: boolean;
}

export interface CutProxy {
  /** A URL like `url` that goes through the proxy. */
  url(url: string): string;
  /**
   * Cut the next connection that sends a COMMIT, as `mode` says; resolves when it has been cut. With `target`
   * 'save', only a save's statement is cut: a run's events and leases commit between its saves.
   */
  armCommitCut(mode: CutMode, opts?: CutOptions): Promise<void>;
  /** Hand a withheld COMMIT to the server; false when the server's side is gone by then. */
  release(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A commit going by: the simple-query message node-postgres sends for
 * `COMMIT` ('Q', its length, the text and a NUL), or the statement a save
 * commits by (pg-writes.ts: one call of waystation_commit_version, its own
 * transaction).
 */
function isCommit(chunk: Buffer, target: CutOptions['target']): boolean {
  const save = chunk.includes(Buffer.from('SELECT waystation_commit_version('));
  return target === 'save' ? save : save || chunk.includes(Buffer.from('COMMIT\0'));
}

/** Start a proxy to the server at 127.0.0.1:`port`. */
export async function startCutProxy(port: number): Promise<CutProxy> {
  let armed: { mode: CutMode; opts: CutOptions; done: () => void } | null = null;
  let held: { upstream: net.Socket; chunk: Buffer } | null = null;
  let refusing = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(port, '127.0.0.1');
    // Set once a delivered COMMIT is on its way: the server's next bytes are its answer, which the client never gets.
    let onAnswer: (() => void) | null = null;
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    upstream.on('data', (d: Buffer) => {
      if (onAnswer) {
        const cut = onAnswer;
        onAnswer = null;
        cut();
        return;
      }
      if (!client.destroyed) client.write(d);
    });
    upstream.on('end', () => client.end());
    client.on('data', (d: Buffer) => {
      if (armed && isCommit(d, armed.opts.target)) {
        const { mode, opts, done } = armed;
        armed = null;
        if (opts.thenRefuse) refusing = true;
        if (mode === 'deliver') {
          // The server has the COMMIT and answers once it has run it: only then does the client's side go, so the
          // save has committed for certain, however soon the client then asks what became of it.
          onAnswer = () => {
            client.destroy();
            done();
          };
          upstream.write(d);
        } else {
          held = { upstream, chunk: d };
          client.destroy();
          done();
        }
        return;
      }
      upstream.write(d);
    });
    client.on('end', () => {
      // A withheld COMMIT keeps the server's side open until it is released.
      if (held?.upstream !== upstream) upstream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxyPort = (server.address() as net.AddressInfo).port;
  return {
    url: (url) => {
      const u = new URL(url);
      u.host = `127.0.0.1:${proxyPort}`;
      return u.toString();
    },
    armCommitCut: (mode, opts = {}) =>
      new Promise<void>((resolve) => {
        armed = { mode, opts, done: resolve };
      }),
    release: async () => {
      const h = held;
      held = null;
      if (!h || h.upstream.destroyed || !h.upstream.writable) return false;
      return new Promise<boolean>((resolve) => {
        h.upstream.write(h.chunk, (err) => resolve(!err));
      });
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
