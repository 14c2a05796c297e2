import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directorySize, filesSize } from '../../../bench/lib/dir-size.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-dir-size-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('directorySize', () => {
  it('sums the lengths of every file in nested folders', async () => {
    const files: Record<string, number> = { 'a.json': 10, 'versions/00000001.json': 4097, 'blobs/x/y': 1, empty: 0 };
    for (const [name, bytes] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), Buffer.alloc(bytes, 120));
    }
    const usage = await directorySize(dir);
    expect(usage.files).toBe(Object.keys(files).length);
    expect(usage.apparentBytes).toBe(Object.values(files).reduce((a, b) => a + b, 0));
    expect(usage.allocatedBytes % 512).toBe(0);
  });

  it('does not follow symlinks, so nothing is counted twice', async () => {
    await fs.writeFile(path.join(dir, 'data'), Buffer.alloc(100));
    await fs.symlink(path.join(dir, 'data'), path.join(dir, 'alias'));
    const usage = await directorySize(dir);
    expect(usage).toMatchObject({ files: 1, apparentBytes: 100 });
  });

  it('fails on a folder that does not exist rather than reporting 0', async () => {
    await expect(directorySize(path.join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
  });
});

describe('filesSize', () => {
  it('adds the files that exist and counts missing companions as nothing', async () => {
    await fs.writeFile(path.join(dir, 'db'), Buffer.alloc(8192));
    await fs.writeFile(path.join(dir, 'db-wal'), Buffer.alloc(300));
    const usage = await filesSize([path.join(dir, 'db'), path.join(dir, 'db-wal'), path.join(dir, 'db-shm')]);
    expect(usage).toMatchObject({ files: 2, apparentBytes: 8492 });
  });
});
