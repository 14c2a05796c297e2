/**
 * A stored stop request is read in bounded memory and never waited on: a file
 * far larger than a request, a named pipe, a device or a link in its place is
 * still a request (stopping is the safe reading), with a problem that says why
 * it was not read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  parseStopRequest,
  readStopRequest,
  STOP_REQUEST_MAX_BYTES,
  writeStopRequest,
  type StopRequest,
} from '../../../electron/store/stop-request.js';

const execFileAsync = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const tsx = path.resolve(here, '../../../bin/waystation-tsx.mjs');
const reader = path.join(here, 'stop-request-reader.ts');

let base: string;
const taskDir = (name: string) => path.join(base, name);
const stopFile = (name: string, n = 3) => path.join(taskDir(name), 'lease', `${n}.stop.json`);

/** readStopRequest in a child process, which the timeout kills if the read blocks. */
async function readInChild(name: string, n = 3): Promise<StopRequest | null> {
  const { stdout } = await execFileAsync(process.execPath, [tsx, reader, taskDir(name), String(n)], {
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  return JSON.parse(stdout) as StopRequest | null;
}

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-stop-request-'));
  for (const name of ['huge', 'pipe', 'zero', 'plain', 'none']) await fs.mkdir(path.join(taskDir(name), 'lease'), { recursive: true });
  // 3 GB without writing them: a sparse file, larger than any buffer Node would allocate for a whole read.
  const handle = await fs.open(stopFile('huge'), 'w');
  await handle.truncate(3 * 1024 * 1024 * 1024);
  await handle.close();
  execFileSync('mkfifo', [stopFile('pipe')]);
  await fs.symlink('/dev/zero', stopFile('zero'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe('a stored stop request', () => {
  it('is none when there is no file, and the request as written when there is one', async () => {
    expect(readStopRequest(path.join(taskDir('none'), 'lease'), 3)).toBeNull();
    const written = await writeStopRequest(taskDir('plain'), 3, { by: 'ada', reason: 'lunch' });
    expect(readStopRequest(path.join(taskDir('plain'), 'lease'), 3)).toEqual(written);
    expect(written).toMatchObject({ by: 'ada', reason: 'lunch', count: 1 });
    expect(written.problem).toBeUndefined();
  });

  it('of 3 GB is a request that says it was too large, not read', async () => {
    const request = await readInChild('huge');
    expect(request).toMatchObject({ by: 'someone', count: 1 });
    expect(request?.problem).toBe(
      `the stop request huge/lease/3.stop.json is ${3 * 1024 * 1024 * 1024} bytes, more than the ${STOP_REQUEST_MAX_BYTES} a stop request holds; it was not read`,
    );
    // The problem travels as the reason, which the runner saves with the stop.
    expect(request?.reason).toBe(request?.problem);
  });

  it('that is a named pipe is refused at once, not waited on', async () => {
    const request = await readInChild('pipe');
    expect(request?.problem).toMatch(/^the stop request pipe\/lease\/3\.stop\.json is not a regular file .*it was not read$/);
  });

  it('that is a link to /dev/zero is not followed', async () => {
    const request = await readInChild('zero');
    expect(request?.problem).toBe(
      'the stop request zero/lease/3.stop.json is a symbolic link, which Waystation never writes; it was not followed',
    );
  });

  it('asked again over a huge file counts as the second request, and replaces the file with a readable one', async () => {
    const again = await writeStopRequest(taskDir('huge'), 3, { by: 'grace' });
    expect(again).toMatchObject({ by: 'grace', count: 2 });
    expect((await fs.stat(stopFile('huge'))).size).toBeLessThan(1024);
    expect(readStopRequest(path.join(taskDir('huge'), 'lease'), 3)).toEqual(again);
  });

  it('kept as text (a database column) is refused past the limit the same way', () => {
    const request = parseStopRequest('x'.repeat(STOP_REQUEST_MAX_BYTES + 1), 'the stop request of task t1');
    expect(request?.problem).toBe(
      `the stop request of task t1 is ${STOP_REQUEST_MAX_BYTES + 1} characters, more than the ${STOP_REQUEST_MAX_BYTES} a stop request holds; it was not read`,
    );
    expect(parseStopRequest(JSON.stringify({ by: 'ada', at: '2026-01-01T00:00:00.000Z', count: 1 }))).toEqual({
      by: 'ada',
      at: '2026-01-01T00:00:00.000Z',
      count: 1,
    });
  });
});
