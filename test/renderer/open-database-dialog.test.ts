/**
 * The Open database… dialog's handling of what is typed: a password inside
 * the URL is taken out of it (to a field where it is not shown), a URL that
 * cannot name a database is refused in words, and the password is put back
 * only into what is handed to the host.
 */
import { describe, expect, it } from 'vitest';
import { databaseUrlProblem, splitPassword, withPassword } from '../../renderer/src/components/open-database-dialog.js';

describe('the database URL typed into Open database…', () => {
  it('takes a password out of the URL, decoded, and leaves a URL without one alone', () => {
    expect(splitPassword('postgres://me:s%40cret@db:5432/agents')).toEqual({ url: 'postgres://me@db:5432/agents', password: 's@cret' });
    expect(splitPassword('postgresql://me@db/agents')).toBeNull();
    expect(splitPassword('/home/me/checkpoints')).toBeNull();
  });

  it('refuses what cannot name a database, saying what a URL looks like', () => {
    expect(databaseUrlProblem('')).toMatch(/Type the database URL/);
    expect(databaseUrlProblem('db.example.com/agents')).toBe('A database URL starts with postgres:// or postgresql://.');
    expect(databaseUrlProblem('postgres:///agents')).toMatch(/names no server/);
    expect(databaseUrlProblem('postgres:///agents?host=/var/run/postgresql')).toBeNull();
    expect(databaseUrlProblem('postgresql://me@db/agents')).toBeNull();
  });

  it('puts the password back, encoded, only into what is handed to the host', () => {
    expect(withPassword('postgres://me@db/agents', 'a b@c')).toBe('postgres://me:a%20b%40c@db/agents');
    expect(withPassword(' postgres://me@db/agents ', '')).toBe('postgres://me@db/agents');
  });
});
