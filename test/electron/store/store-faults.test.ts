import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { writeFileAtomic } from '../../../electron/store/atomic-file.js';
import { StoreWriteError } from '../../../electron/store/store-types.js';
import { cleanup, hashTree, listFiles, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

const fail = (code: string) => Object.assign(new Error(`${code}: injected`), { code });

/** nodeFs with one call made to fail when `when` says so. */
function faulty(method: keyof StoreFs, code: string, when: (arg: string) => boolean): StoreFs {
  return {
    ...nodeFs,
    [method]: async (...args: unknown[]) => {
      if (when(String(args[0]))) throw fail(code);
      return (nodeFs[method] as (...a: unknown[]) => unknown)(...args);
    },
  } as StoreFs;
}

describe('writeFileAtomic', () => {
  it('replaces a file and leaves no temp file', async () => {
    const file = path.join(root, 'a.json');
    await writeFileAtomic(nodeFs, file, 'one');
    await writeFileAtomic(nodeFs, file, 'two');
    expect(await fs.readFile(file, 'utf8')).toBe('two');
    expect(await fs.readdir(root)).toEqual(['a.json']);
  });

  it('create mode fails with EEXIST and leaves the existing file untouched', async () => {
    const file = path.join(root, 'a.json');
    await writeFileAtomic(nodeFs, file, 'first', 'create');
    await expect(writeFileAtomic(nodeFs, file, 'second', 'create')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await fs.readFile(file, 'utf8')).toBe('first');
    expect(await fs.readdir(root)).toEqual(['a.json']);
  });

  it('a failed write removes its temp file and keeps the old content', async () => {
    const file = path.join(root, 'a.json');
    await writeFileAtomic(nodeFs, file, 'old');
    const broken: StoreFs = {
      ...nodeFs,
      open: async (p, flags, mode) => {
        const h = await nodeFs.open(p, flags, mode);
        return {
          ...h,
          writeFile: async () => Promise.reject(fail('ENOSPC')),
          sync: () => h.sync(),
          close: () => h.close(),
          readFile: () => h.readFile(),
          read: h.read.bind(h),
          stat: () => h.stat(),
        };
      },
    };
    await expect(writeFileAtomic(broken, file, 'new')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await fs.readFile(file, 'utf8')).toBe('old');
    expect(await fs.readdir(root)).toEqual(['a.json']);
  });
});

describe('a save that hits a disk error', () => {
  it.each([
    ['open', 'ENOSPC', (p: string) => p.endsWith('.tmp')],
    ['link', 'EIO', (p: string) => p.includes(`${path.sep}versions${path.sep}`)],
    ['open', 'EACCES', (p: string) => p.includes(`${path.sep}versions${path.sep}`)],
    // The hot snapshot's temp file fails while the version's (carrying the blobs) is written: both go.
    ['open', 'ENOSPC', (p: string) => p.includes('.checkpoint.json.')],
  ] as const)('%s failing with %s: StoreWriteError, nothing written, the previous version intact', async (method, code, when) => {
    const good = openStore(root);
    const cp = (await good.create(makeCheckpoint('t'))).checkpoint;
    const before = await hashTree(root);
    const bad = openStore(root, { fs: faulty(method, code, when) });
    const err = await bad
      .save('t', {
        expectedVersion: 1,
        checkpoint: { ...withoutVersion(cp), phase: 'x' },
        results: { s1: 'r' },
        appendHistory: [{ role: 'u', content: 'c' }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreWriteError);
    expect((err as StoreWriteError).problems[0].reason).toBe('io');
    expect(String(err)).toContain(code);
    expect(String(err)).toContain('version 1 is intact');
    expect(await hashTree(root)).toEqual(before);
    // The disk recovers: the same store writes version 2.
    const again = await good.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'y' } });
    expect(again.checkpoint.version).toBe(2);
  });

  it('a failure after the commit point keeps the version and reports a warning', async () => {
    const good = openStore(root);
    const cp = (await good.create(makeCheckpoint('t'))).checkpoint;
    const bad = openStore(root, { fs: faulty('rename', 'EIO', (p) => p.includes('.checkpoint.json.')) });
    const res = await bad.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'x' } });
    expect(res.checkpoint.version).toBe(2);
    expect(res.warnings?.map((w) => w.reason)).toEqual(['io']);
    // The hot snapshot is behind; readers use the version files.
    expect((await openStore(root).getTask('t'))?.checkpoint?.phase).toBe('x');
    expect((await listFiles(root)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('an unreadable file is a problem on its task, and the other tasks still list', async () => {
    const good = openStore(root);
    await good.create(makeCheckpoint('a'));
    await good.create(makeCheckpoint('b'));
    const bad = openStore(root, { fs: faulty('readWholeFile', 'EACCES', (p) => p.includes(`${path.sep}a${path.sep}`)) });
    const tasks = await bad.listTasks();
    // Both the hot snapshot and the version file it falls back to are unreadable: reported once per reason.
    expect(tasks.map((t) => [t.task_id, [...new Set(t.problems.map((p) => p.reason))], t.checkpoint?.version ?? null])).toEqual([
      ['a', ['unreadable'], null],
      ['b', [], 1],
    ]);
  });
});
