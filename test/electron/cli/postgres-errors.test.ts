/**
 * The command line on a database it cannot use as given: each refusal names
 * the database without its password, says what to do, exits with the code
 * its help gives, and at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, roleWithoutRights, TEST_PASSWORD, withoutPassword } from '../../support/postgres-cluster.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { captureCli } from './capture-cli.js';

useOfflineWorkers({ SKIP_FAILURE: '1' });

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = path.join(repo, 'bin', 'waystation.mjs');

// A home with no password file unless a test writes one.
let home: string;
beforeAll(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pg-cli-home-'));
});
afterAll(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

/**
 * The real binary, as a person runs it: no PGPASSWORD, HOME as given. Resolves with its exit code, its output, and
 * how long it went on after its first error line (`lingered`, ms).
 */
function waystation(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string; lingered: number }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOME: home, ...env };
  delete childEnv.PGPASSWORD;
  delete childEnv.PGPASSFILE;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repo, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let erredAt: number | null = null;
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (erredAt === null && err.includes('waystation: ')) erredAt = Date.now();
    });
    // Well short of the 60 s a server waits for a login to finish: a process still there by then hangs on one.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err, lingered: erredAt === null ? 0 : Date.now() - erredAt });
    });
  });
}

describe('no password for a server that wants one', () => {
  it('ls: the refused-login message naming the database, and the process ends at once with 1', async () => {
    const url = withoutPassword(await createDatabase('clinopw'));
    const r = await waystation(['ls', url]);
    expect(r.err).toContain(`waystation: the PostgreSQL server of ${url} refused the login (it asks for a password, and none was given)`);
    expect(r.err).toContain('check the user and the password (in the URL, PGPASSWORD or ~/.pgpass)');
    expect(r.err).not.toMatch(/SASL|client password must be/);
    expect(r.code).toBe(1);
    // Said at once, then nothing left to wait for (the driver kept the login's socket open until the server gave up).
    expect(r.lingered).toBeLessThan(5_000);
  }, 45_000);

  it('db init and serve say the same', async () => {
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    const savedHome = process.env.HOME;
    process.env.HOME = home;
    try {
      const url = withoutPassword(await createDatabase('clinopw2'));
      for (const args of [
        ['db', 'init', url],
        ['serve', url],
      ]) {
        const r = await captureCli(...args);
        expect(r.err, args.join(' ')).toContain(
          `the PostgreSQL server of ${url} refused the login (it asks for a password, and none was given)`,
        );
        expect(r.code, args.join(' ')).toBe(1);
      }
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
      process.env.HOME = savedHome;
    }
  });
});

describe('~/.pgpass, as the docs recommend', () => {
  it('logs in with its password, and the person sees no deprecation warning', async () => {
    const url = withoutPassword(await createDatabase('clipgpass'));
    const pgpassHome = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pg-cli-pgpass-'));
    try {
      await fs.writeFile(path.join(pgpassHome, '.pgpass'), `127.0.0.1:${new URL(url).port}:*:postgres:${TEST_PASSWORD}\n`, {
        mode: 0o600,
      });
      const init = await waystation(['db', 'init', url], { HOME: pgpassHome });
      expect(init.out).toContain('created the Waystation schema');
      expect(init.code).toBe(0);
      const ls = await waystation(['ls', url], { HOME: pgpassHome });
      expect(ls.out).toContain(`no tasks in ${url}`);
      expect(ls.code).toBe(0);
      for (const r of [init, ls]) expect(r.err).not.toMatch(/DeprecationWarning|pgpass support is deprecated/);
    } finally {
      await fs.rm(pgpassHome, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a role without the rights Waystation needs', () => {
  it('db init, ls and run name the database (no password), say what is missing, and exit 1', async () => {
    const admin = await createDatabase('clirights');
    const { url, shown, password: rolePassword } = await roleWithoutRights(admin, 'ws_cli_norights');

    const init = await captureCli('db', 'init', url);
    expect(init.err).toContain(
      `waystation: the PostgreSQL server of ${shown} refused a statement: the role may not create Waystation's tables there`,
    );
    expect(init.err).toContain('permission denied for schema public');
    expect(init.code).toBe(1);

    expect((await captureCli('db', 'init', admin)).code).toBe(0);
    for (const args of [
      ['ls', url],
      ['run', url, 'checkpoint-demo', '--task', 't'],
    ]) {
      const r = await captureCli(...args);
      expect(r.err, args[0]).toContain(
        `waystation: the PostgreSQL server of ${shown} refused a statement: the role has no right to Waystation's tables`,
      );
      expect(r.err, args[0]).toContain('permission denied for table waystation_meta');
      expect(r.code, args[0]).toBe(1);
    }
    for (const r of [init]) expect(r.out + r.err).not.toContain(rolePassword);
  });
});

describe('a URL whose password is not percent-encoded', () => {
  it('every command says it cannot be parsed, how to fix it, never echoes the password, and exits 2', async () => {
    const bad = 'postgres://alice:p@ss:w/rd#1?%@127.0.0.1:5432/alicedb';
    for (const args of [
      ['ls', bad],
      ['db', 'init', bad],
      ['run', bad, 'checkpoint-demo'],
      ['show', bad, 't'],
      ['serve', bad],
    ]) {
      const r = await captureCli(...args);
      const said = args.slice(0, -1).join(' ') || args[0];
      expect(r.err, said).toContain('waystation: cannot parse the PostgreSQL URL postgres://…@127.0.0.1:5432/alicedb: ');
      expect(r.err, said).toContain('percent-encode');
      expect(r.err, said).toContain('PGPASSWORD or ~/.pgpass');
      expect(r.out + r.err, said).not.toMatch(/p@ss|w\/rd|Invalid URL/);
      expect(r.code, said).toBe(2);
    }
  });
});
