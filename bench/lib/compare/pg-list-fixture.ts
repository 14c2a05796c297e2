/**
 * The database of the inspector's listing on PostgreSQL: `tasks` tasks, as
 * the directory fixture of the inspector-at-scale benchmark lays them out
 * (scale-fixture.ts: two kinds of task, LIST_VERSIONS versions each).
 *
 * Two templates are written through the store as the runtime writes a task
 * (under its lease, settled and let go at the end, so each leaves the lease
 * row a finished run leaves), then stamped into every task id in SQL, as the
 * directory fixture stamps its files: every row of every table a task has
 * (its row with its summary, versions, events, lease) is a copy of one the
 * store wrote, with the id replaced.
 */
import pg from 'pg';
import { openPostgresStore } from '../../../electron/store/postgres/postgres-store.js';
import { scaleAfterStep, scaleInitialCheckpoint, scaleTaskId, scaleTaskKind } from '../scale-fixture.js';

/** Versions of each listed task, as the inspector-at-scale fixture writes them. */
export const LIST_VERSIONS = 4;

/** The columns each stamped table copies, the text ones with the template's id replaced by the task's. */
const STAMPED: readonly { table: string; columns: readonly string[]; text: readonly string[] }[] = [
  { table: 'waystation_tasks', columns: ['last_version', 'head_version', 'last_event_id'], text: ['head', 'summary'] },
  { table: 'waystation_versions', columns: ['version', 'kind', 'bytes', 'source', 'updated_at', 'writer'], text: ['body'] },
  { table: 'waystation_events', columns: ['id'], text: ['body'] },
  { table: 'waystation_leases', columns: ['generation', 'stop_request'], text: ['entry'] },
];

/** Fill the database at `url` (empty) with `tasks` tasks; checks a sample reads back as written. */
export async function stampPgTasks(url: string, tasks: number): Promise<void> {
  const store = openPostgresStore(url);
  try {
    await store.prepareForWrites();
    for (const kind of [0, 1] as const) {
      const id = `template-kind-${kind}`;
      let cp = scaleInitialCheckpoint(id, kind, LIST_VERSIONS);
      const { version: _v, ...first } = cp;
      await store.create(first);
      const lease = await store.acquireLease(id, { owner: 'bench', heartbeatMs: 0 });
      for (let k = 1; k < LIST_VERSIONS; k++) {
        cp = scaleAfterStep(cp, k);
        const { version: _n, ...rest } = cp;
        await store.save(id, { expectedVersion: k, checkpoint: rest, lease });
      }
      await store.settle(id);
      await lease.release();
    }
  } finally {
    await store.close();
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('BEGIN');
    const ids = `SELECT 'task-' || lpad(i::text, 6, '0') AS id, CASE WHEN i % 3 = 0 THEN 'template-kind-0' ELSE 'template-kind-1' END AS tmpl FROM generate_series(0, $1 - 1) AS i`;
    for (const { table, columns, text } of STAMPED) {
      const all = ['task_id', ...columns, ...text].join(', ');
      const values = ['n.id', ...columns.map((k) => `t.${k}`), ...text.map((k) => `replace(t.${k}, n.tmpl, n.id)`)].join(', ');
      await c.query(`INSERT INTO ${table} (${all}) SELECT ${values} FROM (${ids}) n JOIN ${table} t ON t.task_id = n.tmpl`, [tasks]);
    }
    for (const { table } of STAMPED) await c.query(`DELETE FROM ${table} WHERE task_id LIKE 'template-kind-%'`);
    await c.query('COMMIT');
    await c.query('ANALYZE');
  } finally {
    await c.end();
  }
  // The stamped copies must read as the store wrote them: check a sample of each kind.
  const check = openPostgresStore(url);
  try {
    const listed = new Map((await check.listTasks()).map((t) => [t.task_id, t]));
    if (listed.size !== tasks) throw new Error(`the stamped database lists ${listed.size} tasks, not ${tasks}`);
    // The first of each kind and the last, of those there are (a fixture of one task has one).
    for (const i of new Set([0, 1, tasks - 1].filter((n) => n < tasks))) {
      const entry = await check.getTask(scaleTaskId(i));
      const expected = scaleInitialCheckpoint(scaleTaskId(i), scaleTaskKind(i), LIST_VERSIONS);
      const row = listed.get(scaleTaskId(i));
      if (
        !entry?.checkpoint ||
        entry.checkpoint.task_id !== scaleTaskId(i) ||
        entry.checkpoint.plan.length !== expected.plan.length ||
        row?.checkpoint?.version !== entry.checkpoint.version ||
        row.problems.length > 0 ||
        !row.lease?.released
      )
        throw new Error(`stamped task ${scaleTaskId(i)} does not read back as written`);
      await check.readVersion(scaleTaskId(i), 2);
    }
  } finally {
    await check.close();
  }
}
