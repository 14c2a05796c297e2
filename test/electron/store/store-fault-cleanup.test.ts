/**
 * A save that fails before its commit point leaves nothing behind, even when
 * the failure hits one of several blobs being put in place at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { StoreWriteError } from '../../../electron/store/store-types.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

describe('a save whose second blob cannot be linked', () => {
  it('removes the blobs it did place, so the folder is exactly as before', async () => {
    const good = openStore(root);
    const cp = (await good.create(makeCheckpoint('t'))).checkpoint;
    const before = await hashTree(root);
    let blobLinks = 0;
    const failing: StoreFs = {
      ...nodeFs,
      link: async (existing, created) => {
        if (created.includes(`${path.sep}blobs${path.sep}`) && ++blobLinks === 2) throw Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' });
        return nodeFs.link(existing, created);
      },
    };
    const err = await openStore(root, { fs: failing })
      .save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'x' }, results: { s1: 'one', s2: 'two' }, appendHistory: [{ role: 'user', content: 'm' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreWriteError);
    expect(blobLinks).toBeGreaterThanOrEqual(2);
    const after = await hashTree(root);
    expect(Object.keys(after).filter((f) => !path.basename(f).startsWith('.'))).toEqual(Object.keys(before));
  });
});
