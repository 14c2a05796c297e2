/**
 * Reading a history chain that no history index places (a task another
 * program wrote, or whose index is gone) walks back through the segments of
 * its versions: it lists `versions/` once instead of asking, version by
 * version, whether each has a file of its own, and still finds a file the
 * listing missed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { openStore } from '../../../electron/store/directory-store.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { versionFileName } from '../../../electron/store/version-file.js';
import { historyIndexPath } from '../../../electron/store/history-index.js';
import { cleanup, loopedSave, makeCheckpoint, tempRoot } from './store-test-helpers.js';

const TASK = 'walk';
const PLAN = 5;
const LAST = 40;
const held: SaveLease = { taskId: TASK, held: true, generation: 1 };
const expected = Array.from({ length: LAST - 1 }, (_, i) => `m${i + 2}`);

let dir: string;
beforeEach(async () => {
  dir = await tempRoot('ws-history-walk-');
  const store = openStore(dir);
  let cp = (await store.create(makeCheckpoint(TASK, PLAN))).checkpoint;
  for (let v = 2; v <= LAST; v++) cp = (await store.save(TASK, { ...loopedSave(cp, v, PLAN, 30), lease: held })).checkpoint;
  await store.settle(TASK);
  // The walk every chunk took before the index, and still takes for chunks no index places.
  await rm(historyIndexPath(path.join(dir, TASK)));
});
afterEach(() => cleanup(dir));

/** nodeFs with its version-file lookups counted, and `versions/` listed through `list`. */
function countingFs(list: (dir: string) => Promise<string[]>) {
  const calls = { exists: 0, listings: 0 };
  const fs: StoreFs = {
    ...nodeFs,
    exists: (p) => {
      if (path.basename(path.dirname(p)) === 'versions') calls.exists++;
      return nodeFs.exists(p);
    },
    readdirNames: (p) => {
      if (path.basename(p) === 'versions') calls.listings++;
      return path.basename(p) === 'versions' ? list(p) : nodeFs.readdirNames(p);
    },
  };
  return { fs, calls };
}

describe('a history read', () => {
  it('lists versions/ once and asks after no version file one by one', async () => {
    const { fs, calls } = countingFs((p) => nodeFs.readdirNames(p));
    // Opening the task asks after the version past its checkpoint.json (is it current?): that is not the walk.
    await openStore(dir, { fs }).getTask(TASK);
    const opening = { ...calls };
    const messages = await openStore(dir, { fs }).readHistory(TASK);
    expect(messages.map((m) => m.content)).toEqual(expected);
    // Opening the task for the history lists versions/ once (the checkpoint's version is a segment's last record,
    // with no file of its own); the walk lists it once more, and looks up no file by name.
    expect({ exists: calls.exists - opening.exists, listings: calls.listings - opening.listings }).toEqual({
      exists: opening.exists,
      listings: 2,
    });
  });

  it('finds a version file written after its listing, by listing again', async () => {
    // The walk's first listing (the second of the read: opening the task lists versions/ first) lacks the newest
    // segment's file, as if it were written just after.
    const names = (await nodeFs.readdirNames(path.join(dir, TASK, 'versions'))).filter((n) => /^\d{8}\.json$/.test(n)).sort();
    const newest = names[names.length - 1];
    expect(newest).not.toBe(versionFileName(1));
    let listing = 0;
    const { fs, calls } = countingFs(async (p) => {
      const all = await nodeFs.readdirNames(p);
      return ++listing === 2 ? all.filter((n) => n !== newest) : all;
    });
    const messages = await openStore(dir, { fs }).readHistory(TASK);
    expect(messages.map((m) => m.content)).toEqual(expected);
    expect(calls.listings).toBe(3);
  });

  it('reads the same messages as a walk that asks for each file, at every version', async () => {
    const { fs } = countingFs((p) => nodeFs.readdirNames(p));
    const listed = openStore(dir, { fs });
    const plain = openStore(dir);
    for (let v = 1; v <= LAST; v++) expect(await listed.readHistory(TASK, v)).toEqual(await plain.readHistory(TASK, v));
  });
});
