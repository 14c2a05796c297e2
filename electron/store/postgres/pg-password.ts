/**
 * The password file (`~/.pgpass`, or the file PGPASSFILE names), read as
 * libpq reads it. node-postgres reads it too, but prints a deprecation
 * warning to the person each time it does (its support ends in pg 9), so
 * Waystation reads it itself and hands the driver the password (pg-client.ts).
 *
 * The rules are libpq's: a line is `host:port:database:user:password`, `*`
 * matches anything, `\` escapes the next character, lines starting with `#`
 * are comments, and the first matching line wins. On Unix the file is
 * ignored unless it is a plain file that only its owner may read: libpq says
 * so on stderr; here the reason goes into the error that follows for want of
 * a password.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** What a connection is to: the fields a password file line is matched on. */
export interface PassFileTarget {
  host?: string;
  port?: number | string;
  database?: string;
  user?: string;
}

/** A password found, or none, with why the file was not read when it was there but unusable. */
export type PassFileResult = { password: string } | { password: null; note: string | null };

/** libpq's default host, which a Unix socket in the default socket folder also goes by. */
const DEFAULT_HOST = 'localhost';
const DEFAULT_PORT = 5432;
/** Where libpq puts its socket by default: upstream's and Debian's. */
const DEFAULT_SOCKET_DIRS = new Set(['/tmp', '/var/run/postgresql', '/run/postgresql']);

/** The password file's path: PGPASSFILE, else ~/.pgpass (%APPDATA%\postgresql\pgpass.conf on Windows). */
export function passFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PGPASSFILE) return env.PGPASSFILE;
  if (process.platform === 'win32') return path.join(env.APPDATA ?? os.homedir(), 'postgresql', 'pgpass.conf');
  return path.join(env.HOME ?? os.homedir(), '.pgpass');
}

/**
 * The password the password file gives for `target`, or why there is none.
 *
 * A missing file is no note (the person never made one); an unreadable or
 * too open one is, so the error can say what to fix.
 */
export async function passwordFromFile(target: PassFileTarget, env: NodeJS.ProcessEnv = process.env): Promise<PassFileResult> {
  const file = passFilePath(env);
  const shownFile = env.PGPASSFILE ? file : process.platform === 'win32' ? file : '~/.pgpass';
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return { password: null, note: `${shownFile} was not read: it is not a plain file` };
    // libpq ignores a file others may read: it would hand out passwords they could see.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0)
      return { password: null, note: `${shownFile} was not read: group or others may access it; \`chmod 600 ${shownFile}\`` };
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { password: null, note: null };
    return { password: null, note: `${shownFile} could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  const password = matchPassFile(text, target);
  return password ? { password } : { password: null, note: null };
}

/** The password of the first line of a password file's text that matches `target`; null for none (or an empty one). */
export function matchPassFile(text: string, target: PassFileTarget): string | null {
  const want = [hostForMatch(target.host), String(target.port || DEFAULT_PORT), target.database ?? '', target.user ?? ''];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const fields = splitFields(line);
    if (fields.length < 5) continue;
    if (!want.every((value, i) => fields[i].raw === '*' || fields[i].text === value)) continue;
    // The first match wins, as in libpq, even when its password is empty (then there is none).
    return fields[4].text || null;
  }
  return null;
}

/** The host as a password file names it: a socket in the default folder is `localhost`. */
function hostForMatch(host: string | undefined): string {
  if (!host) return DEFAULT_HOST;
  if (host.startsWith('/') && DEFAULT_SOCKET_DIRS.has(host.replace(/\/+$/, ''))) return DEFAULT_HOST;
  return host;
}

/** A line's `:`-separated fields: each as written (`raw`: only a bare `*` is a wildcard, `\*` is a star) and with its escapes undone. */
function splitFields(line: string): { raw: string; text: string }[] {
  const fields: { raw: string; text: string }[] = [];
  let start = 0;
  let text = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '\\' && i + 1 < line.length) {
      text += line[++i];
    } else if (ch === ':') {
      fields.push({ raw: line.slice(start, i), text });
      start = i + 1;
      text = '';
    } else {
      text += ch;
    }
  }
  fields.push({ raw: line.slice(start), text });
  return fields;
}
