/**
 * A task folder that is a symlink out of the root is listed with an
 * outside-root problem, and nothing behind it is read: no version, no
 * history, no blob.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { TaskReadError } from '../../../electron/store/store-types.js';
import { cleanup, makeCheckpoint, tempRoot } from './store-test-helpers.js';

let base: string;
beforeEach(async () => {
  base = await tempRoot('waystation-escape-');
});
afterEach(async () => {
  await cleanup(base);
});

describe('a task folder symlinked out of the root', () => {
  it('is refused by every read that would follow it', async () => {
    const outside = (
      await openStore(path.join(base, 'outside')).create(makeCheckpoint('escape', 2, { goal: 'SECRET' }), {
        results: { s1: 'SECRET RESULT' },
      })
    ).checkpoint;
    await fs.mkdir(path.join(base, 'root'));
    await fs.symlink(path.join(base, 'outside', 'escape'), path.join(base, 'root', 'escape'));
    const store = openStore(path.join(base, 'root'));

    const entry = await store.getTask('escape');
    expect(entry?.checkpoint).toBeNull();
    expect(entry?.problems.map((p) => p.reason)).toEqual(['outside-root']);
    for (const read of [
      () => store.readVersion('escape', 1),
      () => store.history('escape'),
      () => store.readBlob('escape', outside.plan[0].result_ref!),
      () => store.readHistory('escape', 1),
    ]) {
      const err = await read().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TaskReadError);
      expect(String(err)).toMatch(/outside the checkpoint directory/);
      expect(String(err)).not.toMatch(/SECRET/);
    }
  });
});
