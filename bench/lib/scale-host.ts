/**
 * The host process of the inspector-at-scale benchmark: `waystation serve`
 * (the real web host, store, watcher and renderer) on one directory, plus a
 * way for the benchmark to ask how much memory it holds.
 *
 * Run: node bin/waystation-tsx.mjs bench/lib/scale-host.ts ROOT
 *
 * Prints one JSON line `{"type":"ready","url":...,"openMs":...,"hostStartAt":...}`
 * once the directory is open and the port listens. `hostStartAt` is the wall
 * clock (ms since the epoch) at which the host started, so the benchmark can
 * time from there to what it sees over HTTP or in Chromium. Each `mem` line on stdin answers
 * with `{"type":"mem",...process.memoryUsage()}`; under --expose-gc a `gc`
 * line collects first, so the heap figure is what the host keeps, not garbage
 * waiting for the next collection. Exits on SIGTERM or when stdin closes.
 */
import readline from 'node:readline';
import { startWebServer } from '../../electron/host/web-server.js';

const root = process.argv[2];
if (!root) {
  console.error('usage: scale-host.ts ROOT');
  process.exit(2);
}

const started = performance.now();
const server = await startWebServer(root);
const openMs = performance.now() - started;
const hostStartAt = performance.timeOrigin + started;
process.stdout.write(`${JSON.stringify({ type: 'ready', url: server.http.url, openMs, hostStartAt, pid: process.pid })}\n`);

const stop = async () => {
  await server.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const command = line.trim();
  if (command === 'gc' || command === 'mem') {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (command === 'gc' && gc) gc();
    process.stdout.write(`${JSON.stringify({ type: 'mem', collected: command === 'gc' && !!gc, ...process.memoryUsage() })}\n`);
  }
});
lines.on('close', () => void stop());
