/**
 * Inserting a planned fork (fork-writer.ts): in one transaction, after
 * checking that the parent checkpoint is still there, plain INSERTs only, so
 * a key that exists after all fails the transaction and no existing row is
 * ever replaced (LangGraph's own savers upsert; a fork must not).
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { ForkRefused, type ForkRows } from './fork-rows.js';

interface PlannedAt {
  file: string;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent: { checkpoint_id: string };
}

const gone = (plan: PlannedAt) =>
  new ForkRefused(`checkpoint ${plan.parent.checkpoint_id} is no longer in ${plan.file}; nothing was written`);

/** The fork's one `checkpoints` row, into the SQLite file. */
export function insertSqliteFork(file: string, plan: PlannedAt, rows: Extract<ForkRows, { kind: 'sqlite' }>): void {
  const db = new Database(file, { fileMustExist: true, timeout: 5000 });
  try {
    db.transaction(() => {
      const parent = db
        .prepare('SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?')
        .get(plan.thread_id, plan.checkpoint_ns, plan.parent.checkpoint_id);
      if (!parent) throw gone(plan);
      db.prepare(
        'INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(
        plan.thread_id,
        plan.checkpoint_ns,
        plan.checkpoint_id,
        plan.parent.checkpoint_id,
        rows.type,
        Buffer.from(rows.checkpoint),
        Buffer.from(rows.metadata),
      );
    })();
  } finally {
    db.close();
  }
}

/** The fork's `checkpoint_blobs` rows and its `checkpoints` row, on a connection already in a write transaction. */
export async function insertPostgresFork(
  client: pg.ClientBase,
  plan: PlannedAt,
  rows: Extract<ForkRows, { kind: 'postgres' }>,
): Promise<void> {
  const parent = await client.query('SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3', [
    plan.thread_id,
    plan.checkpoint_ns,
    plan.parent.checkpoint_id,
  ]);
  if (parent.rowCount === 0) throw gone(plan);
  for (const b of rows.blobs) {
    const taken = await client.query(
      'SELECT 1 FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4',
      [plan.thread_id, plan.checkpoint_ns, b.channel, b.version],
    );
    if (taken.rowCount !== 0) {
      throw new ForkRefused(
        `channel ${b.channel} of thread ${plan.thread_id} already has a value at version ${b.version} (the thread changed since the fork was planned); nothing was written`,
      );
    }
    await client.query(
      'INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ($1, $2, $3, $4, $5, $6)',
      [plan.thread_id, plan.checkpoint_ns, b.channel, b.version, b.type, Buffer.from(b.blob)],
    );
  }
  await client.query(
    'INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES ($1, $2, $3, $4, $5, $6)',
    [plan.thread_id, plan.checkpoint_ns, plan.checkpoint_id, plan.parent.checkpoint_id, rows.checkpoint, rows.metadata],
  );
}
