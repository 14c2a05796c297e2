/**
 * The memory baseline of the inspector-at-scale benchmark: a process that
 * does nothing but read every task's `checkpoint.json`, parse it and keep the
 * parsed objects. Whatever a host holds beyond this is the cost of its design.
 *
 * Run: node --expose-gc bench/lib/parsed-checkpoints-holder.mjs ROOT
 *
 * Plain Node with no code of the project's, as the host it is compared with
 * runs (scale-host.mjs). Prints one JSON line
 * `{"type":"mem","held":N,"maxRss":...,...process.memoryUsage()}` (after a
 * collection under --expose-gc; `maxRss`: the peak resident set, bytes) and exits.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

const root = process.argv[2];
if (!root) {
  console.error('usage: parsed-checkpoints-holder.mjs ROOT');
  process.exit(2);
}
const names = (await fs.readdir(root, { withFileTypes: true }))
  .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
  .map((d) => d.name);
// 32 reads in flight, as the raw read baseline of the benchmark does.
const held = new Array(names.length);
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < names.length) {
      const i = next++;
      held[i] = JSON.parse(await fs.readFile(path.join(root, names[i], 'checkpoint.json'), 'utf8'));
    }
  }),
);
globalThis.gc?.();
const maxRss = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ type: 'mem', held: held.length, maxRss, ...process.memoryUsage() })}\n`);
// Keep `held` reachable until the figure is taken.
if (held.length < 0) console.log(held);
