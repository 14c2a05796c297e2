/**
 * Directory trust on the command line: `agents` lists an untrusted
 * directory's registrations without importing them; run, resume and approve
 * refuse to run its code without --trust; and a DIR that is a URL never
 * becomes a folder.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { distrustDirectory, isTrusted } from '../../../electron/runtime/directory-trust.js';
import { captureCli as cli } from './capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';

let tmp: string;
let root: string;
let marker: string;

useOfflineWorkers({ SKIP_FAILURE: '1' });

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-cli-trust-')));
  root = path.join(tmp, 'downloaded');
  marker = path.join(tmp, 'imported.txt');
  expect((await cli('run', root, 'checkpoint-demo', '--task', 't')).code).toBe(0);
  await fs.mkdir(path.join(root, 'agents'));
  await fs.writeFile(
    path.join(root, 'agents/marked.mjs'),
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\n`,
  );
  await fs.writeFile(
    path.join(root, 'waystation.config.json'),
    JSON.stringify({ agents: [{ module: './agents/marked.mjs', name: 'marked' }] }),
  );
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('an untrusted directory on the command line', () => {
  it('agents lists the registered modules without importing them, and says when it imports', async () => {
    const listed = await cli('agents', root, '--json');
    expect(listed.code).toBe(0);
    const catalog = JSON.parse(listed.out) as { agents: { name: string; module?: string; description: string }[] };
    expect(catalog.agents.find((a) => a.name === 'marked')).toMatchObject({ module: './agents/marked.mjs' });
    expect(catalog.agents.find((a) => a.name === 'marked')!.description).toContain('not trusted');
    await expect(fs.access(marker)).rejects.toThrow();
    expect((await cli('agents', '--help')).out).toContain('imported (in a worker process) only when DIR is trusted');
    // --trust: trusted, and loaded.
    await cli('agents', root, '--trust');
    await fs.access(marker);
  });

  it('run, resume and approve refuse without --trust, naming what would run and how to trust', async () => {
    for (const args of [
      ['resume', root, 't'],
      ['approve', root, 't'],
      ['run', root, 'marked', '--task', 'm'],
      ['run', root, 'checkpoint-demo', '--task', 't'],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toContain('is not trusted');
      expect(r.err).toContain('./agents/marked.mjs');
      expect(r.err).toContain('--trust');
    }
    await expect(fs.access(marker)).rejects.toThrow();
    const resumed = await cli('resume', root, 't', '--trust');
    expect(resumed.err).toContain('trusted');
    expect(await isTrusted(root)).toBe(true);
  });

  it('names the command agents that would run, without starting them', async () => {
    await fs.writeFile(
      path.join(root, 'waystation.config.json'),
      JSON.stringify({
        agents: [
          { module: './agents/marked.mjs', name: 'marked' },
          { name: 'py-tool', command: ['python3', 'tool.py', '--fast'] },
        ],
      }),
    );
    const r = await cli('resume', root, 't');
    expect(r.code).toBe(2);
    expect(r.err).toContain('./agents/marked.mjs');
    expect(r.err).toContain('command agent "py-tool": python3 tool.py --fast');
    await expect(fs.access(marker)).rejects.toThrow();
  });

  it('says an agent nothing registers is not there, with the nearest name, instead of asking for trust', async () => {
    const before = (await fs.readdir(root)).sort();
    const typo = await cli('run', root, 'markd', '--task', 'n');
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('there is no agent "markd" (did you mean "marked"?)');
    expect(typo.err).toContain('waystation.config.json registers marked');
    expect(typo.err).not.toContain('is not trusted');
    const json = await cli('run', root, 'checkpoint-dmo', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.out)).toMatchObject({ error: 'invalid', message: expect.stringContaining('(did you mean "checkpoint-demo"?)') });
    expect((await fs.readdir(root)).sort()).toEqual(before);
    expect(await isTrusted(root)).toBe(false);
    await expect(fs.access(marker)).rejects.toThrow();
    // An entry that leaves its name to its module may hold any name: only loading it tells, so trust is asked first.
    await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agents/marked.mjs' }] }));
    const unnamed = await cli('run', root, 'markd', '--task', 'n');
    expect(unnamed.code).toBe(2);
    expect(unnamed.err).toContain('is not trusted');
    await expect(fs.access(marker)).rejects.toThrow();
  });

  it('a new task of a built-in agent needs no trust: the person named the code', async () => {
    await distrustDirectory(root);
    expect((await cli('run', root, 'checkpoint-demo', '--task', 'fresh')).code).toBe(0);
    expect(await isTrusted(root)).toBe(false);
  });
});

describe('a DIR that is a URL', () => {
  it('of no store is refused by every command, names no password, and creates no folder', async () => {
    const cwd = process.cwd();
    process.chdir(tmp);
    try {
      for (const url of ['https://user:s3cret@db.example/waystation', 'sqlite://user:s3cret@db.example/waystation']) {
        for (const args of [
          ['run', url, 'checkpoint-demo'],
          ['ls', url],
          ['serve', url],
          ['agents', url],
        ]) {
          const r = await cli(...args);
          expect(r.code, args.join(' ')).toBe(2);
          expect(r.err).toMatch(/is a (https|sqlite):\/\/ URL, not a directory/);
          expect(r.err).not.toContain('s3cret');
        }
      }
      expect((await fs.readdir(tmp)).sort()).toEqual(['downloaded']);
    } finally {
      process.chdir(cwd);
    }
  });

  it('of a PostgreSQL server that cannot be reached fails saying so, names no password, and creates no folder', async () => {
    const url = 'postgresql://user:s3cret@127.0.0.1:1/waystation';
    const cwd = process.cwd();
    process.chdir(tmp);
    try {
      for (const args of [
        ['run', url, 'checkpoint-demo'],
        ['ls', url],
      ]) {
        const r = await cli(...args);
        expect(r.code, args.join(' ')).not.toBe(0);
        expect(r.err, args.join(' ')).toMatch(/127\.0\.0\.1:1/);
        expect(r.err).not.toContain('s3cret');
      }
      expect((await fs.readdir(tmp)).sort()).toEqual(['downloaded']);
    } finally {
      process.chdir(cwd);
    }
  });
});
