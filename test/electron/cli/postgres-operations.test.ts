/**
 * Operations on a task in a database, from the command line. Trust: the code
 * a resume runs lives in the folder the command runs in (the store's
 * artifactRoot), so that folder is what must be trusted, as `run` and `serve`
 * check it, and the trust file never holds a database URL, let alone its
 * password. Refusals name the database (without its password), not that folder.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { distrustDirectory, isTrusted, trustFilePath } from '../../../electron/runtime/directory-trust.js';
import { createDatabase, TEST_PASSWORD } from '../../support/postgres-cluster.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { captureCli as cli } from './capture-cli.js';

useOfflineWorkers({ SKIP_FAILURE: '0' });

let folder: string;
let marker: string;
let cwd: string;
beforeEach(async () => {
  cwd = process.cwd();
  folder = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pg-trust-')));
  marker = path.join(folder, 'imported.txt');
  process.chdir(folder);
});
afterEach(async () => {
  process.chdir(cwd);
  await fs.rm(folder, { recursive: true, force: true });
});

describe('resume and approve of a task in a database', () => {
  it('refuse to run the code of a folder that is not trusted, and write no URL into the trust file', async () => {
    const url = await createDatabase('trust');
    // A task that failed at its flaky step, so a resume would run its agent again.
    const failed = await cli('run', url, 'checkpoint-demo', '--task', 'flaky');
    expect(failed.code).toBe(1);
    const confirm = await cli('run', url, 'checkpoint-demo', '--task', 'plan', '--mode', 'confirm');
    expect(confirm.code).toBe(4);
    // The folder registers a module that leaves a mark when imported, and is not trusted.
    await fs.writeFile(
      path.join(folder, 'marked.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\n`,
    );
    await fs.writeFile(
      path.join(folder, 'waystation.config.json'),
      JSON.stringify({ agents: [{ module: './marked.mjs', name: 'marked' }] }),
    );
    await distrustDirectory(folder);

    for (const args of [
      ['resume', url, 'flaky'],
      ['approve', url, 'plan'],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain(`${folder} is not trusted`);
      expect(r.err).toContain('./marked.mjs');
      expect(r.err).not.toContain(TEST_PASSWORD);
    }
    await expect(fs.access(marker)).rejects.toThrow();
    expect(await isTrusted(folder)).toBe(false);
    const trustFile = await fs.readFile(trustFilePath(), 'utf8').catch(() => '');
    expect(trustFile).not.toContain('postgres');
    expect(trustFile).not.toContain(TEST_PASSWORD);

    // --trust trusts the folder, by its own name.
    const resumed = await cli('resume', url, 'flaky', '--trust');
    expect(resumed.err).toContain(`trusted ${folder}`);
    expect(await isTrusted(folder)).toBe(true);
    expect(await fs.readFile(trustFilePath(), 'utf8')).not.toContain('postgres');
  });
});

describe('a refusal of an operation on a database', () => {
  it('names the database, without its password, not the folder the command runs in', async () => {
    const url = await createDatabase('names');
    expect((await cli('run', url, 'checkpoint-demo', '--task', 'a')).code).toBe(1);
    expect((await cli('run', url, 'checkpoint-demo', '--task', 'b')).code).toBe(1);
    const shown = url.replace(`:${TEST_PASSWORD}@`, '@');
    const taken = await cli('fork', url, 'a', '1', '--task', 'b');
    expect(taken.code).toBe(2);
    expect(taken.err).toContain(`task b already exists in ${shown}; nothing was written`);
    const missing = await cli('stop', url, 'nope');
    expect(missing.code).toBe(2);
    expect(`${taken.err}${missing.err}`).not.toContain(TEST_PASSWORD);
    expect(`${taken.err}${missing.err}`).not.toContain(folder);
  });
});
