/**
 * A database of the shared test cluster (postgres-cluster.ts) written by real
 * LangGraph: PostgresSaver's tables, and one thread stopped at an
 * `interrupt()`; and what a test compares to prove nothing was added to it.
 */
import { HumanMessage } from '@langchain/core/messages';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { MIGRATIONS } from '../../electron/store/postgres/pg-schema.js';
import { approvalGraph } from './langgraph-graphs.js';
import { createDatabase, withClient } from './postgres-cluster.js';

/** The thread the database holds, waiting for a human. */
export const WAITING_THREAD = 'thread-waiting';

/** A new database holding LangGraph's checkpointer tables and WAITING_THREAD; returns its URL (with the password). */
export async function langGraphDatabase(prefix = 'lgpg'): Promise<string> {
  const url = await createDatabase(prefix);
  const saver = PostgresSaver.fromConnString(url);
  try {
    await saver.setup();
    await approvalGraph(saver).invoke(
      { messages: [new HumanMessage('the release is on Friday.')] },
      { configurable: { thread_id: WAITING_THREAD } },
    );
  } finally {
    await saver.end();
  }
  return url;
}

/**
 * A new database holding both schemas, as an earlier build left one: LangGraph's tables and WAITING_THREAD
 * (langGraphDatabase), and Waystation's schema, its migrations applied beside them as that build did on first use
 * (no task saved yet). Returns its URL (with the password).
 */
export async function databaseWithBoth(prefix = 'lgpg'): Promise<string> {
  const url = await langGraphDatabase(prefix);
  await withClient(url, async (c) => {
    for (const m of MIGRATIONS) {
      await c.query(m.sql);
      await c.query(`UPDATE waystation_meta SET value = $1 WHERE key = 'schema_version'`, [String(m.version)]);
    }
  });
  return url;
}

/**
 * Every relation and function of the database's own schemas, and a hash of every row of LangGraph's tables: equal
 * before and after, nothing was created (no table, no schema row) and no row of LangGraph's changed.
 */
export async function databaseContents(url: string): Promise<string> {
  return withClient(url, async (c) => {
    const objects = await c.query<{ name: string }>(
      `SELECT relkind::text || ' ' || relname AS name FROM pg_class
         WHERE relnamespace NOT IN (SELECT oid FROM pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'pg_toast'))
       UNION ALL
       SELECT 'f ' || proname FROM pg_proc
         WHERE pronamespace NOT IN (SELECT oid FROM pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema'))
       ORDER BY 1`,
    );
    const rows: string[] = [];
    for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations']) {
      const r = await c.query<{ n: string; h: string | null }>(
        `SELECT count(*) AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS h FROM ${table} t`,
      );
      rows.push(`${table}:${r.rows[0].n}:${r.rows[0].h}`);
    }
    return [...objects.rows.map((r) => r.name), ...rows].join('\n');
  });
}
