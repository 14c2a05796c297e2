/**
 * Moving a misnumbered version file out of the way of the next save.
 *
 * A file in `versions/` named for version N whose envelope holds another
 * version (copied or renamed there) is not a version: readers do not use
 * it, and the task stands at the version before it. A save of version N
 * commits by creating that very name, so the writer first moves the file to
 * `<name>.misnumbered-<inode>` beside it (a name no reader takes for a
 * version), where a person can still look at it: nothing is deleted.
 *
 * The move is a link to the new name, then the removal of the old name only
 * if it is still the same file: a writer that finds the name taken by a
 * good version (another writer got there first) leaves it alone. The
 * `versions/` folder is fsynced after, so a power cut cannot bring the file
 * back under its version's name after the save that replaced it.
 */
import { constants } from 'node:fs';
import path from 'node:path';
import { problem } from '../../shared/checkpoint/problem.js';
import { syncDir } from './atomic-file.js';
import { relPath, type ReadContext } from './file-reader.js';
import { errorCode, READ_FLAGS } from './store-fs.js';
import { StoreWriteError } from './store-types.js';
import { ASIDE_MARK, envelopeVersionOf, headVersion } from './version-heads.js';
import { versionPath } from './version-file.js';
import { readHeadOf } from './segment-compression.js';

/**
 * Move version file `n` aside when its envelope holds another version;
 * returns the name it was moved to (relative to the root), or null when the
 * file is not misnumbered (or is gone: nothing to move). Throws a
 * StoreWriteError naming the file when the move fails.
 */
export async function setAsideMisnumbered(ctx: ReadContext, taskId: string, taskDir: string, n: number): Promise<string | null> {
  const abs = versionPath(taskDir, n);
  const seen = await headVersion(ctx, abs);
  if (typeof seen !== 'number' || seen === n) return null;
  const fs = ctx.fs;
  const fail = (what: string, err: unknown) =>
    new StoreWriteError(taskId, [
      problem(
        relPath(ctx, abs),
        'io',
        `the file is named for version ${n} but holds version ${seen}, and ${what} (${errorCode(err) ?? String(err)}); nothing was written: move the file out of versions/ to continue`,
      ),
    ]);
  // What is moved is decided from the file itself, opened once: its inode names the new name and is checked at each step.
  let ino: number;
  try {
    const handle = await fs.open(abs, READ_FLAGS | constants.O_NOFOLLOW);
    try {
      const st = await handle.stat();
      const held = envelopeVersionOf(await readHeadOf(handle, st.size));
      if (!st.isFile() || held === null || held === n) return null;
      ino = st.ino;
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null;
    throw fail('it could not be read', err);
  }
  const aside = `${abs}${ASIDE_MARK}${ino}`;
  try {
    await fs.link(abs, aside);
  } catch (err) {
    // Another writer linked it first (or an earlier move stopped half way): the same file under the name is fine.
    if (errorCode(err) !== 'EEXIST' || (await fs.lstat(aside).catch(() => null))?.ino !== ino)
      throw fail('it could not be moved aside', err);
  }
  try {
    const now = await fs.lstat(abs).catch(() => null);
    if (now?.ino === ino) await fs.unlink(abs);
    await syncDir(fs, path.dirname(abs));
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw fail('it could not be moved aside', err);
  }
  return relPath(ctx, aside);
}
