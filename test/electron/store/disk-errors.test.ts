/** A failed write described as a person can act on it: the file, what went wrong, what to do. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeDiskError, describeFolderError } from '../../../electron/store/disk-errors.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { StoreWriteError } from '../../../electron/store/store-types.js';
import { captureCli } from '../cli/capture-cli.js';
import { makeCheckpoint } from './store-test-helpers.js';

describe('describeDiskError', () => {
  it('names the file, the cause in words, what was left untouched and what to do', () => {
    const err = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const text = describeDiskError(err, '/data/t/lease', 'the task t was not touched');
    expect(text).toBe(
      'cannot write /data/t/lease: there is no space left on the device (ENOSPC); the task t was not touched. To continue, free some space on that disk, then run the command again',
    );
  });

  it('leaves other errors alone', () => {
    expect(describeDiskError(new Error('boom'), '/f', 'nothing')).toBeNull();
  });
});

describe('describeFolderError', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-folder-error-'));
    await fs.writeFile(path.join(dir, 'afile'), 'x');
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('names a file where the folder would be, or further up its path, whatever error the recursive mkdir gave', () => {
    const enoent = Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    expect(describeFolderError(enoent, path.join(dir, 'afile'), 'the folder', 'nothing was written')).toBe(
      'cannot create the folder: a file is there, not a folder (EEXIST); nothing was written. To continue, name a folder, or a path where one can be made',
    );
    expect(describeFolderError(enoent, path.join(dir, 'afile', 'sub', 'deeper'), 'the folder', 'nothing was written')).toContain(
      'a part of the path is a file, not a folder (ENOTDIR)',
    );
  });

  it('leaves a cause it cannot tell to the caller', () => {
    expect(describeFolderError(new Error('boom'), path.join(dir, 'fresh'), 'the folder', 'nothing was written')).toBeNull();
  });

  it("is what a task's creation and a run in such a directory say, with nothing written", async () => {
    await fs.writeFile(path.join(dir, 't1'), 'a file named like the task');
    const store = openStore(dir);
    const created = store.create(makeCheckpoint('t1'));
    await expect(created).rejects.toBeInstanceOf(StoreWriteError);
    await expect(created).rejects.toThrow(
      'cannot create the task folder: a part of the path is a file, not a folder (ENOTDIR); nothing was written',
    );
    expect(await fs.readFile(path.join(dir, 't1'), 'utf8')).toBe('a file named like the task');

    // A path naming a file is bad input: refused before anything is made, exit 2 as `run --help` says.
    const run = await captureCli('run', path.join(dir, 'afile'), 'checkpoint-demo', '--task', 'x');
    expect(run.code).toBe(2);
    expect(run.err).toContain('cannot create the checkpoint directory: a file is there, not a folder (EEXIST); nothing was written');
    expect(run.err).not.toMatch(/\n\s+at /);
  });
});
