import { describe, expect, it } from 'vitest';
import { isPostgresUrl, redactSecret, redactUrl } from '../../../../electron/store/postgres/redact-url.js';

describe('redactUrl', () => {
  it('drops the password and keeps everything else', () => {
    expect(redactUrl('postgres://me:s3cret@db.example:5433/agents?sslmode=require')).toBe(
      'postgres://me@db.example:5433/agents?sslmode=require',
    );
    expect(redactUrl('postgresql://me@db/agents')).toBe('postgresql://me@db/agents');
  });

  it('drops a password given as a query parameter', () => {
    expect(redactUrl('postgres://db/agents?user=me&password=s3cret')).toBe('postgres://db/agents?user=me');
  });

  it('never echoes a URL that does not parse whole', () => {
    const shown = redactUrl('postgres://me:s3 cret@[bad/agents');
    expect(shown).not.toContain('s3 cret');
  });

  it('tells a PostgreSQL URL from a path', () => {
    expect(isPostgresUrl('postgres://db/x')).toBe(true);
    expect(isPostgresUrl('POSTGRESQL://db/x')).toBe(true);
    expect(isPostgresUrl('./postgres')).toBe(false);
    expect(isPostgresUrl('/tmp/postgres://x')).toBe(false);
  });

  it('redactSecret replaces every occurrence of a password in a text', () => {
    expect(redactSecret('login as me with hunter2 failed: hunter2', 'hunter2')).toBe('login as me with *** failed: ***');
  });
});
