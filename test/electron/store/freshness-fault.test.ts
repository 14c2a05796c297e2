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

/** nodeFs whose `exists` fails with `code` for version 3's file. */
function failingProbe(code: string): StoreFs {
  const third = path.join('versions', '00000003.json');
  return {
    ...nodeFs,
    exists: (p) => (p.endsWith(third) ? Promise.reject(Object.assign(new Error(`${code}: injected`), { code })) : nodeFs.exists(p)),
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

  it('has nothing to say when the disk answers', async () => {
    expect((await openStore(root).getTask('t'))?.problems).toEqual([]);
  });
});
