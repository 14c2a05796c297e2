/**
 * Moving a misnumbered version file aside: only a file whose envelope holds
 * another version is moved, nothing is deleted, and a move that stopped half
 * way (the file under both names) is finished by the next writer.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { setAsideMisnumbered } from '../../../electron/store/set-aside.js';
import { nodeFs } from '../../../electron/store/store-fs.js';
import type { ReadContext } from '../../../electron/store/file-reader.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
let ctx: ReadContext;
beforeEach(async () => {
  root = await tempRoot();
  ctx = { fs: nodeFs, root, realRoot: await fs.realpath(root), maxFileBytes: 64 * 1024 * 1024 };
  const store = openStore(root);
  let cp = (await store.create(makeCheckpoint('t', 2))).checkpoint;
  for (let v = 2; v <= 3; v++) {
    cp = (await store.save('t', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: `phase ${v}` } })).checkpoint;
  }
});
afterEach(() => cleanup(root));

const versions = () => path.join(root, 't', 'versions');

describe('setAsideMisnumbered', () => {
  it('leaves a file that holds its own version, and a name with no file, untouched', async () => {
    const before = await fs.readdir(versions());
    expect(await setAsideMisnumbered(ctx, 't', path.join(root, 't'), 3)).toBeNull();
    expect(await setAsideMisnumbered(ctx, 't', path.join(root, 't'), 9)).toBeNull();
    expect(await fs.readdir(versions())).toEqual(before);
  });

  it('moves a misnumbered file to a name beside it, bytes unchanged, and the name is free for the version', async () => {
    const copy = await fs.readFile(path.join(versions(), '00000001.json'));
    await fs.rm(path.join(versions(), '00000003.json'));
    await fs.writeFile(path.join(versions(), '00000003.json'), copy);
    const { ino } = await fs.stat(path.join(versions(), '00000003.json'));
    expect(await setAsideMisnumbered(ctx, 't', path.join(root, 't'), 3)).toBe(`t/versions/00000003.json.misnumbered-${ino}`);
    expect(await fs.readFile(path.join(versions(), `00000003.json.misnumbered-${ino}`))).toEqual(copy);
    await expect(fs.stat(path.join(versions(), '00000003.json'))).rejects.toThrow(/ENOENT/);
  });

  it('finishes a move that stopped after its link: the file under both names', async () => {
    const copy = await fs.readFile(path.join(versions(), '00000002.json'));
    await fs.rm(path.join(versions(), '00000003.json'));
    await fs.writeFile(path.join(versions(), '00000003.json'), copy);
    const { ino } = await fs.stat(path.join(versions(), '00000003.json'));
    await fs.link(path.join(versions(), '00000003.json'), path.join(versions(), `00000003.json.misnumbered-${ino}`));
    expect(await setAsideMisnumbered(ctx, 't', path.join(root, 't'), 3)).toBe(`t/versions/00000003.json.misnumbered-${ino}`);
    expect((await fs.readdir(versions())).filter((n) => n.startsWith('00000003'))).toEqual([`00000003.json.misnumbered-${ino}`]);
  });
});
