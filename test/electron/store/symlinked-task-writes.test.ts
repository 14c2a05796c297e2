/**
 * A writer never writes through a task folder that is a symlink out of the
 * root: creating or saving such a task is refused and nothing outside changes.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { StoreWriteError } from '../../../electron/store/store-types.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let base: string;
beforeEach(async () => {
  base = await tempRoot('waystation-escape-write-');
  await fs.mkdir(path.join(base, 'root'));
});
afterEach(async () => {
  await cleanup(base);
});

it('refuses to create a task whose folder is a link out of the root', async () => {
  await fs.mkdir(path.join(base, 'outside', 'target'), { recursive: true });
  await fs.symlink(path.join(base, 'outside', 'target'), path.join(base, 'root', 'escape'));
  const before = await hashTree(path.join(base, 'outside'));

  const err = await openStore(path.join(base, 'root'))
    .create(makeCheckpoint('escape'))
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StoreWriteError);
  expect(String((err as StoreWriteError).message + JSON.stringify((err as StoreWriteError).problems))).toMatch(
    /outside the checkpoint directory/,
  );
  expect(await hashTree(path.join(base, 'outside'))).toEqual(before);
});

it('refuses to save a new version of a task reached through such a link', async () => {
  const outsideStore = openStore(path.join(base, 'outside'));
  const created = await outsideStore.create(makeCheckpoint('escape'));
  await fs.symlink(path.join(base, 'outside', 'escape'), path.join(base, 'root', 'escape'));
  const before = await hashTree(path.join(base, 'outside'));

  const err = await openStore(path.join(base, 'root'))
    .save('escape', { expectedVersion: 1, checkpoint: withoutVersion({ ...created.checkpoint, phase: 'planted' }) })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Error);
  expect(await hashTree(path.join(base, 'outside'))).toEqual(before);
});
