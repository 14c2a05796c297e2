/**
 * What a command agent's hash covers: the files its command names inside the
 * directory, resolved as the runner resolves them; never a program on PATH, a
 * file outside the directory (also through a symbolic link), or a folder. A
 * file there that cannot be hashed in bounded memory (too large, a named
 * pipe) is listed with its problem, and the command is then never started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { CODE_FILE_MAX_BYTES } from '../../../electron/runtime/code-file-hash.js';
import { CommandFilesError, commandFiles, hashCommand } from '../../../electron/runtime/command-files.js';
import { agentStatus } from '../../../electron/runtime/agent-status.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

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
  // 3 GB without writing them: more than Node reads into one buffer, far more than the hashing limit.
  const huge = await fs.open(path.join(root, 'huge.py'), 'w');
  await huge.truncate(3 * 1024 * 1024 * 1024);
  await huge.close();
  execFileSync('mkfifo', [path.join(root, 'pipe.py')]);
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

describe('a command file that cannot be hashed', () => {
  it('is listed with its problem: a file of 3 GB, a named pipe (never waited on)', async () => {
    const real = await fs.realpath(root);
    expect(await commandFiles(root, ['python3', 'huge.py', 'pipe.py', 'demo.py'])).toEqual([
      {
        file: 'huge.py',
        path: path.join(real, 'huge.py'),
        sha256: null,
        reason: 'too-large',
        problem: `${path.join(real, 'huge.py')} is ${3 * 1024 * 1024 * 1024} bytes, more than the ${CODE_FILE_MAX_BYTES / 1024 / 1024} MiB Waystation reads of an agent's code file; it was not read (is it the file you meant?)`,
      },
      {
        file: 'pipe.py',
        path: path.join(real, 'pipe.py'),
        sha256: null,
        reason: 'not-a-file',
        problem: `${path.join(real, 'pipe.py')} is not a regular file (a folder, named pipe, socket or device); it was not read`,
      },
      expect.objectContaining({ file: 'demo.py', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }),
    ]);
  });

  it('makes the command have no hash: a typed refusal naming the file', async () => {
    const refusal = await hashCommand(root, ['python3', 'pipe.py']).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(CommandFilesError);
    expect((refusal as Error).message).toBe(
      'the command (python3 pipe.py) was not started: its file pipe.py is not a regular file (a folder, named pipe, socket or device); it was not read. Nothing was written',
    );
  });

  it('keeps a task of that command from being resumed, and the runner from starting it', async () => {
    await fs.writeFile(
      path.join(root, 'waystation.config.json'),
      JSON.stringify({ agents: [{ name: 'huge', command: ['python3', 'huge.py'] }] }),
    );
    const cp = { ...makeCheckpoint('h1'), agent: { name: 'huge', command: ['python3', 'huge.py'], project_root: '.', options: {} } };
    expect(await agentStatus(root, cp as never)).toEqual({
      kind: 'command',
      available: false,
      problem: expect.stringMatching(/^the command \(python3 huge\.py\) was not started: its file huge\.py is 3221225472 bytes/),
    });
    const outcome = await new Runner({ root, actor: 'tester' }).startRun({ agent: 'huge', taskId: 'h1', options: {} });
    expect(outcome).toMatchObject({ status: null, error: 'agent-unavailable' });
    expect(outcome.message).toMatch(/^the command \(python3 huge\.py\) was not started: its file huge\.py is 3221225472 bytes/);
    expect(await openStore(root).getTask('h1')).toBeNull();
  });
});
