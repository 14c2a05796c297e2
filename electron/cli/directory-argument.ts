/**
 * A DIR argument that is a URL (`postgresql://user:password@host/db`) is not
 * a relative path: taken as one, it would create a folder named after it,
 * password included, in the working directory. Every command refuses it
 * before touching the disk, naming the URL without its credentials.
 */
import path from 'node:path';
import { UsageError } from './cli-context.js';

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** The URL with any user and password replaced by `…`, for messages. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@');
}

/** Refuse a DIR argument that has a URL scheme; see the module comment. */
export function refuseUrlDirectory(dir: string): void {
  const scheme = SCHEME.exec(dir)?.[1];
  if (!scheme) return;
  throw new UsageError(
    `${withoutCredentials(dir)} is a ${scheme}:// URL, not a directory: this command reads and writes a checkpoint directory on disk, ` +
      'and no store at a URL is supported here; nothing was created. Give the path of a folder',
  );
}

/** The directory a command that creates it (run) works in: DIR resolved, never a URL. */
export function directoryToRunIn(dir: string): string {
  refuseUrlDirectory(dir);
  return path.resolve(dir);
}
