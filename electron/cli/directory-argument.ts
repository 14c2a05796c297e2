/**
 * A location argument that is a URL of a kind Waystation has no store for
 * (`https://…`, `sqlite://…`) is not a relative path: taken as one, it would
 * create a folder named after it, credentials included, in the working
 * directory. Every command refuses it before touching the disk, naming the
 * URL without its credentials. PostgreSQL URLs never reach here: they are
 * stores (see `requireLocation`).
 */
import path from 'node:path';
import { UsageError } from './cli-context.js';
import { redactUrl } from '../store/postgres/redact-url.js';
import { fileInTheWay } from '../store/disk-errors.js';

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** Refuse a directory argument that has a URL scheme; see the module comment. */
export function refuseUrlDirectory(dir: string): void {
  const scheme = SCHEME.exec(dir)?.[1];
  if (!scheme) return;
  throw new UsageError(
    `${redactUrl(dir)} is a ${scheme}:// URL, not a directory: a location is a checkpoint directory on disk or a ` +
      'postgres:// (postgresql://) URL; nothing was created. Give the path of a folder or a PostgreSQL URL',
  );
}

/**
 * The directory a command that makes it when missing works in (run's, demo's, copy's destination): DIR resolved,
 * never a URL, nor a path where a file stands (bad input, refused before anything is made).
 */
export function directoryToMake(dir: string, what = 'the checkpoint directory'): string {
  refuseUrlDirectory(dir);
  const root = path.resolve(dir);
  const inTheWay = fileInTheWay(root, what);
  if (inTheWay) throw new UsageError(`${dir}: ${inTheWay}`);
  return root;
}
