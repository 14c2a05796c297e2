/**
 * A file-system error while writing, as a sentence a person can act on: the
 * file, what went wrong in words, and what to do. A bare
 * `ENOSPC: no space left on device, write` with a stack trace says none of it.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { problem } from '../../shared/checkpoint/problem.js';
import { StoreWriteError } from './store-types.js';

const WHAT: Record<string, { what: string; fix: string }> = {
  ENOSPC: { what: 'there is no space left on the device', fix: 'free some space on that disk, then run the command again' },
  EDQUOT: { what: 'the disk quota is used up', fix: 'free some space within the quota, then run the command again' },
  EROFS: { what: 'the file system is read-only', fix: 'open the directory from a writable location' },
  EACCES: { what: 'permission is denied', fix: 'check the permissions of the folder' },
  EPERM: { what: 'the operation is not permitted', fix: 'check the permissions of the folder' },
  EIO: { what: 'the disk reported an input/output error', fix: 'check the disk, then run the command again' },
  EMFILE: { what: 'too many files are open', fix: 'close other programs or raise the limit on open files, then run the command again' },
  ENOTDIR: { what: 'a part of the path is a file, not a folder', fix: 'name a folder, or a path where one can be made' },
  EEXIST: { what: 'a file is there, not a folder', fix: 'name a folder, or a path where one can be made' },
};

/** The errno code of an error from the file system, if it is one this module describes. */
export function diskErrorCode(err: unknown): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && code in WHAT ? code : null;
}

/**
 * Describe a failed write of `file`, or null when `err` is not a file-system
 * error this module knows. `untouched` says what was left as it was.
 */
export function describeDiskError(err: unknown, file: string, untouched: string): string | null {
  const code = diskErrorCode(err);
  if (!code) return null;
  const { what, fix } = WHAT[code];
  return `cannot write ${file}: ${what} (${code}); ${untouched}. To continue, ${fix}`;
}

/**
 * Describe a folder (`dir`) that could not be made, or null when the cause is
 * not one this module knows. The error a recursive mkdir gives is often not
 * the cause (a read-only file system answers ENOENT for a folder two levels
 * down), so the cause is looked for from the nearest part of the path that
 * exists: a file there, or a folder that cannot be written to.
 */
export function describeFolderError(err: unknown, dir: string, what: string, untouched: string): string | null {
  const code = folderErrorCause(dir) ?? diskErrorCode(err);
  return code ? folderNotMadeBecause(code, what, untouched) : null;
}

/** The words for a folder (`what`) not made because of `code`. */
function folderNotMadeBecause(code: string, what: string, untouched: string): string {
  const { what: cause, fix } = WHAT[code];
  return `cannot create ${what}: ${cause} (${code}); ${untouched}. To continue, ${fix}`;
}

/**
 * The error to throw for a folder (`dir`, named `what`) whose mkdir failed with `err`: a StoreWriteError saying why
 * in words, nothing written, where the cause is one this module knows; `err` itself otherwise.
 */
export function folderNotMade(err: unknown, dir: string, what: string): unknown {
  const why = describeFolderError(err, dir, what, 'nothing was written');
  return why ? new StoreWriteError('', [problem(dir, 'io', why)]) : err;
}

/**
 * Why `dir` (named `what`) cannot be made when a file stands where it, or a folder on its way, would be: the
 * argument names a wrong path. Null otherwise (it exists as a folder, can be made, or fails for another reason).
 */
export function fileInTheWay(dir: string, what: string): string | null {
  const code = folderErrorCause(dir);
  return code === 'EEXIST' || code === 'ENOTDIR' ? folderNotMadeBecause(code, what, 'nothing was written') : null;
}

/** Why `dir` cannot be made, from the nearest part of its path that exists; null when nothing there says. */
function folderErrorCause(dir: string): string | null {
  let at = path.resolve(dir);
  for (;;) {
    let st;
    try {
      st = statSync(at, { throwIfNoEntry: false });
    } catch {
      // A file further up (ENOTDIR): found on the way there.
      st = undefined;
    }
    if (st) {
      if (!st.isDirectory()) return at === path.resolve(dir) ? 'EEXIST' : 'ENOTDIR';
      try {
        accessSync(at, constants.W_OK);
        return null;
      } catch (err) {
        return diskErrorCode(err);
      }
    }
    const parent = path.dirname(at);
    if (parent === at) return null;
    at = parent;
  }
}
