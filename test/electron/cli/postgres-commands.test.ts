import { describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../shared/checkpoint/canonical-json.js';
import { openLocation } from '../../../electron/store/open-location.js';
import type { CheckpointSource } from '../../../electron/store/store-types.js';
import { createDatabase, TEST_PASSWORD, withoutPassword } from '../../support/postgres-cluster.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { cleanup, makeCheckpoint, tempRoot } from '../store/store-test-helpers.js';
import { captureCli } from './capture-cli.js';
import { SCHEMA_VERSION } from '../../../electron/store/postgres/pg-schema.js';

useOfflineWorkers({ SKIP_FAILURE: '1' });

/** Every version of every task, by the hash of its canonical JSON. */
async function fingerprint(source: CheckpointSource): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of await source.listTasks()) {
    const versions = (await source.history(t.task_id)).map((v) => v.version);
    const cps = await source.readVersions(t.task_id, versions);
    out[t.task_id] = cps.map((cp) => createHash('sha256').update(canonicalJson(cp)).digest('hex'));
  }
  return out;
}

describe('the CLI on a PostgreSQL URL', () => {
  it('db init, run, ls, show, history and tail work on a database, and no output carries the password', async () => {
    const url = await createDatabase('cli');
    const outputs: string[] = [];
    const cli = async (...args: string[]) => {
      const r = await captureCli(...args);
      outputs.push(r.out, r.err);
      return r;
    };
    expect((await cli('db', 'init', url)).out).toContain(`created the Waystation schema (version ${SCHEMA_VERSION})`);
    expect((await cli('db', 'init', url)).out).toMatch(/already has the Waystation schema/);
    const run = await cli('run', url, 'checkpoint-demo', '--task', 'demo-1', '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out).status).toBe('done');
    const ls = await cli('ls', url, '--json');
    expect(JSON.parse(ls.out).map((t: { task_id: string; status: string }) => [t.task_id, t.status])).toEqual([['demo-1', 'done']]);
    expect((await cli('show', url, 'demo-1')).code).toBe(0);
    const history = JSON.parse((await cli('history', url, 'demo-1', '--json')).out) as { version: number }[];
    expect(history.length).toBeGreaterThan(4);
    expect((await cli('tail', url, 'demo-1')).out).toMatch(/version 1/);
    expect((await cli('verify', url, 'demo-1')).code).toBe(0);
    const missing = await cli('show', url, 'nope');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no task "nope" in postgres:\/\/postgres@127\.0\.0\.1/);
    for (const text of outputs) expect(text).not.toContain(TEST_PASSWORD);
  });

  it('copy moves every task from a database to a directory and on to another database, verified, idempotent, the source untouched', async () => {
    const source = await createDatabase('copysrc');
    const dest = await createDatabase('copydst');
    const dir = await tempRoot('waystation-copy-');
    try {
      expect((await captureCli('run', source, 'checkpoint-demo', '--task', 'a')).code).toBe(0);
      expect((await captureCli('run', source, 'checkpoint-demo', '--task', 'b')).code).toBe(0);
      const before = await fingerprint(openLocation(source));
      const eventsBefore = await openLocation(source).readEvents('a');

      const first = await captureCli('copy', source, dir, '--json');
      expect(first.code).toBe(0);
      expect((JSON.parse(first.out) as { status: string }[]).map((o) => o.status)).toEqual(['copied', 'copied']);
      // Into a folder: no note, that folder is where a command on it looks for artifacts.
      expect(first.err).toBe('');
      const again = await captureCli('copy', source, dir, '--json');
      expect((JSON.parse(again.out) as { status: string; versions: number }[]).map((o) => [o.status, o.versions])).toEqual([
        ['up-to-date', 0],
        ['up-to-date', 0],
      ]);
      // From a folder into a database: one note that the artifact files stay in the folder, and where to run commands.
      const intoDatabase = await captureCli('copy', dir, dest, '--task', 'b');
      expect(intoDatabase.code).toBe(0);
      const shownDest = withoutPassword(dest);
      expect(intoDatabase.err).toBe(
        `note: the artifact files were not copied; they stay in ${dir}. A database names no folder: resume, verify and serve of ` +
          `${shownDest} look for a task's artifacts in the folder they run in, so run them in ${dir} (elsewhere the artifacts ` +
          'count as missing, and resume stops for a person).\n',
      );
      // Nothing copied, nothing to note.
      const nothingNew = await captureCli('copy', dir, dest, '--task', 'b');
      expect(nothingNew.out).toMatch(/up-to-date/);
      expect(nothingNew.err).toBe('');

      expect(await fingerprint(openLocation(dir))).toEqual(before);
      expect(await fingerprint(openLocation(dest))).toEqual({ b: before.b });
      expect(await fingerprint(openLocation(source))).toEqual(before);
      // Every event, in order, with its id; a version event carries the time of the copy.
      const copied = await openLocation(dir).readEvents('a');
      const strip = (e: { at: string; type: string }) => (e.type === 'version' ? { ...e, at: '' } : e);
      expect(copied.map(strip)).toEqual(eventsBefore.map(strip));
      expect(await fs.readdir(dir)).toEqual(expect.arrayContaining(['a', 'b']));
    } finally {
      await cleanup(dir);
    }
  });

  it('copy refuses a database onto itself however its URL is written: exit 2, nothing written', async () => {
    const url = await createDatabase('copyself');
    const store = openLocation(url);
    await store.create(makeCheckpoint('t'));
    const before = await fingerprint(store);
    const eventsBefore = (await store.readEvents('t')).length;
    await store.close();
    const u = new URL(url);
    const name = u.pathname.slice(1);
    const port = u.port;
    const at = (rest: string, scheme = 'postgres') => `${scheme}://postgres:${encodeURIComponent(TEST_PASSWORD)}@127.0.0.1${rest}`;
    const spellings: [string, string][] = [
      [url, at(`:${port}/${name}`, 'postgresql')],
      [url, at(`:${port}/%${name.charCodeAt(0).toString(16)}${name.slice(1)}`)],
      [at(`:${port}/${name}?application_name=a&sslmode=disable`), at(`:${port}/${name}?sslmode=disable&application_name=a`)],
      // The port left out is the one the driver then uses: PGPORT here.
      [url, at(`/${name}`)],
    ];
    const savedPort = process.env.PGPORT;
    process.env.PGPORT = port;
    try {
      for (const [from, to] of spellings) {
        const r = await captureCli('copy', from, to);
        expect(r.code, `${withoutPassword(from)} onto ${withoutPassword(to)}`).toBe(2);
        expect(r.err).toContain('are the same store; nothing was copied');
        expect(r.out + r.err).not.toContain(TEST_PASSWORD);
      }
    } finally {
      if (savedPort === undefined) delete process.env.PGPORT;
      else process.env.PGPORT = savedPort;
    }
    const after = openLocation(url);
    expect(await fingerprint(after)).toEqual(before);
    expect((await after.readEvents('t')).length).toBe(eventsBefore);
    await after.close();
  });

  it('a server that is not there: a clear error, exit 1, no password', async () => {
    const r = await captureCli('ls', `postgres://me:${TEST_PASSWORD}@127.0.0.1:1/agents`);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot reach the PostgreSQL server of postgres:\/\/me@127\.0\.0\.1:1\/agents/);
    expect(r.err).not.toContain(TEST_PASSWORD);
  });

  it('serve of a server that is not there: the URL printed while it opened stops answering, a clear error, exit 1', async () => {
    const r = await captureCli('serve', `postgres://me:${TEST_PASSWORD}@127.0.0.1:1/agents`);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot reach the PostgreSQL server of postgres:\/\/me@127\.0\.0\.1:1\/agents/);
    expect(r.out + r.err).not.toContain(TEST_PASSWORD);
    // The host listened while the database was being opened (web-server.ts); it is closed once that failed.
    const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(r.out)?.[0];
    expect(url).toBeDefined();
    await expect(fetch(url!)).rejects.toThrow();
  });
});
