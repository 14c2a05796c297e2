/**
 * The check for a version newer than checkpoint.json, on a disk that will not
 * answer it: the reader says so, naming the error, instead of taking the
 * failure for "no newer version" or for "version missing".
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot('waystation-freshness-');
  const store = openStore(root);
  const v1 = (await store.create(makeCheckpoint('t'))).checkpoint;
  await store.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' } });
});
afterEach(async () => {
  await cleanup(root);
});

/**
 * nodeFs that will not say whether version 3's file exists, failing with `code`: neither by a lookup of its name
 * nor by a listing of versions/ (which opening a task reads first, and answers from).
 */
function failingProbe(code: string): StoreFs {
  const third = path.join('versions', '00000003.json');
  const fail = () => Promise.reject(Object.assign(new Error(`${code}: injected`), { code }));
  return {
    ...nodeFs,
    exists: (p) => (p.endsWith(third) ? fail() : nodeFs.exists(p)),
    readdirNames: (p) => (path.basename(p) === 'versions' ? fail() : nodeFs.readdirNames(p)),
  };
}

describe('the freshness check of the next version', () => {
  it.each(['EIO', 'EACCES'])('turns %s into an unreadable problem naming the code, and still shows the hot snapshot', async (code) => {
    const before = await hashTree(root);
    for (const read of [
      (s: ReturnType<typeof openStore>) => s.getTask('t'),
      async (s: ReturnType<typeof openStore>) => (await s.listTasks())[0],
    ]) {
      const entry = await read(openStore(root, { fs: failingProbe(code) }));
      expect(entry?.checkpoint?.version).toBe(2);
      const found = entry!.problems.find((p) => p.file === 't/versions/00000003.json');
      expect(found).toMatchObject({ reason: 'unreadable', severity: 'error' });
      expect(found!.message).toContain(`cannot check whether version 3 exists (${code})`);
      expect(entry!.problems.map((p) => p.message).join('\n')).not.toMatch(/does not exist|missing/);
    }
    expect(await hashTree(root)).toEqual(before);
  });

  it('opening the task answers from its listing of versions/, when that reads, without the lookup', async () => {
    const listing: StoreFs = { ...failingProbe('EIO'), readdirNames: nodeFs.readdirNames };
    const entry = await openStore(root, { fs: listing }).getTask('t');
    expect(entry?.checkpoint?.version).toBe(2);
    expect(entry?.problems).toEqual([]);
  });

  it('has nothing to say when the disk answers', async () => {
    expect((await openStore(root).getTask('t'))?.problems).toEqual([]);
  });
});
