/**
 * The store's file-system seam: nodeFs answers the read calls synchronously
 * as well, with the same results and the same errors, and a StoreFs whose
 * read calls were replaced (to inject faults) is never answered by them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { nodeFs, settledReads, syncReadsOf, type StoreFs } from '../../../electron/store/store-fs.js';
import { cleanup, tempRoot } from './store-test-helpers.js';

let root: string;

beforeEach(async () => {
  root = await tempRoot();
  await fs.writeFile(path.join(root, 'small.json'), '{"a":1}');
  await fs.writeFile(path.join(root, 'big.json'), 'x'.repeat(100));
  await fs.mkdir(path.join(root, 'folder'));
  await fs.symlink(path.join(root, 'small.json'), path.join(root, 'link.json'));
});
afterEach(async () => {
  await cleanup(root);
});

/** What a call answered, or the code it failed with, comparable across the two ways. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await call();
    if (value && typeof value === 'object' && 'bytes' in value) return { ...value, bytes: (value as { bytes: Buffer }).bytes.toString() };
    return value;
  } catch (err) {
    return { failed: (err as { code?: string }).code };
  }
}

describe('syncReadsOf', () => {
  it('finds the synchronous reads of nodeFs', () => {
    expect(syncReadsOf(nodeFs)).not.toBeNull();
  });

  it('refuses them for a StoreFs whose read call was replaced, even though it carries them along', () => {
    const faulty: StoreFs = { ...nodeFs, readWholeFile: () => Promise.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' })) };
    expect(faulty.syncReads).toBeDefined();
    expect(syncReadsOf(faulty)).toBeNull();
    expect(syncReadsOf({ ...nodeFs, exists: async () => false })).toBeNull();
  });

  it('finds none on the settled StoreFs itself', () => {
    expect(syncReadsOf(settledReads(nodeFs, syncReadsOf(nodeFs)!))).toBeNull();
  });
});

describe('settledReads', () => {
  const settled = () => settledReads(nodeFs, syncReadsOf(nodeFs)!);
  const limits = { maxBytes: 50, followLinks: false };

  it.each([
    ['a small file', 'small.json', limits],
    ['a file over the limit', 'big.json', limits],
    ['a folder', 'folder', limits],
    ['a missing file', 'nothing.json', limits],
    ['a final symlink, not followed', 'link.json', limits],
    ['a final symlink, followed', 'link.json', { maxBytes: 50, followLinks: true }],
    ['a file under a file', 'small.json/x', limits],
  ])('reads %s as the asynchronous call does', async (_what, name, opts) => {
    const file = path.join(root, name);
    const expected = await outcome(() => nodeFs.readWholeFile(file, opts));
    expect(await outcome(() => settled().readWholeFile(file, opts))).toEqual(expected);
  });

  it.each(['small.json', 'folder', 'nothing.json', 'small.json/x'])(
    'answers exists, readdir and stat for %s as the asynchronous calls do',
    async (name) => {
      const file = path.join(root, name);
      for (const call of ['exists', 'readdirNames', 'realpath'] as const) {
        expect([call, await outcome(() => settled()[call](file))]).toEqual([call, await outcome(() => nodeFs[call](file))]);
      }
      const size = async (fsys: StoreFs) => outcome(async () => (await fsys.stat(file)).size);
      expect(await size(settled())).toEqual(await size(nodeFs));
    },
  );

  it('leaves the write calls as they were', () => {
    const s = settled();
    expect([s.open, s.rename, s.appendFile]).toEqual([nodeFs.open, nodeFs.rename, nodeFs.appendFile]);
  });
});

describe('the write calls of nodeFs', () => {
  it('write, sync and read back a file through a handle, and fail with the OS error codes as rejections', async () => {
    const file = path.join(root, 'out.bin');
    const handle = await nodeFs.open(file, 'wx', 0o644);
    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    await handle.writeFile(data);
    await handle.sync();
    expect((await handle.stat()).size).toBe(data.length);
    await handle.close();
    expect((await fs.readFile(file)).equals(data)).toBe(true);

    expect(await outcome(() => nodeFs.open(file, 'wx', 0o644))).toEqual({ failed: 'EEXIST' });
    expect(await outcome(() => nodeFs.link(path.join(root, 'missing'), path.join(root, 'x')))).toEqual({ failed: 'ENOENT' });
    expect(await outcome(() => nodeFs.link(file, path.join(root, 'small.json')))).toEqual({ failed: 'EEXIST' });
    expect(await outcome(() => nodeFs.rename(path.join(root, 'missing'), file))).toEqual({ failed: 'ENOENT' });
    expect(await outcome(() => nodeFs.unlink(path.join(root, 'missing')))).toEqual({ failed: 'ENOENT' });

    await nodeFs.appendFile(path.join(root, 'log'), 'a\n');
    await nodeFs.appendFile(path.join(root, 'log'), 'b\n');
    expect(await fs.readFile(path.join(root, 'log'), 'utf8')).toBe('a\nb\n');
    await nodeFs.mkdir(path.join(root, 'deep', 'er'));
    expect((await fs.stat(path.join(root, 'deep', 'er'))).isDirectory()).toBe(true);
  });
});
