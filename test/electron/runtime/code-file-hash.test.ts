/**
 * An agent's code file is hashed in bounded memory and never waited on: a
 * file over the limit, a named pipe, a device (through a link) or a folder
 * has no hash and a problem that names it; a file's hash is its bytes'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CODE_FILE_MAX_BYTES, hashCodeFile } from '../../../electron/runtime/code-file-hash.js';
import { agentStatus } from '../../../electron/runtime/agent-status.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

let base: string;
const at = (name: string) => path.join(base, name);

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-code-hash-'));
  await fs.writeFile(at('agent.mjs'), 'export default 1;\n');
  // Several chunks, so the streamed hash is checked across chunk boundaries.
  await fs.writeFile(at('bundle.js'), Buffer.alloc(3 * 1024 * 1024 + 17, 'a'));
  const huge = await fs.open(at('huge.py'), 'w');
  await huge.truncate(CODE_FILE_MAX_BYTES + 1);
  await huge.close();
  execFileSync('mkfifo', [at('pipe.py')]);
  await fs.symlink('/dev/zero', at('zero.py'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe('hashing a code file', () => {
  it('gives the sha256 of its bytes, across chunks', async () => {
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(await hashCodeFile(at('agent.mjs'))).toEqual({ ok: true, sha256: sha(Buffer.from('export default 1;\n')), bytes: 18 });
    const bundle = await fs.readFile(at('bundle.js'));
    expect(await hashCodeFile(at('bundle.js'))).toEqual({ ok: true, sha256: sha(bundle), bytes: bundle.length });
  });

  it('refuses a file over the limit before reading it', async () => {
    const h = await hashCodeFile(at('huge.py'));
    expect(h).toMatchObject({ ok: false, reason: 'too-large' });
    expect(!h.ok && h.problem).toBe(
      `${at('huge.py')} is ${CODE_FILE_MAX_BYTES + 1} bytes, more than the 64 MiB Waystation reads of an agent's code file; it was not read (is it the file you meant?)`,
    );
  });

  it('refuses a named pipe at once, a link to /dev/zero and a folder, and says a missing file is missing', async () => {
    for (const name of ['pipe.py', 'zero.py', '.']) {
      const h = await hashCodeFile(at(name));
      expect(h, name).toMatchObject({ ok: false, reason: 'not-a-file' });
      expect(!h.ok && h.problem, name).toBe(`${at(name)} is not a regular file (a folder, named pipe, socket or device); it was not read`);
    }
    expect(await hashCodeFile(at('gone.py'))).toEqual({ ok: false, reason: 'missing', problem: `${at('gone.py')} does not exist` });
  });

  it('refuses a file that is larger than a smaller limit', async () => {
    expect(await hashCodeFile(at('bundle.js'), 1024 * 1024)).toMatchObject({ ok: false, reason: 'too-large' });
  });
});

describe("a module agent's status when its module cannot be hashed", () => {
  it('names the pipe or the device in its place, without waiting on it', async () => {
    for (const name of ['pipe.py', 'zero.py']) {
      const cp = {
        ...makeCheckpoint('m1'),
        agent: { name: 'pipe-agent', module: name, project_root: base, module_sha256: 'a'.repeat(64) },
      };
      expect(await agentStatus(base, cp as never), name).toEqual({
        kind: 'module',
        available: false,
        file: at(name),
        recorded_sha256: 'a'.repeat(64),
        problem: `the agent module ${at(name)} is not a regular file (a folder, named pipe, socket or device); it was not read; the task cannot be resumed until it is a readable module file`,
      });
    }
  });
});
