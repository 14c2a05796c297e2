import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { matchPassFile, passFilePath, passwordFromFile } from '../../../../electron/store/postgres/pg-password.js';

const target = { host: 'db.example', port: 5433, database: 'agents', user: 'me' };

describe('a password file line, matched as libpq matches it', () => {
  it('the first line whose host, port, database and user match gives the password', () => {
    const text = ['other:5433:agents:me:not-this', 'db.example:5433:agents:me:s3cret', 'db.example:5433:agents:me:nor-this'].join('\n');
    expect(matchPassFile(text, target)).toBe('s3cret');
  });

  it('* matches any value, and a missing port is 5432', () => {
    expect(matchPassFile('*:*:*:me:any', target)).toBe('any');
    expect(matchPassFile('db.example:5432:agents:me:default-port', { ...target, port: undefined })).toBe('default-port');
    expect(matchPassFile('db.example:5432:agents:me:x', target)).toBeNull();
  });

  it('a backslash escapes a colon or a backslash, in the password and in the other fields; an escaped star is a star', () => {
    expect(matchPassFile('db.example:5433:agents:me:p@ss\\:w/rd#1?%\\\\', target)).toBe('p@ss:w/rd#1?%\\');
    expect(matchPassFile('db.example:5433:ag\\:ents:me:colon', { ...target, database: 'ag:ents' })).toBe('colon');
    expect(matchPassFile('db.example:5433:\\*:me:star', target)).toBeNull();
    expect(matchPassFile('db.example:5433:\\*:me:star', { ...target, database: '*' })).toBe('star');
  });

  it('skips comments, blank and short lines, and reads CRLF files', () => {
    const text = '# db.example:5433:agents:me:commented\r\n\r\ndb.example:5433:agents\r\ndb.example:5433:agents:me:crlf\r\n';
    expect(matchPassFile(text, target)).toBe('crlf');
  });

  it('a socket in the default folder matches localhost', () => {
    expect(matchPassFile('localhost:5432:agents:me:local', { host: '/var/run/postgresql', database: 'agents', user: 'me' })).toBe('local');
    expect(matchPassFile('localhost:5432:agents:me:local', { host: '/elsewhere', database: 'agents', user: 'me' })).toBeNull();
  });

  it('an empty password is none', () => {
    expect(matchPassFile('db.example:5433:agents:me:', target)).toBeNull();
  });
});

describe('the password file on disk', () => {
  let home: string;
  beforeAll(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pgpass-'));
  });
  afterAll(async () => {
    await fs.rm(home, { recursive: true, force: true });
  });

  it('is ~/.pgpass, or the file PGPASSFILE names', () => {
    expect(passFilePath({ HOME: home })).toBe(path.join(home, '.pgpass'));
    expect(passFilePath({ HOME: home, PGPASSFILE: '/x/pass' })).toBe('/x/pass');
  });

  it('gives its password when only its owner may read it', async () => {
    await fs.writeFile(path.join(home, '.pgpass'), 'db.example:5433:agents:me:s3cret\n', { mode: 0o600 });
    await fs.chmod(path.join(home, '.pgpass'), 0o600);
    expect(await passwordFromFile(target, { HOME: home })).toEqual({ password: 's3cret' });
  });

  it.skipIf(process.platform === 'win32')('is not read when others may, and says why and how to fix it', async () => {
    await fs.chmod(path.join(home, '.pgpass'), 0o644);
    expect(await passwordFromFile(target, { HOME: home })).toEqual({
      password: null,
      note: '~/.pgpass was not read: group or others may access it; `chmod 600 ~/.pgpass`',
    });
  });

  it('missing: no password, and nothing to say', async () => {
    expect(await passwordFromFile(target, { HOME: path.join(home, 'none') })).toEqual({ password: null, note: null });
  });
});
