/**
 * The handful of file-system calls the store makes, behind one interface.
 *
 * Everything the store does to the disk goes through a StoreFs, so tests can
 * inject ENOSPC, EACCES or EIO at any single call and check that the previous
 * version survives.
 */
import * as fsp from 'node:fs/promises';
import {
  appendFileSync,
  close,
  closeSync,
  constants,
  fstat,
  fstatSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  open,
  openSync,
  read,
  readdir,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  stat,
  statSync,
  unlinkSync,
  writeSync,
  type Dirent,
  type Stats,
} from 'node:fs';

/** The part of a FileHandle the store uses. */
export interface StoreFileHandle {
  writeFile(data: Uint8Array | string): Promise<void>;
  /** Write all of `data` at byte `position` (appending to a segment). */
  write(data: Uint8Array, position: number): Promise<void>;
  /** fdatasync: the file's bytes and its size are durable, its other metadata may not be. */
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  readFile(): Promise<Buffer>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** A whole file as `readWholeFile` found it. */
export type WholeFile =
  { ok: true; bytes: Buffer; mtimeMs: number } | { ok: false; reason: 'not-a-file' } | { ok: false; reason: 'too-large'; size: number };

export interface StoreFs {
  open(path: string, flags: string | number, mode?: number): Promise<StoreFileHandle>;
  /**
   * Read a whole file in one call: what readers use. A file over `maxBytes`
   * is refused before any byte is read; with `followLinks` false a final
   * symlink fails with ELOOP, so the caller can check where it leads first.
   * Other failures reject with the OS error.
   */
  readWholeFile(path: string, opts: { maxBytes: number; followLinks: boolean }): Promise<WholeFile>;
  stat(path: string): Promise<Stats>;
  /**
   * Whether anything is at `path`: false for ENOENT and ENOTDIR, a rejection
   * for any other failure. For lookups that usually find nothing (is there a
   * version after the hot snapshot's?), which `stat` would answer by throwing.
   */
  exists(path: string): Promise<boolean>;
  lstat(path: string): Promise<Stats>;
  realpath(path: string): Promise<string>;
  readdir(path: string): Promise<Dirent[]>;
  /** The names in a folder, without their types: all a listing needs of a task folder. */
  readdirNames(path: string): Promise<string[]>;
  mkdir(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  link(existing: string, created: string): Promise<void>;
  unlink(path: string): Promise<void>;
  appendFile(path: string, data: string): Promise<void>;
  /**
   * The read calls again, synchronous, for a StoreFs that can answer them
   * without a round trip through the thread pool (see `syncReadsOf`).
   */
  readonly syncReads?: SyncStoreReads;
  /** Its reads are answered synchronously already (settledReads): a long walk through it still yields now and then. */
  readonly settled?: boolean;
}

/** The read-only calls of a StoreFs as synchronous functions: same arguments, same results, same errors (thrown). */
export interface SyncStoreReads {
  readWholeFile(path: string, opts: { maxBytes: number; followLinks: boolean }): WholeFile;
  stat(path: string): Stats;
  exists(path: string): boolean;
  lstat(path: string): Stats;
  realpath(path: string): string;
  readdir(path: string): Dirent[];
  readdirNames(path: string): string[];
  /** The asynchronous calls these answer for: a StoreFs whose own calls differ (one wrapped to inject faults) is not answered by them. */
  readonly mirrors: Pick<StoreFs, SyncReadName>;
}

type SyncReadName = 'readWholeFile' | 'stat' | 'exists' | 'lstat' | 'realpath' | 'readdir' | 'readdirNames';
const SYNC_READ_NAMES: readonly SyncReadName[] = ['readWholeFile', 'stat', 'exists', 'lstat', 'realpath', 'readdir', 'readdirNames'];

/**
 * The synchronous reads of `fs`, or null when it has none or when any of its
 * read calls is not the one they mirror.
 *
 * A StoreFs built by spreading nodeFs and replacing a call (as fault-injection
 * tests do) carries nodeFs's `syncReads` along; answering from them would skip
 * the replaced call, so such a StoreFs is read through its own calls.
 */
export function syncReadsOf(fs: StoreFs): SyncStoreReads | null {
  const sync = fs.syncReads;
  if (!sync) return null;
  for (const name of SYNC_READ_NAMES) if (fs[name] !== sync.mirrors[name]) return null;
  return sync;
}

/**
 * `fs` with its read calls answered synchronously, as already-settled promises.
 *
 * Each asynchronous call costs a trip through libuv's thread pool and back,
 * about as much main-thread time as the read itself takes synchronously from
 * the page cache; a listing makes five or six per task. A caller that reads
 * many files through this keeps each batch small and yields between batches
 * (`setImmediate`), because while a batch runs nothing else does.
 */
export function settledReads(fs: StoreFs, sync: SyncStoreReads): StoreFs {
  const settled =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): Promise<R> =>
      settle(() => fn(...args));
  return {
    ...fs,
    readWholeFile: settled(sync.readWholeFile),
    stat: settled(sync.stat),
    exists: settled(sync.exists),
    lstat: settled(sync.lstat),
    realpath: settled(sync.realpath),
    readdir: settled(sync.readdir),
    readdirNames: settled(sync.readdirNames),
    // The settled calls mirror nothing: this StoreFs is itself the fast path.
    syncReads: undefined,
    settled: true,
  };
}

/**
 * The calls of nodeFs. Reads are asynchronous. Writes (open, link, rename,
 * unlink, mkdir, append, and a handle's write, fsync and close) are made
 * with synchronous calls, as already-settled promises: a save is a dozen
 * small calls in a row, each of which costs a round trip through libuv's
 * thread pool on the asynchronous API, more than the call itself takes
 * (a save at step 100 took ~1.6 ms that way against ~1.1 ms). The event loop
 * waits out the save's two fsyncs instead, which a runner, whose next step
 * waits for the save anyway, does not notice, and which in the host is the
 * time of a user's edit or decision.
 */
const nodeCalls: Omit<StoreFs, 'syncReads'> = {
  // A read-only open never blocks: without O_NONBLOCK, opening a named pipe waits for a writer forever.
  open: (path, flags, mode) => settle(() => new SyncFileHandle(path, openSync(path, flags === 'r' ? READ_FLAGS : flags, mode))),
  readWholeFile,
  stat: (path) => fsp.stat(path),
  // The callback API: a missing entry costs no promise rejection, at half the price of fsp.stat over 10,000 tasks.
  exists: (path) =>
    new Promise((resolve, reject) =>
      stat(path, (err) => {
        if (!err) resolve(true);
        else if (err.code === 'ENOENT' || err.code === 'ENOTDIR') resolve(false);
        else reject(err);
      }),
    ),
  lstat: (path) => fsp.lstat(path),
  realpath: (path) => fsp.realpath(path),
  readdir: (path) => fsp.readdir(path, { withFileTypes: true }),
  // The callback API and no Dirent objects: a listing reads 10,000 task folders this way.
  readdirNames: (path) => new Promise((resolve, reject) => readdir(path, (err, names) => (err ? reject(err) : resolve(names)))),
  mkdir: (path) =>
    settle(() => {
      mkdirSync(path, { recursive: true });
    }),
  rename: (from, to) => settle(() => renameSync(from, to)),
  link: (existing, created) => settle(() => linkSync(existing, created)),
  unlink: (path) => settle(() => unlinkSync(path)),
  appendFile: (path, data) => settle(() => appendFileSync(path, data)),
};

/** Run `fn` now, as a promise: its value resolved, or what it threw rejected. */
function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

/** A file descriptor behind the StoreFileHandle interface, on synchronous calls (see nodeCalls). */
class SyncFileHandle implements StoreFileHandle {
  constructor(
    private readonly path: string,
    private readonly fd: number,
  ) {}

  writeFile(data: Uint8Array | string): Promise<void> {
    return settle(() => {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      let written = 0;
      while (written < bytes.length) written += writeSync(this.fd, bytes, written, bytes.length - written);
    });
  }

  write(data: Uint8Array, position: number): Promise<void> {
    return settle(() => {
      let written = 0;
      while (written < data.length) written += writeSync(this.fd, data, written, data.length - written, position + written);
    });
  }

  datasync(): Promise<void> {
    return settle(() => fdatasyncSync(this.fd));
  }

  truncate(length: number): Promise<void> {
    return settle(() => ftruncateSync(this.fd, length));
  }

  readFile(): Promise<Buffer> {
    return settle(() => {
      // A pipe never ends and a device such as /dev/zero never stops giving bytes: only regular files are read whole.
      if (!fstatSync(this.fd).isFile()) throw notRegularFile(this.path);
      return readFileSync(this.fd);
    });
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    return settle(() => ({ bytesRead: readSync(this.fd, buffer, offset, length, position) }));
  }

  stat(): Promise<Stats> {
    return settle(() => fstatSync(this.fd));
  }

  sync(): Promise<void> {
    return settle(() => fsyncSync(this.fd));
  }

  close(): Promise<void> {
    return settle(() => closeSync(this.fd));
  }
}

/**
 * The flags every whole-file read opens with. O_NONBLOCK makes opening a named
 * pipe return at once instead of waiting for a writer, so the fstat after it
 * can refuse the pipe; on a regular file the flag changes nothing.
 */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** The error a handle's readFile throws for a pipe, socket or device: EFTYPE, with the path and what was left alone. */
export function notRegularFile(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${path} is not a regular file (a named pipe, socket or device); it was not read`), {
    code: 'EFTYPE',
    path,
  });
}

/** The real file system (node:fs/promises), with synchronous reads for batched listing (see `syncReadsOf`). */
export const nodeFs: StoreFs = {
  ...nodeCalls,
  syncReads: {
    readWholeFile: readWholeFileSync,
    stat: (path) => statSync(path),
    exists: (path) => {
      try {
        return statSync(path, { throwIfNoEntry: false }) !== undefined;
      } catch (err) {
        if (errorCode(err) === 'ENOTDIR') return false;
        throw err;
      }
    },
    lstat: (path) => lstatSync(path),
    realpath: (path) => realpathSync.native(path),
    readdir: (path) => readdirSync(path, { withFileTypes: true }),
    readdirNames: (path) => readdirSync(path),
    mirrors: nodeCalls,
  },
};

/** readWholeFile with synchronous calls: the same checks, in the same order, as the callback version below. */
function readWholeFileSync(file: string, opts: { maxBytes: number; followLinks: boolean }): WholeFile {
  const fd = openSync(file, READ_FLAGS | (opts.followLinks ? 0 : constants.O_NOFOLLOW));
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, reason: 'not-a-file' };
    if (stat.size > opts.maxBytes) return { ok: false, reason: 'too-large', size: stat.size };
    const bytes = Buffer.allocUnsafe(stat.size);
    let filled = 0;
    while (filled < stat.size) {
      const n = readSync(fd, bytes, filled, stat.size - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return { ok: true, bytes: filled === stat.size ? bytes : bytes.subarray(0, filled), mtimeMs: stat.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/**
 * readWholeFile on the callback API: open, fstat, read and close with no
 * FileHandle object in between. Listing 10,000 tasks reads 10,000 files, and
 * promise-based handles (each tracked for closing on garbage collection) cost
 * several times the reads themselves there.
 */
function readWholeFile(file: string, opts: { maxBytes: number; followLinks: boolean }): Promise<WholeFile> {
  return new Promise((resolve, reject) => {
    open(file, READ_FLAGS | (opts.followLinks ? 0 : constants.O_NOFOLLOW), (openErr, fd) => {
      if (openErr) return reject(openErr);
      const finish = (err: Error | null, result?: WholeFile) => close(fd, () => (err ? reject(err) : resolve(result!)));
      fstat(fd, (statErr, stat) => {
        if (statErr) return finish(statErr);
        if (!stat.isFile()) return finish(null, { ok: false, reason: 'not-a-file' });
        if (stat.size > opts.maxBytes) return finish(null, { ok: false, reason: 'too-large', size: stat.size });
        // One buffer of the stat'ed size: writers replace files by rename and never grow one in place.
        const bytes = Buffer.allocUnsafe(stat.size);
        let filled = 0;
        const done = () =>
          finish(null, { ok: true, bytes: filled === stat.size ? bytes : bytes.subarray(0, filled), mtimeMs: stat.mtimeMs });
        const more = () =>
          read(fd, bytes, filled, stat.size - filled, filled, (readErr, n) => {
            if (readErr) return finish(readErr);
            filled += n;
            if (n === 0 || filled === stat.size) return done();
            more();
          });
        if (stat.size === 0) done();
        else more();
      });
    });
  });
}

/** The error code of a failed fs call, or undefined. */
export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}
