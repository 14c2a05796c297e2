/**
 * A named pipe put in place of a task's event log, or of the agents'
 * configuration, after the host opened the directory never stops the host:
 * it goes on listing, and the configuration is reported as unreadable.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';

const execFileAsync = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
let root: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pipe-after-open-'));
  const store = openStore(root);
  for (const id of ['t1', 't2']) await store.create(makeCheckpoint(id));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

it('keeps answering when an event log and the configuration become named pipes', async () => {
  const { stdout } = await execFileAsync(
    process.execPath,
    [path.join(here, '../../../bin/waystation-tsx.mjs'), path.join(here, 'pipe-after-open.ts'), root],
    {
      timeout: 30_000,
      killSignal: 'SIGKILL',
    },
  );
  const answer = JSON.parse(stdout.trim().split('\n').at(-1)!) as { changed: boolean; listed: string[]; configProblem: string | null };
  expect(answer.changed).toBe(true);
  expect(answer.listed).toEqual(['t1', 't2']);
  expect(answer.configProblem).toContain('not a regular file');
}, 60_000);
