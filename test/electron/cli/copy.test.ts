/**
 * `waystation copy` between two directories: a store named twice (a link, `..`) is refused, nothing copied.
 * (Databases: postgres-commands.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { cleanup, makeCheckpoint, tempRoot } from '../store/store-test-helpers.js';
import { captureCli } from './capture-cli.js';

let tmp: string;
beforeEach(async () => {
  tmp = await tempRoot('waystation-copy-cli-');
});
afterEach(async () => {
  await cleanup(tmp);
});

describe('waystation copy', () => {
  it('refuses to copy a directory onto itself, however it is named, and copies to another', async () => {
    const dir = path.join(tmp, 'a');
    await openStore(dir).create(makeCheckpoint('t', 2));
    await fs.symlink(dir, path.join(tmp, 'link'));
    const before = await fs.readdir(path.join(dir, 't', 'versions'));
    for (const other of [dir, path.join(tmp, 'link'), path.join(dir, '..', 'a')]) {
      const r = await captureCli('copy', dir, other);
      expect(r.code).toBe(2);
      expect(r.err).toContain('are the same store; nothing was copied');
    }
    expect(await fs.readdir(path.join(dir, 't', 'versions'))).toEqual(before);
    const copied = await captureCli('copy', dir, path.join(tmp, 'b'), '--json');
    expect(copied.code).toBe(0);
    expect((JSON.parse(copied.out) as { task_id: string; status: string }[]).map((o) => [o.task_id, o.status])).toEqual([['t', 'copied']]);
    // Its task names no artifact file: nothing stays behind, nothing to note.
    expect(copied.err).toBe('');
  });

  it('says how many artifact files stay behind where the destination does not look for them, and only those', async () => {
    const dir = path.join(tmp, 'a');
    await fs.mkdir(path.join(dir, 'out'), { recursive: true });
    await fs.writeFile(path.join(dir, 'out', 'kept.txt'), 'kept');
    await fs.writeFile(path.join(dir, 'out', 'both.txt'), 'both');
    const artifact = (p: string) => ({ type: 'file', path: p, sha256: 'a'.repeat(64), size: 4 });
    await openStore(dir).create(
      makeCheckpoint('t', 2, { artifacts: [artifact('out/kept.txt'), artifact('out/both.txt'), artifact(path.join(tmp, 'abs.txt'))] }),
    );
    const dest = path.join(tmp, 'b');
    // One file is at the destination already; the absolute path names one file whichever store reads it.
    await fs.mkdir(path.join(dest, 'out'), { recursive: true });
    await fs.writeFile(path.join(dest, 'out', 'both.txt'), 'both');
    await fs.writeFile(path.join(tmp, 'abs.txt'), 'abs');

    const copied = await captureCli('copy', dir, dest);
    expect(copied.code).toBe(0);
    expect(copied.err).toBe(
      `note: 1 artifact file of the copied tasks stays in ${dir}, and ${dest} looks for them in ${dest}: copy them there, at the ` +
        `same paths, for verify and resume of ${dest} to find them (else they count as missing, and resume stops for a person).\n`,
    );
    // Copied again, nothing is copied, so nothing is said.
    expect((await captureCli('copy', dir, dest)).err).toBe('');
  });
});
