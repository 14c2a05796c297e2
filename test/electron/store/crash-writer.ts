/**
 * A writer for the crash test: saves versions of task `crash` in a loop and
 * prints `saved N` after each save resolves, until it is killed.
 *
 * Run: node --import tsx test/electron/store/crash-writer.ts ROOT
 */
import { openStore } from '../../../electron/store/directory-store.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { makeCheckpoint, withoutVersion } from './store-test-helpers.js';

const root = process.argv[2];
if (!root) throw new Error('usage: crash-writer.ts ROOT');
const store = openStore(root);
const PLAN = 200;

let entry = await store.getTask('crash');
if (!entry) {
  await store.create(makeCheckpoint('crash', PLAN));
  entry = await store.getTask('crash');
}
let cp: Checkpoint = entry!.checkpoint!;
process.stdout.write(`ready ${cp.version}\n`);
for (;;) {
  const v = cp.version + 1;
  const next = withoutVersion(cp);
  next.plan = next.plan.slice();
  const i = v % PLAN;
  next.plan[i] = { ...next.plan[i], status: 'done', attempts: (next.plan[i].attempts ?? 0) + 1 };
  next.current_step = i;
  next.phase = `phase ${v}`;
  const res = await store.save('crash', {
    expectedVersion: cp.version,
    checkpoint: next,
    results: { [next.plan[i].id]: { version: v, text: 'r'.repeat(500) } },
    appendHistory: [{ role: 'assistant', content: `m${v}` }],
  });
  cp = res.checkpoint;
  process.stdout.write(`saved ${cp.version}\n`);
}
