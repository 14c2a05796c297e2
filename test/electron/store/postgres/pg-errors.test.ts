/**
 * What a person meets when a database cannot be used as given: no password,
 * a password file, a role without rights, a URL that does not parse. Each
 * error names the database without its password, and a failed login leaves
 * no socket behind to keep the process alive.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPostgresStore } from '../../../../electron/store/postgres/postgres-store.js';
import { mapConnectError, PostgresStoreError, PostgresUrlError } from '../../../../electron/store/postgres/pg-errors.js';
import { createDatabase, roleWithoutRights, TEST_PASSWORD, withoutPassword } from '../../../support/postgres-cluster.js';
import { failure } from '../store-test-helpers.js';

/** The TCP sockets this process holds open. */
const openSockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

// A home of its own, with no password file unless a test writes one, and no PGPASSWORD: the password comes from the
// URL or nowhere.
let home: string;
const saved = { HOME: process.env.HOME, PGPASSWORD: process.env.PGPASSWORD, PGPASSFILE: process.env.PGPASSFILE };
beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pg-home-'));
  process.env.HOME = home;
  delete process.env.PGPASSWORD;
  delete process.env.PGPASSFILE;
});
afterEach(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await fs.rm(home, { recursive: true, force: true });
});

describe('a login without a password, to a server that wants one', () => {
  it('is refused at once with the login message, and its socket is closed (nothing keeps the process alive)', async () => {
    const url = withoutPassword(await createDatabase('nopw'));
    const before = openSockets();
    const store = openPostgresStore(url);
    const started = Date.now();
    const err = await failure(store.listTasks());
    expect(err).toBeInstanceOf(PostgresStoreError);
    expect((err as PostgresStoreError).fault).toBe('auth');
    expect(err.message).toContain(`the PostgreSQL server of ${url} refused the login (it asks for a password, and none was given)`);
    expect(err.message).toContain('check the user and the password (in the URL, PGPASSWORD or ~/.pgpass)');
    expect(Date.now() - started).toBeLessThan(5_000);
    // The driver left the half-done login open until the server's authentication timeout (60 s).
    await expect.poll(openSockets, { timeout: 3_000 }).toBe(before);
    await store.close();
  });

  it('the change feed too: refused, named, its socket closed', async () => {
    const url = withoutPassword(await createDatabase('nopwfeed'));
    const before = openSockets();
    const store = openPostgresStore(url, { autoInit: false });
    const err = await failure(store.subscribe(() => {}));
    expect((err as PostgresStoreError).fault).toBe('auth');
    expect(err.message).toContain(url);
    await expect.poll(openSockets, { timeout: 3_000 }).toBe(before);
    await store.close();
  });

  it("the driver's own words for it (a client without Waystation's lookup) are the login message too", () => {
    const err = mapConnectError(new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'), 'postgres://me@db/agents');
    expect((err as PostgresStoreError).fault).toBe('auth');
    expect(err.message).toMatch(/^the PostgreSQL server of postgres:\/\/me@db\/agents refused the login/);
  });
});

describe('~/.pgpass', () => {
  it('gives the password, and the driver prints no deprecation warning', async () => {
    const url = withoutPassword(await createDatabase('pgpass'));
    const { port } = new URL(url);
    await fs.writeFile(path.join(home, '.pgpass'), `# the tests' cluster\n127.0.0.1:${port}:*:postgres:${TEST_PASSWORD}\n`, {
      mode: 0o600,
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const store = openPostgresStore(url);
      await store.init();
      expect(await store.listTasks()).toEqual([]);
      await store.close();
      // A warning is emitted on the next tick of the one that asked for it.
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => /pgpass/i.test(w))).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')('one that others may read is not used, and the refusal says why', async () => {
    const url = withoutPassword(await createDatabase('pgpassopen'));
    const { port } = new URL(url);
    const file = path.join(home, '.pgpass');
    await fs.writeFile(file, `127.0.0.1:${port}:*:postgres:${TEST_PASSWORD}\n`);
    await fs.chmod(file, 0o644);
    const store = openPostgresStore(url);
    const err = await failure(store.listTasks());
    expect((err as PostgresStoreError).fault).toBe('auth');
    expect(err.message).toContain('~/.pgpass was not read: group or others may access it; `chmod 600 ~/.pgpass`');
    expect(err.message).not.toContain(TEST_PASSWORD);
    await store.close();
  });
});

describe('a role without the rights Waystation needs', () => {
  it('db init and reads say so, naming the database without the password', async () => {
    const admin = await createDatabase('rights');
    const { url, shown, password: rolePassword } = await roleWithoutRights(admin, 'ws_norights');

    const store = openPostgresStore(url);
    // PostgreSQL 15: only the database's owner may create in its public schema.
    const init = await failure(store.init());
    expect((init as PostgresStoreError).fault).toBe('permission');
    expect(init.message).toContain(
      `the PostgreSQL server of ${shown} refused a statement: the role may not create Waystation's tables there`,
    );
    expect(init.message).toContain('permission denied for schema public');
    expect(init.message).toContain(`waystation db init ${shown}\` as the database's owner`);

    // Its owner made the schema; this role has no right to its tables.
    const owner = openPostgresStore(admin);
    await owner.init();
    await owner.close();
    const list = await failure(store.listTasks());
    expect((list as PostgresStoreError).fault).toBe('permission');
    expect(list.message).toContain(`the PostgreSQL server of ${shown} refused a statement: the role has no right to Waystation's tables`);
    expect(list.message).toContain('permission denied for table waystation_meta');
    for (const m of [init.message, list.message]) expect(m).not.toContain(rolePassword);
    await store.close();
  });
});

describe('a URL that does not parse', () => {
  const bad = 'postgres://alice:p@ss:w/rd#1?%@127.0.0.1:5432/alicedb';

  it('is bad input that says to percent-encode the password, and never echoes it', async () => {
    const store = openPostgresStore(bad);
    for (const err of [await failure(store.listTasks()), await failure(store.init()), await failure(store.subscribe(() => {}))]) {
      expect(err).toBeInstanceOf(PostgresUrlError);
      expect(err.message).toMatch(/^cannot parse the PostgreSQL URL postgres:\/\/…@127\.0\.0\.1:5432\/alicedb: /);
      expect(err.message).toContain('percent-encode');
      expect(err.message).toContain('PGPASSWORD or ~/.pgpass');
      expect(err.message).not.toMatch(/p@ss|w\/rd/);
    }
    await store.close();
  });
});
