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
  });
});
