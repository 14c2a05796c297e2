/**
 * The host process of the inspector-at-scale benchmark: `waystation serve`
 * (the real web host, store, watcher and renderer) on one directory, plus a
 * way for the benchmark to ask how much memory it holds.
 *
 * Run: node bench/lib/scale-host.mjs ROOT
 *
 * Plain Node, as `waystation serve` runs: the compiled host in dist/ when its
 * build stamp matches the sources (bin/waystation.mjs's rule), otherwise the
 * TypeScript sources through tsx, which start slower and hold more memory
 * (the loader, and the watcher thread compiling its own modules). The ready
 * line says which (`from`), and the benchmark prints it beside its figures.
 *
 * Prints one JSON line `{"type":"ready","url":...,"listenMs":...,"hostStartAt":...,"from":...}`
 * once the port listens (the directory opens meanwhile; requests wait for it),
 * then `{"type":"opened","openMs":...}` once it is open. `hostStartAt` is the wall
 * clock (ms since the epoch) at which the host started opening the directory,
 * so the benchmark can time from there to what it sees over HTTP or in
 * Chromium. Each `mem` line on stdin answers with
 * `{"type":"mem","maxRss":...,...process.memoryUsage()}` (`maxRss`: the
 * process's peak resident set, bytes); under --expose-gc a `gc` line collects
 * first, so the heap figure is what the host keeps, not garbage waiting for
 * the next collection. Exits on SIGTERM or when stdin closes.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const root = process.argv[2];
if (!root) {
  console.error('usage: scale-host.mjs ROOT');
  process.exit(2);
}

/** Whether dist/ holds a build of these very sources (see electron/runtime/build-stamp.ts). */
async function distIsFresh() {
  try {
    const stamp = await import(pathToFileURL(path.join(repo, 'dist', 'electron', 'runtime', 'build-stamp.js')).href);
    return stamp.compiledBuildState(repo).state === 'fresh';
  } catch {
    return false;
  }
}

const from = (await distIsFresh()) ? 'dist' : 'sources';
let entry = path.join(repo, 'dist', 'electron', 'host', 'web-server.js');
if (from === 'sources') {
  const { register } = await import('tsx/esm/api');
  register();
  entry = path.join(repo, 'electron', 'host', 'web-server.ts');
}
const { startWebServer } = await import(pathToFileURL(entry).href);

const started = performance.now();
const server = await startWebServer(root);
const listenMs = performance.now() - started;
const hostStartAt = performance.timeOrigin + started;
// Ready once it listens, as `waystation serve` prints its URL: the directory opens meanwhile, and requests wait for it.
process.stdout.write(`${JSON.stringify({ type: 'ready', url: server.http.url, listenMs, hostStartAt, from, pid: process.pid })}\n`);
server.opened.then(
  () => process.stdout.write(`${JSON.stringify({ type: 'opened', openMs: performance.now() - started })}\n`),
  (err) => {
    console.error(`the host could not open ${root}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

const stop = async () => {
  await server.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const command = line.trim();
  if (command === 'gc' || command === 'mem') {
    const gc = globalThis.gc;
    if (command === 'gc' && gc) gc();
    const maxRss = process.resourceUsage().maxRSS * 1024;
    process.stdout.write(`${JSON.stringify({ type: 'mem', collected: command === 'gc' && !!gc, maxRss, ...process.memoryUsage() })}\n`);
  }
});
lines.on('close', () => void stop());
