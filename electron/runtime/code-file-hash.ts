/**
 * The sha256 of an agent's code file (a module agent's module, a command
 * agent's script), read in bounded memory.
 *
 * What a task records and a directory's trust covers is the hash of files a
 * directory names, and a directory can come from anyone: its "module" may be
 * a 3 GB file, a named pipe nobody writes to, or a link to /dev/zero. So the
 * file is opened without waiting (O_NONBLOCK: a pipe opens at once and is
 * then refused), must be a regular file of at most CODE_FILE_MAX_BYTES, and
 * is hashed in chunks, never held whole. A file that grows past the limit
 * while it is read is refused the same way.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { errorCode, READ_FLAGS } from '../store/store-fs.js';

/** The largest code file Waystation hashes: far more than any agent's source or bundle. */
export const CODE_FILE_MAX_BYTES = 64 * 1024 * 1024;

const CHUNK_BYTES = 1024 * 1024;

/** Why a code file has no hash. */
export type CodeFileRefusal = 'missing' | 'not-a-file' | 'too-large' | 'unreadable';

/** A code file's hash, or why it has none: `problem` is a sentence naming the file. */
export type CodeFileHash = { ok: true; sha256: string; bytes: number } | { ok: false; reason: CodeFileRefusal; problem: string };

function megabytes(n: number): string {
  return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
}

function refusal(file: string, reason: CodeFileRefusal, detail: string): CodeFileHash {
  return { ok: false, reason, problem: `${file} ${detail}` };
}

function tooLarge(file: string, size: string, maxBytes: number): CodeFileHash {
  return refusal(
    file,
    'too-large',
    `is ${size}, more than the ${megabytes(maxBytes)} Waystation reads of an agent's code file; it was not read (is it the file you meant?)`,
  );
}

/**
 * Hash a code file in chunks: the sha256 of a regular file of at most
 * `maxBytes`, or why there is none (missing, not a regular file, too large,
 * unreadable). Never throws, never waits on a pipe or a device.
 */
export async function hashCodeFile(file: string, maxBytes: number = CODE_FILE_MAX_BYTES): Promise<CodeFileHash> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, READ_FLAGS);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return refusal(file, 'missing', 'does not exist');
    return refusal(file, 'unreadable', `cannot be opened (${code ?? String(err)})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      return refusal(file, 'not-a-file', 'is not a regular file (a folder, named pipe, socket or device); it was not read');
    }
    if (stat.size > maxBytes) return tooLarge(file, `${stat.size} bytes`, maxBytes);
    const hash = createHash('sha256');
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let bytes = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, bytes);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      // Growing while it is read: the stat's size no longer bounds it.
      if (bytes > maxBytes) return tooLarge(file, `over ${megabytes(maxBytes)} (it grew while it was read)`, maxBytes);
      hash.update(chunk.subarray(0, bytesRead));
    }
    return { ok: true, sha256: hash.digest('hex'), bytes };
  } catch (err) {
    return refusal(file, 'unreadable', `cannot be read (${errorCode(err) ?? String(err)})`);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
