/**
 * Opening a LangGraph SQLite checkpointer file read-only: nothing written to
 * the file or beside it, while the locks and journals of the processes that
 * write it are honoured, so what is read is what they committed.
 *
 * - A `-wal` and a `-shm` beside the file: a writer has it open (or crashed
 *   with it open). It is opened read-only in place, which reads the writer's
 *   commits and takes reader locks in its `-shm`, as every reader must.
 * - A `-wal` without a `-shm`: a writer in `locking_mode=EXCLUSIVE` (which
 *   keeps its WAL index in memory), alive or dead. Opening it in place would
 *   create a `-shm` (and, while the writer lives, wait for its lock), so the
 *   file and its `-wal` are read through a private copy (below): the commits
 *   in the `-wal` are read, a transaction not committed is not.
 * - WAL mode and no `-wal`: no process has it open (a WAL writer always has
 *   its `-wal`). It is opened `immutable=1` in place: no locks, no `-wal` or
 *   `-shm` created (a WAL database opened any other way creates them); where
 *   the SQLite build takes no URIs, it is copied into memory instead.
 * - Rollback-journal mode: opened read-only in place, with SQLite's locks, so
 *   a writer's half-written transaction is never read.
 *
 * A writer holding its lock longer than BUSY_TIMEOUT_MS (a long exclusive
 * transaction in rollback-journal mode) makes the file `SqliteLockedError`,
 * which says so. A journal left by a writer that died (a hot journal), or a
 * `-wal` whose index must be rebuilt, needs a write to read past, which a
 * read-only connection refuses: then too the file is read through a private
 * copy. A private copy is the file and its journal or `-wal` copied to a
 * folder of our own, where SQLite rolls back or recovers the copy; its bytes
 * are then read from memory. The user's files stay as they were.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** How long a read waits for a writer's lock before the file is reported locked (ms). */
export const BUSY_TIMEOUT_MS = 500;

/** Raised when another process holds the file's lock past BUSY_TIMEOUT_MS. */
export class SqliteLockedError extends ServiceError {
  readonly code = 'busy' as const;
  constructor(readonly file: string) {
    super(
      `${file} is locked by another process, which is writing to it (SQLite: database is locked; waited ${BUSY_TIMEOUT_MS} ms). ` +
        'Nothing was read or changed: try again once that process has committed or closed the file.',
    );
  }
}

/** Raised when SQLite cannot read the file; says which file and what SQLite said. */
export class SqliteUnreadableError extends ServiceError {
  readonly code = 'unreadable' as const;
}

/** The stat of the file and its `-wal`: what changes when another process commits. */
export interface FileMark {
  main: string;
  wal: string | null;
}

export const markOf = (file: string): FileMark => {
  const main = fs.statSync(file);
  const wal = fs.statSync(`${file}-wal`, { throwIfNoEntry: false });
  return { main: `${main.size}:${main.mtimeMs}:${main.ino}`, wal: wal ? `${wal.size}:${wal.mtimeMs}` : null };
};

export const sameMark = (a: FileMark, b: FileMark) => a.main === b.main && a.wal === b.wal;

// SQLite reads `file:` URIs (and so `immutable=1`) only when told at start-up; this must be set before the first open.
process.env.SQLITE_USE_URI ??= '1';

const immutableUri = (file: string) => `file:${file.split(path.sep).map(encodeURIComponent).join('/')}?mode=ro&immutable=1`;

const sqliteCode = (err: unknown): string | null => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
};

/**
 * What SQLite said, as an error that names the file. Anything else passes as
 * it is: service errors, and the file system's (whose messages name the path).
 */
export function fileError(file: string, err: unknown): Error {
  const code = sqliteCode(err);
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return new SqliteLockedError(file);
  if (code === null || err instanceof ServiceError) return err instanceof Error ? err : new Error(String(err));
  const message = err instanceof Error ? err.message : String(err);
  return new SqliteUnreadableError(`${file} cannot be read as SQLite: ${message} (${code}). Nothing was written to it.`);
}

/** A copy's bytes as an in-memory database; an in-memory database cannot be in WAL mode (bytes 18 and 19 say 2 then). */
function inMemory(bytes: Buffer): Database.Database {
  if (bytes.length >= 20 && bytes[18] === 2) bytes[18] = bytes[19] = 1;
  return new Database(bytes, { readonly: true });
}

/** Read something small, so a lock or a journal shows now rather than at the first real query. */
const probe = (db: Database.Database) => db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();

/** The header's journal mode: 2 for WAL (bytes 18 and 19), 1 for a rollback journal. */
function headerMode(file: string): number {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(20);
    return fs.readSync(fd, head, 0, 20, 0) === 20 ? head[18] : 1;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The file as its last writer committed it, read through a private copy: the
 * file and `companion` (its `-journal` or `-wal`) copied to a folder of our
 * own, opened there read-write so SQLite rolls back or recovers the copy, and
 * handed over in memory. Retried when the file changed while it was copied.
 */
function privateCopy(file: string, companion: '-journal' | '-wal'): Database.Database {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-sqlite-'));
  try {
    for (let attempt = 0; ; attempt++) {
      const before = markOf(file);
      const copy = path.join(dir, 'copy.sqlite');
      for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(`${copy}${suffix}`, { force: true });
      fs.copyFileSync(file, copy);
      try {
        fs.copyFileSync(`${file}${companion}`, `${copy}${companion}`);
      } catch (err) {
        // Gone meanwhile: a writer finished with it, and the file's mark below says whether to copy again.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      if (!sameMark(before, markOf(file))) {
        // Written to while it was copied: the copy may mix two commits.
        if (attempt < 3) continue;
        throw new SqliteLockedError(file);
      }
      // Opening the copy read-write rolls its journal back (or recovers its -wal); closing the last connection
      // folds a -wal into the copy. Its bytes are then the last commit.
      const db = new Database(copy, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
      try {
        probe(db);
      } finally {
        db.close();
      }
      return inMemory(fs.readFileSync(copy));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Open `file` read-only as the module comment says; errors name the file. */
export function openQuietly(file: string, mark: FileMark): Database.Database {
  try {
    if (mark.wal !== null && !fs.existsSync(`${file}-shm`)) return privateCopy(file, '-wal');
    if (mark.wal === null && headerMode(file) === 2) {
      try {
        const db = new Database(immutableUri(file), { readonly: true, fileMustExist: true });
        probe(db);
        return db;
      } catch {
        // No URI support in this process (better-sqlite3 was opened before SQLITE_USE_URI was set): a copy.
        return inMemory(fs.readFileSync(file));
      }
    }
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    try {
      probe(db);
      return db;
    } catch (err) {
      db.close();
      const code = sqliteCode(err);
      // A hot journal to roll back, a -wal index to rebuild: writes a read-only connection may not make.
      if (code === 'SQLITE_READONLY_ROLLBACK') return privateCopy(file, '-journal');
      if (code === 'SQLITE_READONLY_RECOVERY' || code === 'SQLITE_READONLY_CANTINIT') return privateCopy(file, '-wal');
      throw err;
    }
  } catch (err) {
    throw fileError(file, err);
  }
}

/**
 * The tables of the file as last written to the file itself, without its
 * lock: what detection can still tell of a file another process holds
 * locked. Null when the bytes cannot be read as a database (a writer is
 * halfway through them).
 */
export function tablesWithoutLock(file: string): Set<string> | null {
  try {
    const db = inMemory(fs.readFileSync(file));
    try {
      return new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}
