/**
 * Which store a PostgreSQL URL names: the spellings that surely name one store
 * are one, and nothing that may name another is (no name is looked up).
 */
import { describe, expect, it } from 'vitest';
import { databaseIdentity, sameDatabase } from '../../../../electron/store/postgres/database-identity.js';

/** No PG* variables: the driver's own defaults, and the login name `me`. */
const env: NodeJS.ProcessEnv = { USER: 'me', USERNAME: 'me' };

describe('sameDatabase', () => {
  it.each([
    ['the scheme alias', 'postgres://me@db.example:5433/agents', 'postgresql://me@db.example:5433/agents'],
    ['the scheme in capitals', 'postgres://me@db.example/agents', 'POSTGRESQL://me@db.example/agents'],
    ['the default port written or not', 'postgres://me@db.example/agents', 'postgres://me@db.example:5432/agents'],
    ['a host name in capitals', 'postgres://me@DB.Example/agents', 'postgres://me@db.example/agents'],
    ['percent-encoding', 'postgres://%6De@db.example/%61gents', 'postgres://me@db.example/agents'],
    [
      'query parameters in another order',
      'postgres://me@db/agents?sslmode=disable&application_name=x',
      'postgres://me@db/agents?application_name=x&sslmode=disable',
    ],
    ['the password, or none', 'postgres://me:secret@db/agents', 'postgres://me@db/agents?password=other'],
    ['the user as a parameter', 'postgres://db/agents?user=me', 'postgres://me@db/agents'],
    ['the port as a parameter', 'postgres://me@db/agents?port=5433', 'postgres://me@db:5433/agents'],
    ['no database, with a trailing slash or without', 'postgres://me@db:5433', 'postgres://me@db:5433/'],
    ['no database: the user name', 'postgres://me@db/', 'postgres://me@db/me'],
    ['no user: the login name', 'postgres://db/agents', 'postgres://me@db/agents'],
    ['no host: localhost', 'postgres://me@/agents', 'postgres://me@localhost/agents'],
    ['a unix socket folder, encoded or as a parameter', 'postgres://me@%2Frun%2Fpg/agents', 'postgres://me@/agents?host=/run/pg'],
  ])('%s: the same store', (_what, a, b) => {
    expect(sameDatabase(a, b, env)).toBe(true);
  });

  it('fills in what is left out as the driver does, from PGPORT, PGHOST, PGUSER and PGDATABASE', () => {
    const pg = { ...env, PGPORT: '6000', PGHOST: 'db', PGUSER: 'ops', PGDATABASE: 'agents' };
    expect(sameDatabase('postgres://', 'postgres://ops@db:6000/agents', pg)).toBe(true);
    expect(sameDatabase('postgres://db/agents', 'postgres://db:5432/agents', pg)).toBe(false);
  });

  it.each([
    ['localhost and 127.0.0.1 (nothing is looked up)', 'postgres://me@localhost/agents', 'postgres://me@127.0.0.1/agents'],
    ['another port', 'postgres://me@db/agents', 'postgres://me@db:5433/agents'],
    ['another database', 'postgres://me@db/agents', 'postgres://me@db/agents2'],
    ['a slash after the database (the driver asks for "agents/")', 'postgres://me@db/agents', 'postgres://me@db/agents/'],
    ['another user (a schema of its own may come first on its search path)', 'postgres://me@db/agents', 'postgres://you@db/agents'],
    [
      'another parameter (options can set the search path)',
      'postgres://me@db/agents',
      'postgres://me@db/agents?options=-c%20search_path%3Dother',
    ],
    ['socket folders in another case', 'postgres://me@/agents?host=/run/PG', 'postgres://me@/agents?host=/run/pg'],
  ])('%s: not the same', (_what, a, b) => {
    expect(sameDatabase(a, b, env)).toBe(false);
  });

  it('a URL the driver cannot read is the same only as itself', () => {
    expect(databaseIdentity('postgres://me@db/%E0%A4%A', env)).toBeNull();
    expect(sameDatabase('postgres://me@db/%E0%A4%A', 'postgres://me@db/%E0%A4%A', env)).toBe(true);
    expect(sameDatabase('postgres://me@db/%E0%A4%A', 'postgres://me@db/agents', env)).toBe(false);
  });
});
