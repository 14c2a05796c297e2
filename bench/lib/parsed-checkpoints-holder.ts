/**
 * The memory baseline of the inspector-at-scale benchmark: a process that
 * does nothing but read every task's `checkpoint.json`, parse it and keep the
 * parsed objects. Whatever a host holds beyond this is the cost of its design.
 *
 * Run: node bin/waystation-tsx.mjs bench/lib/parsed-checkpoints-holder.ts ROOT
 *
 * Prints one JSON line `{"type":"mem","held":N,...process.memoryUsage()}`
 * (after a collection under --expose-gc) and exits.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { mapLimit } from '../../electron/store/directory-scan.js';

const root = process.argv[2];
if (!root) {
  console.error('usage: parsed-checkpoints-holder.ts ROOT');
  process.exit(2);
}
const names = (await fs.readdir(root, { withFileTypes: true }))
  .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
  .map((d) => d.name);
const held = await mapLimit(
  names,
  32,
  async (name) => JSON.parse(await fs.readFile(path.join(root, name, 'checkpoint.json'), 'utf8')) as unknown,
);
(globalThis as { gc?: () => void }).gc?.();
process.stdout.write(`${JSON.stringify({ type: 'mem', held: held.length, ...process.memoryUsage() })}\n`);
// Keep `held` reachable until the figure is taken.
if (held.length < 0) console.log(held);
