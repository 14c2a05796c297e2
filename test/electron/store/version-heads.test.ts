/**
 * The heads of version files, read once per file and store: opening a task
 * again does not read them again, and a file changed since (copied over in
 * place, or replaced) is read again, so a store kept open still sees a file
 * misnumbered after it first looked.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FILE_BYTES, openStore } from '../../../electron/store/directory-store.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { VersionHeads } from '../../../electron/store/version-heads.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(() => cleanup(root));

async function sixVersions(): Promise<void> {
  const store = openStore(root);
  let cp = (await store.create(makeCheckpoint('t', 3))).checkpoint;
  for (let v = 2; v <= 6; v++) {
    cp = (await store.save('t', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: `phase ${v}` } })).checkpoint;
  }
}

/** nodeFs with its opens of version files counted. */
function countingFs(): { fs: StoreFs; opened: string[] } {
  const opened: string[] = [];
  const fs: StoreFs = {
    ...nodeFs,
    open: (p, flags, mode) => {
      if (p.includes(`${path.sep}versions${path.sep}`)) opened.push(path.relative(root, p));
      return nodeFs.open(p, flags, mode);
    },
  };
  return { fs, opened };
}

const misnumbered = (problems: { file: string; message: string }[]) =>
  problems.filter((p) => /named for version \d+ but holds/.test(p.message));

describe('version file heads', () => {
  it('are kept for the most recently asked files only, up to a bound; a file forgotten is read again', async () => {
    await sixVersions();
    const { fs: counting, opened } = countingFs();
    const heads = new VersionHeads(4);
    const ctx = { fs: counting, root, realRoot: root, maxFileBytes: DEFAULT_MAX_FILE_BYTES };
    const file = (n: number) => path.join(root, 't', 'versions', `0000000${n}.json`);
    for (let n = 1; n <= 6; n++) expect(await heads.versionAt(ctx, file(n))).toBe(n);
    expect(heads.size).toBe(4);
    opened.length = 0;
    // 3 to 6 are kept; asking 3 again keeps it the most recent, so 1 (forgotten) pushes out 4, not 3.
    expect(await heads.versionAt(ctx, file(3))).toBe(3);
    expect(await heads.versionAt(ctx, file(1))).toBe(1);
    expect(await heads.versionAt(ctx, file(3))).toBe(3);
    expect(await heads.versionAt(ctx, file(4))).toBe(4);
    expect(opened).toEqual(['t/versions/00000001.json', 't/versions/00000004.json']);
    expect(heads.size).toBe(4);
  });

  it('are read once per store: opening the task again opens no version file but the newest (which may be a segment, still growing)', async () => {
    await sixVersions();
    const { fs: counting, opened } = countingFs();
    const store = openStore(root, { fs: counting });
    expect((await store.getTask('t'))?.problems).toEqual([]);
    expect(opened.filter((f) => f.startsWith('t/versions/0000000')).length).toBeGreaterThanOrEqual(6);
    opened.length = 0;
    expect((await store.getTask('t'))?.problems).toEqual([]);
    expect(opened.filter((f) => f !== 't/versions/00000006.json')).toEqual([]);
  });

  it('are read again when a file changed since: a copy over an older file, in place, is reported by the same store', async () => {
    await sixVersions();
    const store = openStore(root);
    expect((await store.getTask('t'))?.problems).toEqual([]);
    const versions = path.join(root, 't', 'versions');
    const before = await fs.stat(path.join(versions, '00000003.json'));
    // Written into the same inode, as `cp` over an existing file does.
    await fs.writeFile(path.join(versions, '00000003.json'), await fs.readFile(path.join(versions, '00000001.json')));
    expect((await fs.stat(path.join(versions, '00000003.json'))).ino).toBe(before.ino);
    const entry = await store.getTask('t');
    expect(entry?.checkpoint?.version).toBe(6);
    expect(misnumbered(entry!.problems)).toEqual([
      expect.objectContaining({
        file: 't/versions/00000003.json',
        severity: 'error',
        message: expect.stringContaining('named for version 3 but holds version 1'),
      }),
    ]);
  });

  it('are read again when a file is replaced under its name, and forgotten when it is removed', async () => {
    await sixVersions();
    const store = openStore(root);
    expect((await store.getTask('t'))?.problems).toEqual([]);
    const versions = path.join(root, 't', 'versions');
    const good = await fs.readFile(path.join(versions, '00000002.json'));
    await fs.rm(path.join(versions, '00000002.json'));
    await fs.copyFile(path.join(versions, '00000004.json'), path.join(versions, '00000002.json'));
    expect(misnumbered((await store.getTask('t'))!.problems).map((p) => p.file)).toEqual(['t/versions/00000002.json']);
    await fs.rm(path.join(versions, '00000002.json'));
    await fs.writeFile(path.join(versions, '00000002.json'), good);
    expect((await store.getTask('t'))?.problems).toEqual([]);
  });

  it("keep a segment's ends with its head: a task opened again opens no version file, and opens the segment filling again once appended to", async () => {
    const lease: SaveLease = { taskId: 's', held: true, generation: 1 };
    const writer = openStore(root);
    let cp = (await writer.create(makeCheckpoint('s', 3))).checkpoint;
    const saveOne = async () => {
      cp = (
        await writer.save('s', {
          expectedVersion: cp.version,
          checkpoint: { ...withoutVersion(cp), phase: `phase ${cp.version + 1}` },
          lease,
        })
      ).checkpoint;
    };
    // Version 1's file, a full segment (2 to 17), and one filling (18 to 20), whose versions are applied to
    // checkpoint.json (17, the full segment's last).
    while (cp.version < 20) await saveOne();
    const { fs: counting, opened } = countingFs();
    const store = openStore(root, { fs: counting });
    expect((await store.getTask('s'))?.checkpoint?.version).toBe(20);
    expect(opened).toContain('s/versions/00000001.json');
    opened.length = 0;
    // Opened again: each file's head and ends are known while it is the same file, and version 17, which the
    // listing shows has no file of its own, is not looked for by opening one.
    expect((await store.getTask('s'))?.problems).toEqual([]);
    expect(opened).toEqual([]);
    // Appended to, the filling segment is another file for the store: read again, with the version it gained.
    await saveOne();
    opened.length = 0;
    const entry = await store.getTask('s');
    expect(entry?.checkpoint?.version).toBe(21);
    expect(entry?.problems).toEqual([]);
    expect(opened).toContain('s/versions/00000018.json');
    expect(opened).not.toContain('s/versions/00000001.json');
    expect(opened).not.toContain('s/versions/00000002.json');
  });

  it('are checked by one lstat a file a read: a task opened again asks each version file its identity once', async () => {
    const lease: SaveLease = { taskId: 's', held: true, generation: 1 };
    const writer = openStore(root);
    let cp = (await writer.create(makeCheckpoint('s', 3))).checkpoint;
    // Segments 2 to 17, 18 to 33 and 34 to 40: the gap check asks each file its ends and its head.
    while (cp.version < 40)
      cp = (await writer.save('s', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: `p${cp.version}` }, lease }))
        .checkpoint;
    // The full segments compressed (in the background) before the reads: a file replaced between them is another.
    await writer.settle('s');
    const statted: string[] = [];
    const counting: StoreFs = {
      ...nodeFs,
      lstat: (p) => {
        if (p.includes(`${path.sep}versions${path.sep}`)) statted.push(path.relative(root, p));
        return nodeFs.lstat(p);
      },
    };
    const store = openStore(root, { fs: counting });
    expect((await store.getTask('s'))?.checkpoint?.version).toBe(40);
    statted.length = 0;
    const again = await store.getTask('s');
    expect(again?.checkpoint?.version).toBe(40);
    expect(again?.problems).toEqual([]);
    expect(statted.length).toBeGreaterThan(0);
    expect(statted.filter((f, i) => statted.indexOf(f) !== i)).toEqual([]);
  });
});
