/**
 * A benchmark's view of a running Waystation host: the host process it
 * started, its API over real HTTP, and its SSE event stream, as any client
 * (the renderer, a script) would use them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { HostEvent } from '../../shared/api/contract.js';
import { sseReader } from './sse-reader.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX = path.join(REPO, 'bin', 'waystation-tsx.mjs');

export interface MemoryReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** The process's peak resident set so far, bytes (getrusage's ru_maxrss). */
  maxRss: number;
}

/** A child process started from a bench/lib script, talking JSON lines on stdout. */
export interface BenchChild {
  readonly child: ChildProcess;
  /** The next JSON line of `type`. */
  next<T>(type: string, timeoutMs?: number): Promise<T>;
  send(line: string): void;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Start `bench/lib/<script> ...args` with the GC exposed: a `.mjs` script with
 * plain Node, as a user's `waystation` runs, a `.ts` one through tsx.
 */
export function startBenchChild(script: string, args: string[]): BenchChild {
  const file = path.join(REPO, 'bench', 'lib', script);
  // A child that cannot start would only be seen as a missing "ready" line, long after, without its reason.
  if (!existsSync(file)) throw new Error(`bench/lib/${script} does not exist`);
  const argv = script.endsWith('.mjs') ? ['--expose-gc', file, ...args] : ['--expose-gc', TSX, file, ...args];
  const child = spawn(process.execPath, argv, {
    cwd: REPO,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
  const queued: Record<string, unknown>[] = [];
  const waiting: { type: string; resolve: (v: unknown) => void }[] = [];
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const i = waiting.findIndex((w) => w.type === msg.type);
    if (i >= 0) waiting.splice(i, 1)[0].resolve(msg);
    else queued.push(msg);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    next<T>(type: string, timeoutMs = 120_000): Promise<T> {
      const i = queued.findIndex((m) => m.type === type);
      if (i >= 0) return Promise.resolve(queued.splice(i, 1)[0] as T);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${script} sent no "${type}" within ${timeoutMs} ms:\n${stderr.join('')}`)),
          timeoutMs,
        );
        const onExit = () => reject(new Error(`${script} exited (${child.exitCode}) before sending "${type}":\n${stderr.join('')}`));
        child.once('exit', onExit);
        waiting.push({
          type,
          resolve: (v) => {
            clearTimeout(timer);
            child.off('exit', onExit);
            resolve(v as T);
          },
        });
      });
    },
    send(line: string) {
      child.stdin!.write(`${line}\n`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The API of a host at `url` (the printed URL, token included). */
export class HostClient {
  readonly origin: string;
  readonly token: string;

  constructor(readonly url: string) {
    const u = new URL(url);
    this.origin = u.origin;
    this.token = u.searchParams.get('token') ?? '';
  }

  /** GET an /api route and parse the JSON body. */
  async get<T>(route: string): Promise<T> {
    const res = await fetch(`${this.origin}${route}`, { headers: { authorization: `Bearer ${this.token}` } });
    const body = (await res.json()) as T;
    if (!res.ok) throw new Error(`GET ${route}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  }

  /** Call an API method over POST /api/rpc/<method>. */
  async rpc<T>(method: string, input: unknown = {}): Promise<T> {
    const res = await fetch(`${this.origin}/api/rpc/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    const body = (await res.json()) as T;
    if (!res.ok) throw new Error(`${method}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  }

  /**
   * Subscribe to GET /api/events; `onEvent` gets each HostEvent with the
   * time it arrived (performance.now()). Resolves once the stream is open.
   */
  async subscribe(onEvent: (event: HostEvent, at: number) => void): Promise<{ close(): void }> {
    const abort = new AbortController();
    const res = await fetch(`${this.origin}/api/events?token=${this.token}`, { signal: abort.signal });
    if (!res.ok || !res.body) throw new Error(`GET /api/events: ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let at = 0;
    const read = sseReader(({ data }) => onEvent(JSON.parse(data) as HostEvent, at));
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          at = performance.now();
          read(decoder.decode(value, { stream: true }));
        }
      } catch {
        // Aborted on close.
      }
    })();
    return { close: () => abort.abort() };
  }
}
