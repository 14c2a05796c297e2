/**
 * The tables of a LangGraph PostgreSQL checkpointer (`checkpoints`,
 * `checkpoint_blobs`, `checkpoint_writes`, `checkpoint_migrations`; the same
 * schema from Python's and JavaScript's PostgresSaver), read in read-only
 * transactions.
 *
 * PostgresSaver keeps a checkpoint's JSON in `checkpoints.checkpoint` without
 * the channel values that are not primitives; those are in
 * `checkpoint_blobs`, one row per channel and channel version, and a
 * checkpoint's values are the blobs at the versions its `channel_versions`
 * names (a blob of type `empty` is a channel with no value). Every session is
 * opened with `default_transaction_read_only` and every read runs in
 * `BEGIN READ ONLY`: the server refuses any write, whatever the code asks.
 */
import type pg from 'pg';
import { loadPgDriver } from '../../store/postgres/pg-driver.js';
import { redactUrl } from '../../store/postgres/redact-url.js';
import { LANGGRAPH_TABLES } from '../../store/postgres/pg-schema.js';
import { versionNumber } from './thread-mapping.js';
import type { CheckpointLink, CheckpointRef, CheckpointRow, CheckpointRows, StoredValue, ThreadRow } from './checkpoint-rows.js';

const bytes = (b: Buffer | null): Uint8Array | null => (b === null ? null : new Uint8Array(b.buffer, b.byteOffset, b.byteLength));

/** Run `fn` on `client` between `begin` and COMMIT; a throw rolls back and goes on. */
async function inTransaction<C extends pg.ClientBase, T>(client: C, begin: string, fn: (client: C) => Promise<T>): Promise<T> {
  await client.query(begin);
  try {
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** A LangGraph PostgreSQL checkpointer, read-only. */
export class PostgresRows implements CheckpointRows {
  readonly kind = 'postgres' as const;
  readonly locator: string;
  private readonly pool: pg.Pool;
  /** Kept only for the one write (a fork), which connects on its own. */
  private readonly url: string;
  private checked: Promise<void> | null = null;

  constructor(url: string) {
    this.locator = redactUrl(url);
    this.url = url;
    this.pool = new (loadPgDriver().Pool)({
      connectionString: url,
      max: 2,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: 10_000,
      application_name: 'waystation (read-only)',
      options: '-c default_transaction_read_only=on',
    });
    // An idle connection the server drops must not crash the process; the next read reconnects.
    this.pool.on('error', () => {});
  }

  /** Run `fn` in a read-only transaction. */
  private async read<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await (this.checked ??= this.checkTables());
    return this.transaction(fn);
  }

  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw new Error(`cannot connect to ${this.locator}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    try {
      return await inTransaction(client, 'BEGIN TRANSACTION READ ONLY', fn);
    } finally {
      client.release();
    }
  }

  private async checkTables(): Promise<void> {
    try {
      const found = await this.transaction(async (c) => {
        const r = await c.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY($1)',
          [LANGGRAPH_TABLES],
        );
        return new Set(r.rows.map((row) => row.table_name));
      });
      const missing = LANGGRAPH_TABLES.filter((t) => !found.has(t));
      if (missing.length === LANGGRAPH_TABLES.length) {
        throw new Error(
          `the database at ${this.locator} has none of LangGraph's checkpointer tables (${LANGGRAPH_TABLES.join(', ')}): it is not a LangGraph checkpointer database`,
        );
      }
      if (missing.length > 0) {
        throw new Error(
          `the database at ${this.locator} lacks LangGraph's ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}: it is not a complete LangGraph checkpointer database`,
        );
      }
    } catch (err) {
      this.checked = null;
      throw err;
    }
  }

  async threads(): Promise<ThreadRow[]> {
    return this.read(async (c) => {
      const r = await c.query<ThreadRow>(
        `SELECT c.thread_id, c.checkpoint_ns, count(*)::int AS checkpoints, max(c.checkpoint_id) AS latest_id,
                (SELECT count(*) FROM checkpoint_writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns)::int AS writes
           FROM checkpoints c GROUP BY c.thread_id, c.checkpoint_ns ORDER BY c.thread_id, c.checkpoint_ns`,
      );
      return r.rows;
    });
  }

  async refs(threadId: string, ns: string): Promise<CheckpointRef[]> {
    return this.read(async (c) => {
      const r = await c.query<CheckpointRef>(
        'SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id',
        [threadId, ns],
      );
      return r.rows;
    });
  }

  async links(threadId: string, ns: string): Promise<CheckpointLink[]> {
    return this.read(async (c) => {
      const r = await c.query<{
        checkpoint_id: string;
        parent_checkpoint_id: string | null;
        metadata: unknown;
        type: string | null;
        bytes: number;
        ts: string | null;
      }>(
        `SELECT checkpoint_id, parent_checkpoint_id, metadata, type, checkpoint ->> 'ts' AS ts,
                (octet_length(checkpoint::text) + coalesce((
                   SELECT sum(octet_length(bl.blob)) FROM jsonb_each_text(checkpoint -> 'channel_versions') cv
                   JOIN checkpoint_blobs bl ON bl.thread_id = checkpoints.thread_id AND bl.checkpoint_ns = checkpoints.checkpoint_ns
                    AND bl.channel = cv.key AND bl.version = cv.value), 0))::int AS bytes
           FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id`,
        [threadId, ns],
      );
      return r.rows.map((row) => ({
        checkpoint_id: row.checkpoint_id,
        parent_checkpoint_id: row.parent_checkpoint_id,
        metadata: { type: 'jsonb', json: row.metadata },
        type: row.type,
        bytes: row.bytes,
        ts: row.ts,
      }));
    });
  }

  async checkpoint(
    threadId: string,
    ns: string,
    checkpointId: string,
    opts: { withoutMessages?: boolean } = {},
  ): Promise<CheckpointRow | null> {
    return this.read(async (c) => {
      const r = await c.query<{
        checkpoint_id: string;
        parent_checkpoint_id: string | null;
        checkpoint: unknown;
        metadata: unknown;
        type: string | null;
      }>(
        'SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata, type FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3',
        [threadId, ns, checkpointId],
      );
      const row = r.rows[0];
      if (!row) return null;
      const blobRows = await c.query<{ channel: string; type: string; blob: Buffer | null }>(
        `SELECT bl.channel, bl.type, bl.blob FROM checkpoints cp
           CROSS JOIN LATERAL jsonb_each_text(cp.checkpoint -> 'channel_versions') cv
           JOIN checkpoint_blobs bl ON bl.thread_id = cp.thread_id AND bl.checkpoint_ns = cp.checkpoint_ns AND bl.channel = cv.key AND bl.version = cv.value
          WHERE cp.thread_id = $1 AND cp.checkpoint_ns = $2 AND cp.checkpoint_id = $3 AND ($4::boolean IS NOT TRUE OR bl.channel <> 'messages')`,
        [threadId, ns, checkpointId, opts.withoutMessages === true],
      );
      const writeRows = await c.query<{ task_id: string; idx: number; channel: string; type: string | null; blob: Buffer | null }>(
        'SELECT task_id, idx, channel, type, blob FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 ORDER BY task_id, idx',
        [threadId, ns, checkpointId],
      );
      const blobs: Record<string, StoredValue> = {};
      // `empty`: the channel has a version but no value (PostgresSaver's _load_blobs leaves it out).
      for (const b of blobRows.rows) if (b.type !== 'empty') blobs[b.channel] = { type: b.type, data: bytes(b.blob) };
      return {
        thread_id: threadId,
        checkpoint_ns: ns,
        checkpoint_id: row.checkpoint_id,
        parent_checkpoint_id: row.parent_checkpoint_id,
        checkpoint: { type: 'jsonb', json: row.checkpoint },
        metadata: { type: 'jsonb', json: row.metadata },
        type: row.type,
        bytes: 0,
        blobs,
        writes: writeRows.rows.map((w) => ({
          task_id: w.task_id,
          idx: w.idx,
          channel: w.channel,
          value: { type: w.type, data: bytes(w.blob) },
        })),
      };
    });
  }

  /** The highest channel version among the thread's blobs (all its branches), or undefined when it has none. */
  async highestBlobVersion(threadId: string, ns: string): Promise<string | undefined> {
    return this.read(async (c) => {
      const r = await c.query<{ version: string }>(
        'SELECT DISTINCT version FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2',
        [threadId, ns],
      );
      let max: string | undefined;
      for (const { version } of r.rows) if (max === undefined || versionNumber(version) > versionNumber(max)) max = version;
      return max;
    });
  }

  /**
   * Run `fn` in a write transaction on a connection of its own: the one
   * write (a fork). The reads' pool stays read-only.
   */
  async writeTransaction<T>(fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    await (this.checked ??= this.checkTables());
    const client = new (loadPgDriver().Client)({
      connectionString: this.url,
      connectionTimeoutMillis: 10_000,
      application_name: 'waystation (fork)',
    });
    try {
      await client.connect();
    } catch (err) {
      throw new Error(`cannot connect to ${this.locator}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    try {
      return await inTransaction(client, 'BEGIN', fn);
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * The number of checkpoints and writes and the newest checkpoint id: a new
   * checkpoint or write changes it. PostgresSaver offers no trigger to LISTEN
   * on, and adding one would be a write, so an open inspector polls this.
   */
  async changeMark(): Promise<string> {
    return this.read(async (c) => {
      const r = await c.query<{ m: string }>(
        "SELECT concat_ws(':', (SELECT count(*) FROM checkpoints), (SELECT max(checkpoint_id) FROM checkpoints), (SELECT count(*) FROM checkpoint_writes)) AS m",
      );
      return r.rows[0].m;
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
