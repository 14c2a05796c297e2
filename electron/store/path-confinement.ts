/**
 * Keeping paths that come from a renderer or an HTTP request inside the
 * checkpoint directory (or the renderer's build folder): the files the host
 * serves, and the paths in the options of a task the inspector starts.
 *
 * A lexical check alone is not enough: a symlink inside the root may point
 * anywhere, so the deepest existing part of the path is resolved with
 * realpath and compared against the real root.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ServiceError } from '../../shared/api/error-codes.js';

/** A path that would leave its root; nothing was read or written. */
export class PathOutsideRootError extends ServiceError {
  readonly code = 'forbidden';
  constructor(
    readonly requested: string,
    readonly root: string,
    /** Why it is refused: "it is absolute", "it climbs out with \"..\"", ... */
    readonly why: string,
  ) {
    super(`the path ${JSON.stringify(requested.slice(0, 200))} is refused: ${why}; only paths inside ${root} are served`);
  }
}

/** True when `candidate` is `root` itself or lies below it (both absolute and normalised). */
export function isWithin(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Check a relative path lexically: no NUL, not absolute (POSIX or Windows
 * style), no `..` segment. Returns the normalised forward-slash form.
 */
export function checkRelativePath(requested: string, root: string): string {
  if (requested.includes('\0')) throw new PathOutsideRootError(requested, root, 'it contains a NUL byte');
  if (path.isAbsolute(requested) || path.win32.isAbsolute(requested) || /^[a-zA-Z]:/.test(requested)) {
    throw new PathOutsideRootError(requested, root, 'it is absolute');
  }
  const segments = requested.split(/[/\\]+/).filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new PathOutsideRootError(requested, root, 'it climbs out with ".."');
  return segments.join('/');
}

/**
 * Resolve `requested` (relative to `root`) to a real absolute path inside the root.
 *
 * The part of the path that exists is resolved with realpath, so a symlink
 * leading out of the root is refused as surely as `../`. The part that does
 * not exist yet is appended unchanged (it cannot be a symlink).
 *
 * Synchronous: a realpath is a few system calls, and through the thread pool
 * it waited behind every read queued there (a large directory's listing),
 * which held the renderer's own files back for hundreds of milliseconds.
 *
 * @throws PathOutsideRootError when the path escapes, by any route
 */
export function resolveInsideRoot(root: string, requested: string): string {
  const relative = checkRelativePath(requested, root);
  const realRoot = realpathSync(root);
  let existing = path.join(realRoot, relative);
  const missing: string[] = [];
  // Walk up until something exists; that part may contain symlinks.
  for (;;) {
    try {
      const real = realpathSync(existing);
      const resolved = missing.length ? path.join(real, ...missing.reverse()) : real;
      if (!isWithin(realRoot, real)) throw new PathOutsideRootError(requested, root, 'it leads outside through a symbolic link');
      return resolved;
    } catch (err) {
      if (err instanceof PathOutsideRootError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      if (existing === realRoot) throw err;
      missing.push(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
}

/**
 * Resolve a folder a page names for a task (an agent's option): relative to `root`, or absolute and inside it
 * (through the root's real path too, should the root be reached through a link). Then as `resolveInsideRoot`.
 * The Python library holds the same rule for command agents (python/waystation/confinement.py).
 *
 * @throws PathOutsideRootError when the path is absolute and outside the root, or escapes it by any other route
 */
export function resolveNamedInsideRoot(root: string, requested: string): string {
  if (!path.isAbsolute(requested)) return resolveInsideRoot(root, requested);
  const under = [root, realpathSync(root)].find((r) => isWithin(r, requested));
  if (under === undefined) throw new PathOutsideRootError(requested, root, 'it names a folder outside the directory');
  return resolveInsideRoot(root, path.relative(under, requested) || '.');
}
