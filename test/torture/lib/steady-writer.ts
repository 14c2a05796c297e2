/**
 * A process that saves versions of task `steady` as fast as it can, each a
 * consistent checkpoint (steps done in order, a result and a message each),
 * printing `ready` once the task exists. Killed by whoever started it.
 *
 * Run: node steady-writer.mjs ROOT (bundled by the races scenario)
 */
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint, withoutVersion } from '../../electron/store/store-test-helpers.js';

const root = process.argv[2];
if (!root) throw new Error('usage: steady-writer ROOT');
const PLAN = 100_000;
const store = openStore(root);
let cp = (await store.getTask('steady'))?.checkpoint ?? (await store.create(makeCheckpoint('steady', PLAN))).checkpoint;
process.stdout.write('ready\n');
for (;;) {
  const next = withoutVersion(cp);
  const i = cp.version - 1;
  next.plan = next.plan.slice();
  next.plan[i] = { ...next.plan[i], status: 'done', attempts: 1 };
  next.current_step = i + 1;
  next.phase = `phase ${cp.version + 1}`;
  cp = (await store.save('steady', { expectedVersion: cp.version, checkpoint: next, results: { [next.plan[i].id]: { i } }, appendHistory: [{ role: 'assistant', content: `m${i}` }] })).checkpoint;
}
