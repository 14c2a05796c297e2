/**
 * node-postgres's Client as Waystation makes every connection (the store's
 * pool, its change feed, the location detector, LangGraph's reader): three
 * things the driver does on its own that a person should never meet.
 *
 * - A URL it cannot parse fails with "Invalid URL" and nothing else: here it
 *   is a PostgresUrlError, which says to percent-encode the password.
 * - With no password in the URL or PGPASSWORD it reads ~/.pgpass itself and
 *   prints a deprecation warning to the person whenever that gives one; here
 *   the file is read by pg-password.ts, and a server that wants a password
 *   none of them gives is answered with PasswordMissingError at once (the
 *   driver would send none and report an error of its own).
 * - A login that fails on the client's side leaves its socket open until the
 *   server gives up on it (authentication_timeout, 60 s by default), keeping
 *   the process alive: here a failed connect closes its socket.
 */
import type pg from 'pg';
import { PasswordMissingError, PostgresUrlError } from './pg-errors.js';
import { passwordFromFile, type PassFileTarget } from './pg-password.js';
import { redactUrl } from './redact-url.js';

type ConnectCallback = (err: Error | null, client?: pg.Client) => void;

/** The parts of the driver's client this module reaches past its typings for. */
interface ClientInternals {
  password: unknown;
  connectionParameters: PassFileTarget;
  connection?: { stream?: { destroy(): void } };
}

/** The driver with its Client (and its Pool's) replaced by Waystation's (see above). */
export function withWaystationClient(driver: typeof pg): typeof pg {
  const Client = waystationClientClass(driver);
  class Pool extends driver.Pool {
    constructor(config?: pg.PoolConfig) {
      super({ Client, ...config });
    }
  }
  // The rest of the driver (types, errors, escaping) as it is; `native` stays a getter, never run.
  return Object.create(driver, { Client: { value: Client }, Pool: { value: Pool } }) as typeof pg;
}

function waystationClientClass(driver: typeof pg): typeof pg.Client {
  return class WaystationClient extends driver.Client {
    constructor(config?: string | pg.ClientConfig) {
      try {
        super(config);
      } catch (err) {
        throw unparsedUrl(err, typeof config === 'string' ? config : config?.connectionString) ?? err;
      }
      const self = this as unknown as ClientInternals;
      // Null: neither the URL nor PGPASSWORD gave one (the driver would read the password file itself).
      if (self.password === null || self.password === undefined || self.password === '') self.password = lookUpPassword;
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const closeOnFailure = () => (this as unknown as ClientInternals).connection?.stream?.destroy();
      if (!callback) {
        return super.connect().catch((err: unknown) => {
          closeOnFailure();
          throw err;
        });
      }
      super.connect(((err: Error | null, client?: pg.Client) => {
        if (err) closeOnFailure();
        callback(err, client);
      }) as (err: Error) => void);
    }
  };
}

/**
 * The password the driver asks for when the server wants one and neither
 * the URL nor PGPASSWORD gave it: the password file's, else
 * PasswordMissingError (said with the database's name by mapConnectError).
 */
async function lookUpPassword(target: PassFileTarget): Promise<string> {
  const found = await passwordFromFile(target);
  if (found.password === null) throw new PasswordMissingError(found.note);
  return found.password;
}

/** The error of a connection string that does not parse (a URL, or its percent-encoding), as one a person can act on. */
function unparsedUrl(err: unknown, url: string | undefined): PostgresUrlError | null {
  if (url === undefined) return null;
  const invalid = (err as { code?: unknown } | null)?.code === 'ERR_INVALID_URL' || err instanceof URIError;
  return invalid ? new PostgresUrlError(redactUrl(url)) : null;
}
