/**
 * Writes the next version of a task from a separate process, as another
 * Waystation (or any writer following docs/FORMAT.md) would: the e2e test
 * runs this to check that an open inspector picks the change up live.
 *
 * Usage: waystation-tsx test/e2e/write-version.ts ROOT TASK_ID NOTE
 */
import { openStore } from '../../electron/store/directory-store.js';

const [root, taskId, note] = process.argv.slice(2);
if (!root || !taskId || !note) {
  console.error('usage: write-version.ts ROOT TASK_ID NOTE');
  process.exit(2);
}
const store = openStore(root);
const entry = await store.getTask(taskId);
if (!entry?.checkpoint) {
  console.error(`task ${taskId} cannot be read in ${root}`);
  process.exit(1);
}
const cp = entry.checkpoint;
const { version: _v, ...rest } = cp;
const saved = await store.save(taskId, {
  expectedVersion: cp.version,
  checkpoint: {
    ...rest,
    resume_hint: note,
    run: { ...cp.run, updated_at: new Date().toISOString() },
    source: { kind: 'human-edit', actor: 'external-writer', note },
  },
});
console.log(String(saved.checkpoint.version));
