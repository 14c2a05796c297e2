/**
 * The tables of a LangGraph SQLite checkpointer file (`checkpoints`,
 * `writes`; the same schema from Python's and JavaScript's SqliteSaver),
 * read without changing a byte of the file or its companions: how the file
 * is opened (in place, immutable, or through a private copy when a writer
 * died mid-transaction), and what a lock held by another process does, is
 * sqlite-open.ts.
 *
 * The file is opened again when it (or its `-wal`) changes, so a reader sees
 * new checkpoints (see `changeMark`). Every error names the file.
 */
import Database from 'better-sqlite3';
import type { CheckpointLink, CheckpointRef, CheckpointRow, CheckpointRows, StoredValue, ThreadRow, WriteRow } from './checkpoint-rows.js';
import { ServiceError } from '../../../shared/api/error-codes.js';
import { fileError, markOf, openQuietly, sameMark, SqliteLockedError, tablesWithoutLock, type FileMark } from './sqlite-open.js';

/** The tables a LangGraph SQLite checkpointer creates. */
export const SQLITE_TABLES = ['checkpoints', 'writes'] as const;

/** Raised when a file is not a LangGraph SQLite checkpointer: says what it is instead. */
export class NotLangGraphError extends ServiceError {
  readonly code = 'not-found' as const;
}

/** While the file is unchanged, a lock found this recently is reported again without waiting for it again (ms). */
const LOCK_MEMORY_MS = 5000;

const notLangGraph = (file: string, missing: readonly string[]) =>
  new NotLangGraphError(`${file} is an SQLite database without LangGraph's ${missing.join(' and ')} table${missing.length > 1 ? 's' : ''}`);

/** Whether an open SQLite database has LangGraph's tables; the missing ones otherwise. */
export function missingTables(db: Database.Database): string[] {
  const names = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
  return SQLITE_TABLES.filter((t) => !names.has(t));
}

const stored = (type: string | null, data: Buffer | string | null): StoredValue => ({
  type,
  data: data === null ? null : typeof data === 'string' ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
});

interface Statements {
  threads: Database.Statement;
  head: Database.Statement;
  refs: Database.Statement;
  links: Database.Statement;
  checkpoint: Database.Statement;
  writes: Database.Statement;
  mark: Database.Statement;
}

/** A LangGraph SQLite checkpointer file, read-only. */
export class SqliteRows implements CheckpointRows {
  readonly kind = 'sqlite' as const;
  private db: Database.Database | null = null;
  private mark: FileMark | null = null;
  private statements: Statements | null = null;
  /** The last time the file was found locked, and how it looked then. */
  private locked: { mark: FileMark; at: number; error: SqliteLockedError } | null = null;
  /** The locked file's mark whose own bytes were last found to hold LangGraph's tables. */
  private lockedChecked: string | null = null;

  constructor(readonly locator: string) {}

  /** Run `read` on the statements of the database as of now; what SQLite throws comes out naming the file. */
  private read<T>(read: (st: Statements) => T): T {
    try {
      return read(this.current());
    } catch (err) {
      throw fileError(this.locator, err);
    }
  }

  /** The database as of now: the open one while the file is unchanged, opened again once it changed. */
  private current(): Statements {
    const mark = markOf(this.locator);
    if (this.db && this.statements && this.mark && sameMark(mark, this.mark)) return this.statements;
    this.db?.close();
    this.db = null;
    this.statements = null;
    const locked = this.locked;
    if (locked && sameMark(mark, locked.mark) && Date.now() - locked.at < LOCK_MEMORY_MS) throw locked.error;
    let db: Database.Database;
    try {
      db = openQuietly(this.locator, mark);
      this.locked = null;
    } catch (err) {
      if (err instanceof SqliteLockedError) this.locked = { mark, at: Date.now(), error: err };
      throw err;
    }
    let missing: string[];
    try {
      missing = missingTables(db);
    } catch (err) {
      db.close();
      throw err;
    }
    if (missing.length > 0) {
      db.close();
      throw notLangGraph(this.locator, missing);
    }
    this.db = db;
    this.mark = mark;
    this.statements = {
      threads: db.prepare(
        `SELECT c.thread_id, c.checkpoint_ns, COUNT(*) AS checkpoints, MAX(c.checkpoint_id) AS latest_id,
                (SELECT COUNT(*) FROM writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns) AS writes
           FROM checkpoints c GROUP BY c.thread_id, c.checkpoint_ns ORDER BY c.thread_id, c.checkpoint_ns`,
      ),
      refs: db.prepare(
        'SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id',
      ),
      links: db.prepare(
        `SELECT checkpoint_id, parent_checkpoint_id, type, metadata, length(checkpoint) + length(metadata) AS bytes,
                CASE WHEN type = 'json' AND json_valid(CAST(checkpoint AS TEXT)) THEN json_extract(CAST(checkpoint AS TEXT), '$.ts') END AS ts
           FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id`,
      ),
      // A JSON checkpoint without its conversation, cut out by SQLite's JSON functions before it reaches JavaScript.
      head: db.prepare(
        "SELECT checkpoint_id, parent_checkpoint_id, type, json_remove(CAST(checkpoint AS TEXT), '$.channel_values.messages') AS checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND type = 'json' AND json_valid(CAST(checkpoint AS TEXT))",
      ),
      checkpoint: db.prepare(
        'SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?',
      ),
      writes: db.prepare(
        'SELECT task_id, idx, channel, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_id, idx',
      ),
      mark: db.prepare(
        'SELECT (SELECT COUNT(*) FROM checkpoints) AS c, (SELECT MAX(checkpoint_id) FROM checkpoints) AS m, (SELECT COUNT(*) FROM writes) AS w',
      ),
    };
    return this.statements;
  }

  async threads(): Promise<ThreadRow[]> {
    return this.read((st) => st.threads.all() as ThreadRow[]).map((r) => ({
      ...r,
      thread_id: String(r.thread_id),
      checkpoints: Number(r.checkpoints),
    }));
  }

  async refs(threadId: string, ns: string): Promise<CheckpointRef[]> {
    return this.read((st) => st.refs.all(threadId, ns) as CheckpointRef[]);
  }

  async links(threadId: string, ns: string): Promise<CheckpointLink[]> {
    const rows = this.read((st) => st.links.all(threadId, ns)) as {
      checkpoint_id: string;
      parent_checkpoint_id: string | null;
      type: string | null;
      metadata: Buffer | string | null;
      bytes: number | null;
      ts: unknown;
    }[];
    // Both SqliteSavers keep metadata as JSON text, whatever serde the checkpoint itself used.
    return rows.map((r) => ({
      checkpoint_id: r.checkpoint_id,
      parent_checkpoint_id: r.parent_checkpoint_id,
      metadata: stored('json', r.metadata),
      type: r.type,
      bytes: Number(r.bytes ?? 0),
      ts: typeof r.ts === 'string' ? r.ts : null,
    }));
  }

  async checkpoint(
    threadId: string,
    ns: string,
    checkpointId: string,
    opts: { withoutMessages?: boolean } = {},
  ): Promise<CheckpointRow | null> {
    type Row = {
      checkpoint_id: string;
      parent_checkpoint_id: string | null;
      type: string | null;
      checkpoint: Buffer | string | null;
      metadata: Buffer | string | null;
    };
    type Write = { task_id: string; idx: number; channel: string; type: string | null; value: Buffer | string | null };
    const found = this.read((st) => {
      // Any other serde (msgpack, encrypted) or JSON SQLite cannot parse is read whole.
      const row = ((opts.withoutMessages ? st.head.get(threadId, ns, checkpointId) : undefined) ??
        st.checkpoint.get(threadId, ns, checkpointId)) as Row | undefined;
      return row ? { row, writes: st.writes.all(threadId, ns, checkpointId) as Write[] } : null;
    });
    if (!found) return null;
    const { row } = found;
    const writes = found.writes.map((w): WriteRow => ({
      task_id: w.task_id,
      idx: Number(w.idx),
      channel: w.channel,
      value: stored(w.type, w.value),
    }));
    return {
      thread_id: threadId,
      checkpoint_ns: ns,
      checkpoint_id: row.checkpoint_id,
      parent_checkpoint_id: row.parent_checkpoint_id,
      checkpoint: stored(row.type, row.checkpoint),
      metadata: stored('json', row.metadata),
      type: row.type,
      bytes: (row.checkpoint?.length ?? 0) + (row.metadata?.length ?? 0),
      writes,
    };
  }

  /**
   * A mark that changes with what the file holds. A file another process
   * holds locked still gets one (from its stat), once its own bytes show
   * LangGraph's tables: so it is known as a LangGraph file, and the reads
   * that follow say it is locked.
   */
  async changeMark(): Promise<string> {
    let counts: { c: number; m: string | null; w: number } | null;
    try {
      counts = this.read((st) => (this.mark?.wal === null ? null : (st.mark.get() as { c: number; m: string | null; w: number })));
    } catch (err) {
      if (!(err instanceof SqliteLockedError)) throw err;
      const mark = markOf(this.locator);
      const locked = `locked:${mark.main}:${mark.wal ?? ''}`;
      // The whole file is read for its tables: once per state of the file, not once per poll.
      if (this.lockedChecked !== locked) {
        const tables = tablesWithoutLock(this.locator);
        const missing = tables ? SQLITE_TABLES.filter((t) => !tables.has(t)) : [];
        if (missing.length > 0) throw notLangGraph(this.locator, missing);
        this.lockedChecked = locked;
      }
      return locked;
    }
    // No -wal (no writer in WAL mode, or a rollback journal): what it holds changes only with the file, and current()
    // opens it again then, so the file's own mark says it; counting the rows would cost a scan of the tables on every read.
    if (counts === null) return `file:${this.mark!.main}`;
    return `${counts.c}:${counts.m ?? ''}:${counts.w}`;
  }

  async close(): Promise<void> {
    this.db?.close();
    this.db = null;
    this.statements = null;
  }
}
