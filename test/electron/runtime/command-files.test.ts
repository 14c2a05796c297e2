/**
 * What a command agent's hash covers: the files its command names inside the
 * directory, resolved as the runner resolves them; never a program on PATH, a
 * file outside the directory (also through a symbolic link), or a folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandFiles, hashCommand } from '../../../electron/runtime/command-files.js';

let base: string;
let root: string;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-command-files-'));
  root = path.join(base, 'dir');
  await fs.mkdir(path.join(root, 'agents'), { recursive: true });
  await fs.writeFile(path.join(root, 'demo.py'), 'print("demo")\n');
  await fs.writeFile(path.join(root, 'agents', 'helper.py'), 'print("helper")\n');
  await fs.writeFile(path.join(base, 'outside.py'), 'print("outside")\n');
  await fs.symlink(path.join(base, 'outside.py'), path.join(root, 'link.py'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("a command agent's files", () => {
  it('are the files its command names inside the directory, in the order it names them', async () => {
    const files = await commandFiles(root, ['python3', '-u', 'demo.py', './agents/helper.py', '--flag', 'agents', 'demo.py']);
    const real = await fs.realpath(root);
    expect(files).toEqual([
      { file: 'demo.py', path: path.join(real, 'demo.py'), sha256: sha('print("demo")\n') },
      { file: 'agents/helper.py', path: path.join(real, 'agents', 'helper.py'), sha256: sha('print("helper")\n') },
    ]);
  });

  it('leave out a program on PATH, a file outside the directory, a link that leads out of it, and a missing file', async () => {
    expect(await commandFiles(root, ['python3', path.join(base, 'outside.py'), 'link.py', 'gone.py'])).toEqual([]);
    expect(await hashCommand(root, ['python3', 'gone.py'])).toBeNull();
  });

  it('hash to one value that changes with any file and with the files named', async () => {
    const first = await hashCommand(root, ['python3', 'demo.py']);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashCommand(root, ['python3', 'demo.py'])).toBe(first);
    expect(await hashCommand(root, ['python3', 'agents/helper.py'])).not.toBe(first);
    await fs.writeFile(path.join(root, 'demo.py'), 'print("changed")\n');
    expect(await hashCommand(root, ['python3', 'demo.py'])).not.toBe(first);
  });
});
