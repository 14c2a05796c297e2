/**
 * The connection pool of one PostgreSQL store: statement timeouts, a bounded
 * connect time, idle connections that let the process exit, and reads that
 * reconnect once when the connection went away under them. Writes are never
 * retried blindly: the writer asks the database what became of them
 * (pg-writes.ts).
 */
import type pg from 'pg';
import { isConnectionLost, mapConnectError } from './pg-errors.js';
import { redactUrl } from './redact-url.js';
import { loadPgDriver } from './pg-driver.js';
import { CHANGES_CHANNEL } from './pg-schema.js';
import { ChangeAnnouncer } from './change-announcer.js';

export interface ConnectionOptions {
  /** Per statement, in ms (the server cancels a longer one). Default 30 s. */
  statementTimeoutMs?: number;
  /** How long a connection attempt may take, in ms. Default 10 s. */
  connectTimeoutMs?: number;
  /** Connections at most. Default 8. */
  maxConnections?: number;
  /** The shortest time between the starts of two announcements of committed changes, in ms. Default ANNOUNCE_EVERY_MS (change-announcer.ts). */
  announceEveryMs?: number;
}

/** A pool over one database URL, and the URL as it may be shown. */
export class Connection {
  readonly pool: pg.Pool;
  /** The URL without its password. */
  readonly shown: string;
  private readonly password: string | undefined;
  /** Announcements of committed changes, coalesced (change-announcer.ts). */
  private readonly announcer: ChangeAnnouncer;

  constructor(
    readonly url: string,
    opts: ConnectionOptions = {},
  ) {
    this.shown = redactUrl(url);
    this.password = passwordOf(url) ?? process.env.PGPASSWORD;
    this.pool = new (loadPgDriver().Pool)({
      connectionString: url,
      statement_timeout: opts.statementTimeoutMs ?? 30_000,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      max: opts.maxConnections ?? 8,
      allowExitOnIdle: true,
      application_name: 'waystation',
    });
    // An idle connection the server dropped is replaced on the next checkout; it must not crash the process.
    this.pool.on('error', () => undefined);
    this.announcer = new ChangeAnnouncer(
      (taskIds) => this.withClient((c) => notifyChanges(c, taskIds)).catch(() => undefined),
      opts.announceEveryMs,
    );
  }

  /** A driver error as a Waystation error naming the database without its password. */
  mapError(err: unknown): Error {
    return mapConnectError(err, this.shown, this.password);
  }

  /** A client of its own, not from the pool (LISTEN needs one that stays). */
  newClient(): pg.Client {
    return new (loadPgDriver().Client)({
      connectionString: this.url,
      connectionTimeoutMillis: 10_000,
      application_name: 'waystation-listen',
    });
  }

  /** Run a read; when the connection went away under it, once more on a fresh one. */
  async read<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.withClient(fn);
      } catch (err) {
        if (attempt === 0 && isConnectionLost(err)) continue;
        throw this.mapError(err);
      }
    }
  }

  /** Run `fn` on a pooled client; a client whose connection broke is discarded, not returned to the pool. */
  async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.mapError(err);
    }
    let broken: Error | undefined;
    // A connection the server ends while the client is checked out is reported to the statement running on it,
    // and once more as an 'error' event, which must not go unheard.
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (err) {
      if (isConnectionLost(err)) broken = err as Error;
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /**
   * Run `fn` in a transaction; it is rolled back when `fn` throws. Once it
   * has committed, the tasks in `notify` are announced on the change channel
   * (announce).
   */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, notify: readonly string[] = []): Promise<T> {
    return this.withClient(async (client) => {
      await client.query('BEGIN');
      let out: T;
      try {
        out = await fn(client);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      return out;
    }).then((out) => (this.announce(notify), out));
  }

  /**
   * Run `fn`, one statement (its own transaction), on a pooled client; once
   * it has committed, the tasks in `notify` are announced as after a
   * transaction.
   */
  async statement<T>(fn: (client: pg.PoolClient) => Promise<T>, notify: readonly string[] = []): Promise<T> {
    return this.withClient(fn).then((out) => (this.announce(notify), out));
  }

  /**
   * Announce the changes of `taskIds` (notifyChanges) on a pooled client of
   * its own, without the caller waiting: the change is committed, the
   * announcement is best effort, and a writer's next step need not wait for
   * its round trip. Announcements close together go out as one
   * (change-announcer.ts); `close` sends what is waiting.
   */
  private announce(taskIds: readonly string[]): void {
    if (taskIds.length > 0) this.announcer.add(taskIds);
  }

  async close(): Promise<void> {
    await this.announcer.flush();
    await this.pool.end().catch(() => undefined);
  }
}

/**
 * Announce committed changes of `taskIds` on CHANGES_CHANNEL, in a
 * transaction of its own after the one that made them.
 *
 * A transaction that sends NOTIFY takes one lock for the whole server at
 * commit and holds it until its commit record is flushed: sent from the
 * saves' own transactions, it made every save wait for the flushes of all
 * the others, one after the other, where PostgreSQL would flush them
 * together. This transaction holds no data, only the notification, so its
 * commit need not wait for the disk (`synchronous_commit` off for it alone;
 * the saves keep the server's setting): the lock is held for moments.
 *
 * Best effort: the change is committed whatever becomes of this. A
 * notification that never goes out (the connection dropped, or the writer
 * died, between the two) is made up for by the subscriber's catch-up
 * (pg-events.ts), and readers take event ids from the table, never from the
 * notification, so nothing is skipped or delivered twice.
 */
export async function notifyChanges(client: pg.ClientBase, taskIds: readonly string[]): Promise<void> {
  try {
    // One statement, so one implicit transaction: the local setting is its own.
    await client.query(`SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, t) FROM unnest($2::text[]) AS t`, [
      CHANGES_CHANNEL,
      taskIds,
    ]);
  } catch {
    // The change is committed; the subscribers' catch-up finds it (see above).
  }
}

function passwordOf(url: string): string | undefined {
  try {
    const p = decodeURIComponent(new URL(url).password);
    return p || undefined;
  } catch {
    return undefined;
  }
}
