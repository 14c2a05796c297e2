/**
 * A process that saves versions of task `steady` one after the other, each a
 * consistent checkpoint with a new phase and a new message, under the task's
 * lease as a runner saves them (appended to segments), printing `ready` once
 * the task exists. Killed by whoever started it.
 *
 * Run: node steady-writer.mjs ROOT (bundled by the races scenario)
 */
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { acquireLease } from '../../../electron/store/file-lease.js';
import { makeCheckpoint, withoutVersion } from '../../electron/store/store-test-helpers.js';

const root = process.argv[2];
if (!root) throw new Error('usage: steady-writer ROOT');
const store = openStore(root);
let cp = (await store.getTask('steady'))?.checkpoint ?? (await store.create(makeCheckpoint('steady', 20))).checkpoint;
const lease = await acquireLease(path.join(root, 'steady'), 'steady', { owner: 'steady-writer' });
process.stdout.write('ready\n');
for (;;) {
  // A consistent checkpoint whatever the version: the plan stays pending, the phase and the history move on.
  const next = withoutVersion(cp);
  next.phase = `phase ${cp.version + 1}`;
  cp = (
    await store.save('steady', {
      expectedVersion: cp.version,
      checkpoint: next,
      appendHistory: [{ role: 'assistant', content: `m${cp.version + 1}` }],
      lease,
    })
  ).checkpoint;
  // A short pause keeps the history (which every getHistory replays) from outgrowing the test.
  await new Promise((resolve) => setTimeout(resolve, 5));
}
