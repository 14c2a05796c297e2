/**
 * The tables of a LangGraph SQLite checkpointer file (`checkpoints`,
 * `writes`; the same schema from Python's and JavaScript's SqliteSaver),
 * read without changing a byte of the file or its companions.
 *
 * SQLite in WAL mode creates `-wal` and `-shm` files when a connection opens
 * the database, even read-only. So when no `-wal` is there (no writer has the
 * file open), the file is read into memory and opened from there, its header
 * marked as a rollback-journal database for the in-memory copy only: nothing
 * on disk is created or touched. When a `-wal` is there, another process is
 * writing (or crashed while writing), and the file is opened read-only in
 * place, which reads the writer's latest commits; SQLite then takes its read
 * locks in the writer's `-shm`, as every reader must.
 *
 * The copy in memory is taken again when the file (or its `-wal`) changes, so
 * a reader sees new checkpoints (see `changeMark`).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { CheckpointLink, CheckpointRef, CheckpointRow, CheckpointRows, StoredValue, ThreadRow, WriteRow } from './checkpoint-rows.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** The tables a LangGraph SQLite checkpointer creates. */
export const SQLITE_TABLES = ['checkpoints', 'writes'] as const;

/** Raised when a file is not a LangGraph SQLite checkpointer: says what it is instead. */
export class NotLangGraphError extends ServiceError {
  readonly code = 'not-found' as const;
}

interface FileMark {
  main: string;
  wal: string | null;
}

const markOf = (file: string): FileMark => {
  const main = fs.statSync(file);
  const wal = fs.statSync(`${file}-wal`, { throwIfNoEntry: false });
  return { main: `${main.size}:${main.mtimeMs}:${main.ino}`, wal: wal ? `${wal.size}:${wal.mtimeMs}` : null };
};

const sameMark = (a: FileMark, b: FileMark) => a.main === b.main && a.wal === b.wal;

// SQLite reads `file:` URIs (and so `immutable=1`) only when told at start-up; this must be set before the first open.
process.env.SQLITE_USE_URI ??= '1';

const immutableUri = (file: string) => `file:${file.split(path.sep).map(encodeURIComponent).join('/')}?mode=ro&immutable=1`;

/**
 * Open the file as SQLite without writing to it or next to it (see the
 * module comment). With no writer, `immutable=1` opens it in place with no
 * locks and no `-wal`/`-shm`; where the SQLite build takes no URIs, the file
 * is copied into memory instead.
 */
function openQuietly(file: string, mark: FileMark): Database.Database {
  if (mark.wal !== null) return new Database(file, { readonly: true, fileMustExist: true });
  try {
    const db = new Database(immutableUri(file), { readonly: true, fileMustExist: true });
    db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
    return db;
  } catch {
    // No URI support in this process (better-sqlite3 was opened before SQLITE_USE_URI was set): the copy below.
  }
  const bytes = fs.readFileSync(file);
  // Bytes 18 and 19 say "WAL" (2); an in-memory database cannot be one, and needs no log of its own.
  if (bytes.length >= 20 && bytes[18] === 2) bytes[18] = bytes[19] = 1;
  return new Database(bytes, { readonly: true });
}

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

  constructor(readonly locator: string) {}

  /** The database as of now: the open one while the file is unchanged, a fresh copy once it changed. */
  private current(): Statements {
    const mark = markOf(this.locator);
    if (this.db && this.statements && this.mark && sameMark(mark, this.mark)) return this.statements;
    this.db?.close();
    this.db = null;
    const db = openQuietly(this.locator, mark);
    const missing = missingTables(db);
    if (missing.length > 0) {
      db.close();
      throw new NotLangGraphError(
        `${this.locator} is an SQLite database without LangGraph's ${missing.join(' and ')} table${missing.length > 1 ? 's' : ''}`,
      );
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
    return (this.current().threads.all() as ThreadRow[]).map((r) => ({
      ...r,
      thread_id: String(r.thread_id),
      checkpoints: Number(r.checkpoints),
    }));
  }

  async refs(threadId: string, ns: string): Promise<CheckpointRef[]> {
    return this.current().refs.all(threadId, ns) as CheckpointRef[];
  }

  async links(threadId: string, ns: string): Promise<CheckpointLink[]> {
    const rows = this.current().links.all(threadId, ns) as {
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
    const st = this.current();
    // Any other serde (msgpack, encrypted) or JSON SQLite cannot parse is read whole.
    const row = ((opts.withoutMessages ? st.head.get(threadId, ns, checkpointId) : undefined) ??
      st.checkpoint.get(threadId, ns, checkpointId)) as
      | {
          checkpoint_id: string;
          parent_checkpoint_id: string | null;
          type: string | null;
          checkpoint: Buffer | string | null;
          metadata: Buffer | string | null;
        }
      | undefined;
    if (!row) return null;
    const writes = (
      st.writes.all(threadId, ns, checkpointId) as {
        task_id: string;
        idx: number;
        channel: string;
        type: string | null;
        value: Buffer | string | null;
      }[]
    ).map((w): WriteRow => ({ task_id: w.task_id, idx: Number(w.idx), channel: w.channel, value: stored(w.type, w.value) }));
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

  async changeMark(): Promise<string> {
    const st = this.current();
    // Opened immutable (no writer): what it holds changes only with the file, and current() reopens it then, so the
    // file's own mark says it; counting the rows would cost a scan of the tables on every read.
    if (this.mark && this.mark.wal === null) return `file:${this.mark.main}`;
    const r = st.mark.get() as { c: number; m: string | null; w: number };
    return `${r.c}:${r.m ?? ''}:${r.w}`;
  }

  async close(): Promise<void> {
    this.db?.close();
    this.db = null;
    this.statements = null;
  }
}
