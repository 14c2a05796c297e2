import { describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openLocation } from '../../../electron/store/open-location.js';
import { TEST_PASSWORD, withClient } from '../../support/postgres-cluster.js';
import { databaseContents, databaseWithBoth, langGraphDatabase, WAITING_THREAD } from '../../support/langgraph-database.js';
import { fingerprint, scenarioDatabase } from '../../support/langgraph-sqlite.js';
import { THREADS } from '../../support/langgraph-graphs.js';
import { cleanup, makeCheckpoint, tempRoot } from '../store/store-test-helpers.js';
import { captureCli } from './capture-cli.js';

/** A refused command: exit 2, the database named for what it is, nothing written, no `db init` advised, no password. */
function expectRefused(r: { code: number; out: string; err: string }): void {
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/postgres:\/\/postgres@127\.0\.0\.1:\d+\/lgpg_\w+ is a LangGraph checkpointer database/);
  expect(r.err).toContain('Waystation reads its threads (ls, show, history, diff, result, serve)');
  expect(r.err).toContain('keeps its own tasks in a database of their own or a checkpoint directory');
  expect(r.err).toContain('Nothing was written.');
  expect(r.out + r.err).not.toContain('db init');
  expect(r.out + r.err).not.toContain(TEST_PASSWORD);
}

/** What verify says of any LangGraph checkpointer. */
function expectNothingToVerify(r: { code: number; out: string; err: string }, shown: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.err).toMatch(shown);
  expect(r.err).toContain('a LangGraph thread records none of these, so there is nothing to verify');
  expect(r.err).toContain('`waystation show ');
  expect(r.err).not.toContain('db init');
  expect(r.err).not.toContain('not a directory');
}

describe('the CLI given a LangGraph PostgreSQL database', () => {
  it('db init, run and copy into it refuse with exit 2 and create nothing; its threads stay listed', async () => {
    const url = await langGraphDatabase();
    const before = await databaseContents(url);
    const dir = await tempRoot('waystation-lgpg-copy-');
    try {
      await openLocation(dir).create(makeCheckpoint('a'));
      expectRefused(await captureCli('db', 'init', url));
      expect(await databaseContents(url)).toBe(before);
      expectRefused(await captureCli('run', url, 'checkpoint-demo', '--task', 'demo-1'));
      expect(await databaseContents(url)).toBe(before);
      expectRefused(await captureCli('copy', dir, url));
      expect(await databaseContents(url)).toBe(before);
    } finally {
      await cleanup(dir);
    }
    const ls = await captureCli('ls', url);
    expect(ls.code).toBe(0);
    expect(ls.out).toContain(WAITING_THREAD);
    expect(ls.err).toBe('');
    const show = await captureCli('show', url, WAITING_THREAD);
    expect(show.code).toBe(0);
    expect(show.out).toContain('waiting_human');
  });

  it('a command that needs a Waystation store says what the database is, never to run db init', async () => {
    const url = await langGraphDatabase();
    const before = await databaseContents(url);
    const tail = await captureCli('tail', url, WAITING_THREAD);
    expect(tail.code).toBe(2);
    expect(tail.err).toContain('is a LangGraph checkpointer database');
    expect(tail.err).toContain('Nothing was read or written.');
    expect(tail.err).not.toContain('db init');
    expectNothingToVerify(
      await captureCli('verify', url, WAITING_THREAD),
      /postgres:\/\/postgres@127\.0\.0\.1:\d+\/lgpg_\w+ is a LangGraph checkpointer: verify checks/,
    );
    expect(await databaseContents(url)).toBe(before);
  });

  it('a database an earlier build gave both is listed as the Waystation store with a note, and the documented statement gives the threads back', async () => {
    // What the earlier build did on first use: the schema created beside LangGraph's tables, and a task saved.
    const url = await databaseWithBoth();
    const store = openLocation(url);
    await store.create(makeCheckpoint('demo-1'));
    await store.close();

    const ls = await captureCli('ls', url, '--json');
    expect(ls.code).toBe(0);
    expect((JSON.parse(ls.out) as { task_id: string }[]).map((t) => t.task_id)).toEqual(['demo-1']);
    expect(ls.err).toMatch(
      /^note: postgres:\/\/postgres@127\.0\.0\.1:\d+\/lgpg_\w+ also holds LangGraph's checkpointer tables, whose threads are not shown/,
    );
    expect(ls.err).toContain('`waystation copy postgres://postgres@127.0.0.1:');
    expect(ls.err).toContain('docs/POSTGRES.md, "A LangGraph database"');
    expect(ls.err).not.toContain(TEST_PASSWORD);
    const missing = await captureCli('show', url, WAITING_THREAD);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('also holds LangGraph');

    // docs/POSTGRES.md's way back: the Waystation tasks copied out, then its statement run.
    const saved = await tempRoot('waystation-lgpg-saved-');
    try {
      expect((await captureCli('copy', url, saved)).code).toBe(0);
      expect((await openLocation(saved).listTasks()).map((t) => t.task_id)).toEqual(['demo-1']);
    } finally {
      await cleanup(saved);
    }
    const doc = await fs.readFile(path.join(import.meta.dirname, '../../../docs/POSTGRES.md'), 'utf8');
    const statement = /## A LangGraph database[\s\S]*?```sql\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(statement).toBeDefined();
    await withClient(url, (c) => c.query(statement!));
    const after = await captureCli('ls', url);
    expect(after.code).toBe(0);
    expect(after.out).toContain(WAITING_THREAD);
    expect(after.out).not.toContain('demo-1');
    expect(after.err).toBe('');
  });
});

describe('verify given a LangGraph SQLite checkpointer', () => {
  it('refuses it with exit 2, saying there is nothing to verify, and changes no byte', async () => {
    const { dir, file } = await scenarioDatabase();
    try {
      const before = fingerprint(file);
      expectNothingToVerify(
        await captureCli('verify', file, THREADS.waiting),
        /checkpoints\.sqlite is a LangGraph checkpointer: verify checks/,
      );
      expect(fingerprint(file)).toEqual(before);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
