/**
 * The handful of file-system calls the store makes, behind one interface.
 *
 * Everything the store does to the disk goes through a StoreFs, so tests can
 * inject ENOSPC, EACCES or EIO at any single call and check that the previous
 * version survives.
 */
import * as fsp from 'node:fs/promises';
import { close, constants, fstat, open, read, readdir, stat, type Dirent, type Stats } from 'node:fs';

/** The part of a FileHandle the store uses. */
export interface StoreFileHandle {
  writeFile(data: Uint8Array | string): Promise<void>;
  readFile(): Promise<Buffer>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** A whole file as `readWholeFile` found it. */
export type WholeFile =
  | { ok: true; bytes: Buffer; mtimeMs: number }
  | { ok: false; reason: 'not-a-file' }
  | { ok: false; reason: 'too-large'; size: number };

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
}

/** The real file system (node:fs/promises). */
export const nodeFs: StoreFs = {
  open: (path, flags, mode) => fsp.open(path, flags, mode),
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
  mkdir: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  rename: (from, to) => fsp.rename(from, to),
  link: (existing, created) => fsp.link(existing, created),
  unlink: (path) => fsp.unlink(path),
  appendFile: (path, data) => fsp.appendFile(path, data),
};

/**
 * readWholeFile on the callback API: open, fstat, read and close with no
 * FileHandle object in between. Listing 10,000 tasks reads 10,000 files, and
 * promise-based handles (each tracked for closing on garbage collection) cost
 * several times the reads themselves there.
 */
function readWholeFile(file: string, opts: { maxBytes: number; followLinks: boolean }): Promise<WholeFile> {
  return new Promise((resolve, reject) => {
    open(file, constants.O_RDONLY | (opts.followLinks ? 0 : constants.O_NOFOLLOW), (openErr, fd) => {
      if (openErr) return reject(openErr);
      const finish = (err: Error | null, result?: WholeFile) => close(fd, () => (err ? reject(err) : resolve(result!)));
      fstat(fd, (statErr, stat) => {
        if (statErr) return finish(statErr);
        if (!stat.isFile()) return finish(null, { ok: false, reason: 'not-a-file' });
        if (stat.size > opts.maxBytes) return finish(null, { ok: false, reason: 'too-large', size: stat.size });
        // One buffer of the stat'ed size: writers replace files by rename and never grow one in place.
        const bytes = Buffer.allocUnsafe(stat.size);
        let filled = 0;
        const done = () => finish(null, { ok: true, bytes: filled === stat.size ? bytes : bytes.subarray(0, filled), mtimeMs: stat.mtimeMs });
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
