import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import {
  databaseKind,
  LangGraphDatabaseError,
  migrate,
  readDatabaseHolds,
  SCHEMA_VERSION,
} from '../../../../electron/store/postgres/pg-schema.js';
import { detectLocation } from '../../../../electron/sources/detect-location.js';
import { createDatabase, TEST_PASSWORD, withClient } from '../../../support/postgres-cluster.js';
import { databaseContents, databaseWithBoth, langGraphDatabase } from '../../../support/langgraph-database.js';
import { makeCheckpoint } from '../store-test-helpers.js';

/** What a refusal must say: which database, that it is LangGraph's, that nothing changed; never `db init`, never the password. */
function expectLangGraphRefusal(err: unknown, nothing: 'Nothing was written.' | 'Nothing was read or written.'): void {
  expect(err).toBeInstanceOf(LangGraphDatabaseError);
  const message = (err as Error).message;
  expect(message).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/lgpg_\w+ is a LangGraph checkpointer database/);
  expect(message).toContain('checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations');
  expect(message).toContain('keeps its own tasks in a database of their own or a checkpoint directory');
  expect(message).toContain(nothing);
  expect(message).not.toContain('db init');
  expect(message).not.toContain(TEST_PASSWORD);
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => err,
  );

describe('a LangGraph PostgreSQL database given to the Waystation store', () => {
  it('is never given the Waystation schema: every path to its creation refuses before creating anything', async () => {
    const url = await langGraphDatabase();
    const before = await databaseContents(url);
    const store = openPostgresStore(url);
    try {
      expectLangGraphRefusal(await refusal(store.prepareForWrites()), 'Nothing was written.');
      expectLangGraphRefusal(await refusal(store.init()), 'Nothing was written.');
      expectLangGraphRefusal(await refusal(store.create(makeCheckpoint('t1'))), 'Nothing was written.');
      expectLangGraphRefusal(await refusal(store.acquireLease('t1', { owner: 'test', heartbeatMs: 0 })), 'Nothing was written.');
      expectLangGraphRefusal(await refusal(store.appendEvent('t1', { type: 'note' } as never)), 'Nothing was written.');
      // migrate itself, under its lock, whoever calls it.
      expectLangGraphRefusal(
        await refusal(withClient(url, (c) => migrate(c, url.replace(`:${TEST_PASSWORD}`, '')))),
        'Nothing was written.',
      );
    } finally {
      await store.close();
    }
    const manual = openPostgresStore(url, { autoInit: false });
    try {
      expectLangGraphRefusal(await refusal(manual.prepareForWrites()), 'Nothing was written.');
      // Reads name what the database is instead of advising `db init`.
      expectLangGraphRefusal(await refusal(manual.listTasks()), 'Nothing was read or written.');
      expectLangGraphRefusal(await refusal(manual.getTask('thread-waiting')), 'Nothing was read or written.');
    } finally {
      await manual.close();
    }
    expect(await databaseContents(url)).toBe(before);
    expect(await detectLocation(url)).toEqual({ kind: 'langgraph-postgres', url });
  });

  it('an empty database still gets the schema on the first write, and a database of neither kind is no LangGraph one', async () => {
    const url = await createDatabase('empty');
    expect(await withClient(url, (c) => readDatabaseHolds(c))).toEqual({ version: 0, langgraph: [] });
    const store = openPostgresStore(url);
    try {
      await store.prepareForWrites();
      expect(await store.schemaVersion()).toEqual({ found: SCHEMA_VERSION, known: SCHEMA_VERSION });
    } finally {
      await store.close();
    }
  });

  it('tells the kinds apart by one rule: any of LangGraph’s tables without Waystation’s schema is LangGraph’s', () => {
    expect(databaseKind({ version: 0, langgraph: [] })).toBe('empty');
    expect(databaseKind({ version: 0, langgraph: ['checkpoint_migrations'] })).toBe('langgraph');
    expect(databaseKind({ version: SCHEMA_VERSION, langgraph: [] })).toBe('waystation');
    expect(databaseKind({ version: 1, langgraph: ['checkpoints'] })).toBe('both');
  });

  it('a database an earlier build gave both is opened as the Waystation store, and detection says it holds both', async () => {
    const url = await databaseWithBoth();
    expect(await detectLocation(url)).toEqual({ kind: 'postgres-store', url, holds: 'waystation-and-langgraph' });
    const store = openPostgresStore(url);
    try {
      // Its schema is there: writes go on (a runner of that database is not stopped), and migrate has nothing to do.
      await store.prepareForWrites();
      expect(await store.init()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      expect(await store.listTasks()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
