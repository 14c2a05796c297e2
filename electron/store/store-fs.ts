/**
 * The handful of file-system calls the store makes, behind one interface.
 *
 * Everything the store does to the disk goes through a StoreFs, so tests can
 * inject ENOSPC, EACCES or EIO at any single call and check that the previous
 * version survives.
 */
import * as fsp from 'node:fs/promises';
import type { Dirent, Stats } from 'node:fs';

/** The part of a FileHandle the store uses. */
export interface StoreFileHandle {
  writeFile(data: Uint8Array | string): Promise<void>;
  readFile(): Promise<Buffer>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreFs {
  open(path: string, flags: string | number, mode?: number): Promise<StoreFileHandle>;
  stat(path: string): Promise<Stats>;
  lstat(path: string): Promise<Stats>;
  realpath(path: string): Promise<string>;
  readdir(path: string): Promise<Dirent[]>;
  mkdir(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  link(existing: string, created: string): Promise<void>;
  unlink(path: string): Promise<void>;
  appendFile(path: string, data: string): Promise<void>;
}

/** The real file system (node:fs/promises). */
export const nodeFs: StoreFs = {
  open: (path, flags, mode) => fsp.open(path, flags, mode),
  stat: (path) => fsp.stat(path),
  lstat: (path) => fsp.lstat(path),
  realpath: (path) => fsp.realpath(path),
  readdir: (path) => fsp.readdir(path, { withFileTypes: true }),
  mkdir: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  rename: (from, to) => fsp.rename(from, to),
  link: (existing, created) => fsp.link(existing, created),
  unlink: (path) => fsp.unlink(path),
  appendFile: (path, data) => fsp.appendFile(path, data),
};

/** The error code of a failed fs call, or undefined. */
export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}
