/**
 * A writer for the crash test: saves versions of task `crash` in a loop and
 * prints `saved N` after each save resolves, until it is killed.
 *
 * Run: node --import tsx test/electron/store/crash-writer.ts ROOT
 */
import { openStore } from '../../../electron/store/directory-store.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { loopedSave, makeCheckpoint } from './store-test-helpers.js';

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
  cp = (await store.save('crash', loopedSave(cp, cp.version + 1, PLAN, 500))).checkpoint;
  process.stdout.write(`saved ${cp.version}\n`);
}
