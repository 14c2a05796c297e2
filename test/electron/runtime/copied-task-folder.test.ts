/**
 * A task folder copied under another name still holds the original's
 * checkpoint (its task_id). Every write names the task by that id, so a
 * resume, edit, rewind or stop of the copy would write into the original,
 * whose lease the writer never took: each is refused, and nothing is written
 * to either folder. A fork makes the copy a task of its own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { hashTree } from '../../support/hash-tree.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { captureCli } from '../cli/capture-cli.js';

let root: string;
let store: CheckpointStore;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-copied-'));
  store = openStore(root);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('a task folder copied under another name', () => {
  it('is refused by every write, which would land in the original, and nothing is written; a fork makes it a task of its own', async () => {
    // Interrupted mid-run, so resume, edit, rewind and stop each have something to do.
    const created = await store.create(makeCheckpoint('orig', 3, { agent: { name: 'checkpoint-demo', options: {} } }));
    await store.save('orig', {
      expectedVersion: created.checkpoint.version,
      checkpoint: { ...created.checkpoint, plan: created.checkpoint.plan.map((s, i) => (i === 0 ? { ...s, status: 'done' as const } : s)) },
      results: { s1: 'first' },
    });
    await fs.cp(path.join(root, 'orig'), path.join(root, 'copy'), { recursive: true });
    const before = await hashTree(root);

    for (const args of [
      ['resume', root, 'copy', '--trust'],
      ['edit', root, 'copy', 's2', '--value', '"by hand"'],
      ['rewind', root, 'copy', 's1', '--yes'],
      ['stop', root, 'copy'],
    ]) {
      const r = await captureCli(...args);
      expect(r.code, `${args[0]}: ${r.out}${r.err}`).toBe(2);
      expect(r.err).toContain('the folder copy holds task "orig" (its checkpoint\'s task_id)');
      expect(r.err).toContain(
        `nothing was written. To go on from it as a task of its own: waystation fork ${root} copy latest --task NEW-ID`,
      );
    }
    const after = await hashTree(root);
    for (const file of Object.keys(before)) expect(after[file], file).toBe(before[file]);
    expect(Object.keys(after).filter((f) => !(f in before))).toEqual([]);

    const fork = await captureCli('fork', root, 'copy', 'latest', '--task', 'mine');
    expect(fork.code).toBe(0);
    const mine = (await store.getTask('mine'))?.checkpoint;
    expect(mine).toMatchObject({ task_id: 'mine', forked_from: { task_id: 'copy', version: 2 } });
    expect(mine?.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
  }, 60_000);
});
