/**
 * Which store a PostgreSQL URL names, so that two spellings of one store are
 * known for one (`waystation copy` refuses to copy a store onto itself).
 *
 * A URL is read as the driver reads it (node-postgres, through
 * pg-connection-string, then its defaults), and only what surely names the
 * same store is made equal: `postgres://` and `postgresql://`; a host name in
 * any letter case; what is left out and what the driver then uses (the port:
 * PGPORT, else 5432; the host: PGHOST, else localhost; the user: PGUSER, else
 * the login name; the database: PGDATABASE, else the user's name), so a bare
 * trailing slash (no database named) too; percent-encoding the driver
 * decodes; query parameters in any order; the password, wherever it is given.
 *
 * Nothing is looked up: `localhost` and `127.0.0.1` may reach different
 * servers (IPv6, another listener), so they stay different. So do two users
 * (each may have a schema of its own first on the search path), a slash
 * after the database's name (the driver asks for a database named with it),
 * and any other parameter that differs (`options` can set another search
 * path). Missing a sameness only lets a copy onto itself report its tasks up
 * to date; inventing one would refuse a real copy.
 */

/** A host that is a folder of unix sockets, not a name: file names keep their case. */
const SOCKET_FOLDER = /^\//;

/**
 * The store `url` names, as one string: equal for two URLs that surely name
 * the same store (see above), null for a URL the driver could not read.
 * `env` gives the driver's defaults (PGHOST, PGPORT, PGUSER, PGDATABASE).
 */
export function databaseIdentity(url: string, env: NodeJS.ProcessEnv = process.env): string | null {
  try {
    return identityOf(url, env);
  } catch {
    return null;
  }
}

/** Whether two PostgreSQL URLs surely name one store (databaseIdentity); two URLs the driver cannot read only when written alike. */
export function sameDatabase(a: string, b: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const [ia, ib] = [databaseIdentity(a, env), databaseIdentity(b, env)];
  return ia === null || ib === null ? a === b : ia === ib;
}

/** pg-connection-string's parse (2.x) of the parts that choose a store, then node-postgres's defaults (connection-parameters.js). */
function identityOf(raw: string, env: NodeJS.ProcessEnv): string {
  let str = raw.replace(/^postgres(?:ql)?:/i, 'postgres:');
  // As the parser does: a space or a stray % is encoded before the URL is read.
  if (/ |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(str)) str = encodeURI(str).replace(/%25(\d\d)/g, '%$1');
  let u: URL;
  let noHost = false;
  try {
    u = new URL(str);
  } catch {
    // `postgres://user@/db`: no host in the URL, which the parser reads with a stand-in one.
    u = new URL(str.replace('@/', '@___DUMMY___/'));
    noHost = true;
  }
  // The last of a repeated parameter is the one the parser keeps.
  const params = new Map<string, string>();
  for (const [key, value] of u.searchParams) params.set(key, value);
  const hostname = (noHost ? '' : u.hostname).replace(/^\[(.+)\]$/, '$1');
  let pathname = u.pathname;
  if (params.get('host') && hostname && /^%2f/i.test(hostname)) pathname = hostname + pathname;
  const hostGiven = params.get('host') || decodeURIComponent(hostname);
  const portGiven = params.get('port') || u.port;
  const userGiven = params.get('user') || decodeURIComponent(u.username);
  const databaseGiven = pathname.slice(1) ? decodeURI(pathname.slice(1)) : '';

  const user = userGiven || env.PGUSER || (process.platform === 'win32' ? env.USERNAME : env.USER) || '';
  const host = hostGiven || env.PGHOST || 'localhost';
  const identity = {
    host: SOCKET_FOLDER.test(host) ? host : host.toLowerCase(),
    port: Number.parseInt(portGiven || env.PGPORT || '5432', 10),
    user,
    database: databaseGiven || env.PGDATABASE || user,
    // Every other parameter, in one order; the password does not choose the store.
    params: [...params]
      .filter(([key]) => !['host', 'port', 'user', 'password'].includes(key))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  };
  return JSON.stringify(identity);
}
