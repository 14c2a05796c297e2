/**
 * Atomic, durable file writes: temp file in the same folder, fsync, then
 * rename (replace) or link (create only if absent), then fsync the folder.
 *
 * The steps are exported separately so a save can run the independent temp
 * writes and fsyncs of many files in parallel before committing any of them.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { errorCode, type StoreFs } from './store-fs.js';

// Temp names are unique without asking the system for randomness on every save: random per process, counted within it.
const PROCESS_TOKEN = randomBytes(6).toString('hex');
let tempCount = 0;

/** True for names of files a writer has not finished: readers skip them. */
export function isTempName(name: string): boolean {
  return name.startsWith('.') || name.endsWith('.tmp');
}

/**
 * Write `data` to a fresh temp file beside `target` and fsync it.
 *
 * Returns the temp path. On failure the temp file is removed. `sync: false`
 * skips the fsync, for files that may be lost or torn by a power cut because
 * they can be rebuilt (the hot snapshot): the rename that follows is still
 * atomic for every reader while the machine stays up.
 */
export async function writeTemp(fs: StoreFs, target: string, data: Uint8Array | string, opts: { sync?: boolean } = {}): Promise<string> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${PROCESS_TOKEN}${(tempCount++).toString(16)}.tmp`);
  let handle;
  try {
    handle = await fs.open(temp, 'wx', 0o644);
    await handle.writeFile(data);
    if (opts.sync !== false) await handle.sync();
  } catch (err) {
    await handle?.close().catch(() => {});
    await removeQuietly(fs, temp);
    throw err;
  }
  await handle.close();
  return temp;
}

/**
 * Put a synced temp file in place only if `target` does not exist yet.
 *
 * Returns false (and removes the temp file) when the target already exists:
 * link(2) fails with EEXIST atomically, so two writers never both win.
 *
 * After a successful link the temp name is removed; with `pending`, the
 * removal is started and pushed there instead of awaited, so a caller can run
 * it beside the folder's fsync rather than before it.
 */
export async function commitCreate(fs: StoreFs, temp: string, target: string, pending?: Promise<void>[]): Promise<boolean> {
  try {
    await fs.link(temp, target);
  } catch (err) {
    await removeQuietly(fs, temp);
    if (errorCode(err) === 'EEXIST') return false;
    throw err;
  }
  // A leftover temp name from a crash here is harmless: readers skip it.
  const removal = removeQuietly(fs, temp);
  if (pending) pending.push(removal);
  else await removal;
  return true;
}

/** Put a synced temp file in place, replacing `target` atomically. */
export async function commitReplace(fs: StoreFs, temp: string, target: string): Promise<void> {
  try {
    await fs.rename(temp, target);
  } catch (err) {
    await removeQuietly(fs, temp);
    throw err;
  }
}

/** fsync a folder, so the names created or renamed in it survive a power cut. */
export async function syncDir(fs: StoreFs, dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Remove a file, ignoring errors: used to clean up temp files. */
export async function removeQuietly(fs: StoreFs, file: string): Promise<void> {
  try {
    await fs.unlink(file);
  } catch {
    // Already gone, or the disk refuses: a stale temp file is harmless.
  }
}

/**
 * Write a whole file atomically and durably.
 *
 * `replace` overwrites an existing file; `create` fails with an EEXIST error
 * when the file exists and leaves it untouched.
 */
export async function writeFileAtomic(
  fs: StoreFs,
  target: string,
  data: Uint8Array | string,
  mode: 'replace' | 'create' = 'replace',
): Promise<void> {
  const temp = await writeTemp(fs, target, data);
  if (mode === 'create') {
    if (!(await commitCreate(fs, temp, target))) {
      throw Object.assign(new Error(`${target} already exists; it was left untouched`), { code: 'EEXIST' });
    }
  } else {
    await commitReplace(fs, temp, target);
  }
  await syncDir(fs, path.dirname(target));
}
