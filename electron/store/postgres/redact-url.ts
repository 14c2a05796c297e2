/**
 * A PostgreSQL URL as it may be shown: the password never leaves the
 * process in a message, a log line, an event, a checkpoint or the recent
 * folders list. Everything that names a database to a person goes through
 * `redactUrl`.
 */

const SCHEMES = /^postgres(?:ql)?:\/\//i;

/** Whether a location is a PostgreSQL URL (`postgres://` or `postgresql://`). */
export function isPostgresUrl(location: string): boolean {
  return SCHEMES.test(location);
}

/**
 * The URL without its password (and without a `password` query parameter):
 * `postgres://me:secret@db/agents` becomes `postgres://me@db/agents`.
 *
 * Text that does not parse as a URL is cut to its scheme and host part, so
 * even a malformed URL with a secret in it is never echoed whole.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    for (const key of [...u.searchParams.keys()]) if (key.toLowerCase() === 'password') u.searchParams.delete(key);
    return u.toString();
  } catch {
    const at = url.lastIndexOf('@');
    const scheme = SCHEMES.exec(url)?.[0] ?? '';
    return at >= 0 ? `${scheme}…@${url.slice(at + 1).replace(/[?#].*$/, '')}` : url.replace(/:[^:@/]*@/, '@');
  }
}

/** Every occurrence of a password in a text replaced, for error messages that quote what the driver said. */
export function redactSecret(text: string, password: string | undefined): string {
  return password ? text.split(password).join('***') : text;
}
