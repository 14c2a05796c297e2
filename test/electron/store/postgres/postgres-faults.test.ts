import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { PostgresStoreError } from '../../../../electron/store/postgres/pg-errors.js';
import { migrate, MIGRATIONS, readSchemaVersion, SCHEMA_VERSION } from '../../../../electron/store/postgres/pg-schema.js';
import { ConflictError, ReadOnlyError } from '../../../../electron/store/store-types.js';
import { WriteLimitError } from '../../../../electron/store/write-limits.js';
import { clusterUrl, createDatabase, TEST_PASSWORD, testCluster, withClient } from '../../../support/postgres-cluster.js';
import { failure, makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

describe('connection faults', () => {
  it('a server that is not there: unreachable, named without the password', async () => {
    const store = openPostgresStore('postgres://me:topsecret@127.0.0.1:1/agents', { connectTimeoutMs: 2000 });
    const err = await failure(store.listTasks());
    expect(err).toBeInstanceOf(PostgresStoreError);
    expect((err as PostgresStoreError).fault).toBe('unreachable');
    expect(err.message).toContain('postgres://me@127.0.0.1:1/agents');
    expect(err.message).not.toContain('topsecret');
    await store.close();
  });

  it('a wrong password: refused login, and the password tried is not repeated', async () => {
    const info = await testCluster();
    const store = openPostgresStore(clusterUrl(info, 'postgres', 'not-the-password'));
    const err = await failure(store.listTasks());
    expect((err as PostgresStoreError).fault).toBe('auth');
    expect(err.message).not.toContain('not-the-password');
    expect(err.message).not.toContain(TEST_PASSWORD);
    await store.close();
  });

  it('a database that does not exist: says to create it', async () => {
    const info = await testCluster();
    const store = openPostgresStore(clusterUrl(info, 'no_such_database'));
    const err = await failure(store.getTask('t'));
    expect((err as PostgresStoreError).fault).toBe('database-missing');
    expect(err.message).toContain('waystation db init');
    expect(err.message).not.toContain(TEST_PASSWORD);
    await store.close();
  });

  it('a change feed on a database without the schema: the schema is what it says, and its own connection is let go', async () => {
    const url = await createDatabase('feed');
    const store = openPostgresStore(url, { autoInit: false });
    const err = await failure(store.subscribe(() => {}));
    expect((err as PostgresStoreError).fault).toBe('schema-missing');
    expect(err.message).toContain('waystation db init');
    // The feed logged in beside the schema check; it logs out when the check fails.
    const database = new URL(url).pathname.slice(1);
    await expect
      .poll(() =>
        withClient(url, async (c) =>
          Number(
            (
              await c.query<{ n: string }>(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'waystation-listen'",
                [database],
              )
            ).rows[0].n,
          ),
        ),
      )
      .toBe(0);
    await store.close();
  });

  it('a change feed on a server that is not there: unreachable, named without the password', async () => {
    const store = openPostgresStore('postgres://me:topsecret@127.0.0.1:1/agents', { connectTimeoutMs: 2000 });
    const err = await failure(store.subscribe(() => {}));
    expect((err as PostgresStoreError).fault).toBe('unreachable');
    expect(err.message).not.toContain('topsecret');
    await store.close();
  });

  it('a connection killed while a save waits in its transaction: the save says nothing was written, and nothing was', async () => {
    const url = await createDatabase('drop');
    const store = openPostgresStore(url);
    const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const lease = await store.acquireLease('t1', { owner: 'runner', heartbeatMs: 0 });
    // Hold the lease row, so the save's fence (a share lock on it) waits inside its transaction.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT * FROM waystation_leases WHERE task_id = 't1' FOR UPDATE`);
    const saving = failure(store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' }, lease }));
    await withClient(url, async (admin) => {
      for (;;) {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name = 'waystation'`,
        );
        if (rows.length > 0) {
          await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    await blocker.query('ROLLBACK');
    await blocker.end();
    const err = await saving;
    expect(err).toBeInstanceOf(PostgresStoreError);
    expect((err as PostgresStoreError).fault).toBe('connection-lost');
    expect(err.message).toMatch(/nothing was written and version 1 is intact/);
    expect(err.message).not.toContain(TEST_PASSWORD);
    expect((await store.history('t1')).map((v) => v.version)).toEqual([1]);
    // The store reconnects: the same save, made again, commits.
    const again = await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' }, lease });
    expect(again.checkpoint.version).toBe(2);
    await lease.release();
    await store.close();
  });
});

describe('write limits', () => {
  it('a version larger than a directory could hold is refused naming the size limit, nothing written', async () => {
    const url = await createDatabase('limits');
    const store = openPostgresStore(url, { maxFileBytes: 64 * 1024 });
    const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const err = (await store
      .save('t1', { expectedVersion: 1, checkpoint: withoutVersion(v1), results: { s1: 'x'.repeat(100 * 1024) } })
      .catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(WriteLimitError);
    expect((err as WriteLimitError).limit).toBe('file-size');
    expect(err.message).toContain('65536-byte limit');
    expect((await store.history('t1')).map((v) => v.version)).toEqual([1]);
    await withClient(url, async (c) => expect((await c.query('SELECT 1 FROM waystation_blobs')).rowCount).toBe(0));
    await store.close();
  });
});

describe('the schema', () => {
  it('is missing in a new database: reads say to run db init, the first write creates it', async () => {
    const url = await createDatabase('schema');
    const reader = openPostgresStore(url, { autoInit: false });
    const err = await failure(reader.listTasks());
    expect((err as PostgresStoreError).fault).toBe('schema-missing');
    expect(err.message).toContain('waystation db init');
    await expect(reader.create(makeCheckpoint('t1'))).rejects.toBeInstanceOf(PostgresStoreError);
    const writer = openPostgresStore(url);
    await writer.create(makeCheckpoint('t1'));
    expect((await reader.listTasks()).map((t) => t.task_id)).toEqual(['t1']);
    await Promise.all([reader.close(), writer.close()]);
  });

  it('db init is idempotent and says what it did', async () => {
    const url = await createDatabase('init');
    const store = openPostgresStore(url);
    expect(await store.init()).toEqual({ from: 0, to: SCHEMA_VERSION });
    expect(await store.init()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    await store.close();
  });

  it('migrates from every earlier schema version, keeping what is stored', async () => {
    for (let start = 0; start < SCHEMA_VERSION; start++) {
      const url = await createDatabase('migrate');
      await withClient(url, async (c) => {
        await migrate(c, 'test', start);
        expect(await readSchemaVersion(c)).toBe(start);
        expect(await migrate(c, 'test')).toEqual({ from: start, to: SCHEMA_VERSION });
      });
      const store = openPostgresStore(url);
      const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
      await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'two' } });
      expect((await store.readVersion('t1', 2)).phase).toBe('two');
      await store.close();
    }
    expect(MIGRATIONS.map((m) => m.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it('newer than this build: opens read-only, every write says why and writes nothing', async () => {
    const url = await createDatabase('newer');
    const store = openPostgresStore(url);
    const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
    await store.close();
    await withClient(url, (c) =>
      c.query(`UPDATE waystation_meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION + 1)]),
    );
    const later = openPostgresStore(url);
    const [listed] = await later.listTasks();
    expect(listed.read_only).toBe(true);
    expect((await later.getTask('t1'))?.checkpoint?.version).toBe(1);
    const err = await failure(later.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'x' } }));
    expect(err).toBeInstanceOf(ReadOnlyError);
    expect(err.message).toMatch(/newer than this build knows/);
    await expect(later.init()).rejects.toThrow(/newer than this build knows/);
    expect((await later.history('t1')).map((v) => v.version)).toEqual([1]);
    await later.close();
  });
});

describe('the statement a save commits by', () => {
  it('refused when the task row is not at the version before: a conflict, and nothing of the save stays', async () => {
    const url = await createDatabase('stale');
    const store = openPostgresStore(url);
    const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
    // The row moved on without a version of this writer's knowing (edited by hand): the version row the
    // save inserts first must go with the refusal, and with it the blob and the event.
    await withClient(url, (c) => c.query(`UPDATE waystation_tasks SET last_version = 7 WHERE task_id = 't1'`));
    const err = await failure(
      store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(v1), results: { [v1.plan[0].id]: { kept: false } } }),
    );
    expect(err).toBeInstanceOf(ConflictError);
    const counts = await withClient(url, async (c) => {
      const n = async (sql: string) => (await c.query<{ n: number }>(sql)).rows[0].n;
      return {
        versions: await n(`SELECT count(*)::int AS n FROM waystation_versions`),
        blobs: await n(`SELECT count(*)::int AS n FROM waystation_blobs`),
        events: await n(`SELECT count(*)::int AS n FROM waystation_events`),
      };
    });
    expect(counts).toEqual({ versions: 1, blobs: 0, events: 1 });
    await store.close();
  });
});

describe('storage', () => {
  it('stores each blob once, under its hash, however many tasks and versions carry it', async () => {
    const url = await createDatabase('blobs');
    const store = openPostgresStore(url);
    for (const id of ['a', 'b']) {
      const v1 = (await store.create(makeCheckpoint(id))).checkpoint;
      await store.save(id, { expectedVersion: 1, checkpoint: withoutVersion(v1), results: { [v1.plan[0].id]: { same: 'value' } } });
    }
    const { rows } = await withClient(url, (c) => c.query(`SELECT count(*)::int AS n FROM waystation_blobs`));
    expect(rows[0].n).toBe(1);
    await store.close();
  });
});
