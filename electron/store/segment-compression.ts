/**
 * Full segments kept compressed.
 *
 * A segment that holds its 16 versions is never written to again, and its
 * records are JSON with the same keys and ids over and over: gzip takes a
 * segment of a 1,000-step task to about a fifth of its size. So the lease
 * holder, once a segment is full and closed, writes its gzip beside it and
 * renames it over the file (docs/FORMAT.md, "Compressed segments"). The file
 * keeps its name; its bytes begin with gzip's magic number, where a version
 * file's begin with `{`, so a reader tells the two apart from the first two
 * bytes and inflates the first kind before anything else: every offset,
 * span, seal and hash is of the inflated bytes, as they were written.
 *
 * Inflating is capped at the reader's limit for one file, so a small file
 * cannot unpack into a large one, and what does not inflate is a problem
 * named like any unreadable file, never an exception.
 */
import type { Stats } from 'node:fs';
import { constants, crc32, deflateRaw, gunzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { readBytes, relPath, type ReadContext } from './file-reader.js';
import { commitReplace, removeQuietly, writeTemp } from './atomic-file.js';
import { errorCode, type StoreFileHandle, type StoreFs } from './store-fs.js';
import { HEAD_BYTES } from './version-records.js';

const deflateRawAsync = promisify(deflateRaw);

/**
 * How many of a segment's first bytes its gzip keeps as they are, in a stored
 * block at the start of the stream: the envelope's head (HEAD_BYTES) and more,
 * so a reader that wants only the head (which version the file holds; whether
 * it is sealed) reads it without inflating anything.
 */
export const STORED_HEAD_BYTES = 256;

/** gzip's header as Node and Python write it: deflate, no name, no time, Unix. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]);
/** Where the first deflate block begins: right after a header with no optional fields (FLG = 0). */
const FIRST_BLOCK = GZIP_HEADER.length;

/** Whether a file's bytes are a compressed segment: they begin with gzip's magic number. */
export function isCompressed(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** A version file's bytes as written: inflated when compressed, as they are otherwise. */
export function inflatedVersionBytes(
  file: string,
  bytes: Buffer,
  maxBytes: number,
): { ok: true; bytes: Buffer } | { ok: false; missing: false; problem: Problem } {
  if (!isCompressed(bytes)) return { ok: true, bytes };
  try {
    return { ok: true, bytes: gunzipSync(bytes, { maxOutputLength: maxBytes }) };
  } catch (err) {
    const code = errorCode(err);
    const refuse = (reason: Problem['reason'], message: string) => ({
      ok: false as const,
      missing: false as const,
      problem: problem(file, reason, message),
    });
    if (code === 'ERR_BUFFER_TOO_LARGE')
      return refuse('too-large', `a compressed segment that inflates past the ${maxBytes}-byte limit for one file; not loaded`);
    if (code === 'Z_BUF_ERROR') return refuse('truncated', 'a compressed segment that ends early: a torn or partial write');
    return refuse('unreadable', `a compressed segment that does not inflate (${code ?? String(err)})`);
  }
}

/** Read a version file whole, inflated when compressed (see readBytes). */
export async function readVersionBytes(ctx: ReadContext, abs: string): Promise<Awaited<ReturnType<typeof readBytes>>> {
  const read = await readBytes(ctx, abs);
  if (!read.ok) return read;
  const inflated = inflatedVersionBytes(relPath(ctx, abs), read.bytes, ctx.maxFileBytes);
  return inflated.ok ? { ...read, bytes: inflated.bytes } : inflated;
}

/**
 * The gzip of a segment's bytes (RFC 1952), its deflate stream opening with a
 * stored block of the first STORED_HEAD_BYTES (RFC 1951, 3.2.4), the rest
 * deflated at level 6 after it: one valid stream, which any gzip reader
 * inflates to the same bytes, and whose head is readable as it is.
 */
export async function gzipWithStoredHead(bytes: Buffer): Promise<Buffer> {
  const kept = Math.min(STORED_HEAD_BYTES, bytes.length);
  // A raw deflate of the rest starts at a byte boundary with an empty window: no back-reference reaches the
  // stored block, and its last block is the stream's final one.
  const rest = await deflateRawAsync(bytes.subarray(kept), { level: 6 });
  const stored = Buffer.alloc(5);
  stored[0] = 0x00; // BFINAL 0, BTYPE 00 (stored), then padding to the byte
  stored.writeUInt16LE(kept, 1);
  stored.writeUInt16LE(~kept & 0xffff, 3);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(bytes), 0);
  trailer.writeUInt32LE(bytes.length % 2 ** 32, 4);
  return Buffer.concat([GZIP_HEADER, stored, bytes.subarray(0, kept), rest, trailer]);
}

/**
 * The bytes a compressed file's first deflate block holds as they are, when
 * it is a stored block and `packed` (the file's first bytes) reaches its end;
 * null otherwise (another writer's gzip, or too few bytes read). They are
 * exactly the first bytes the whole stream inflates to.
 */
export function storedHead(packed: Buffer): Buffer | null {
  if (!isCompressed(packed) || packed.length < FIRST_BLOCK + 5 || packed[2] !== 0x08 || packed[3] !== 0x00) return null;
  if ((packed[FIRST_BLOCK] & 0x06) !== 0) return null;
  const len = packed.readUInt16LE(FIRST_BLOCK + 1);
  if ((len ^ packed.readUInt16LE(FIRST_BLOCK + 3)) !== 0xffff) return null;
  const start = FIRST_BLOCK + 5;
  return start + len <= packed.length ? packed.subarray(start, start + len) : null;
}

/** The stored head (storedHead) when it holds an envelope's whole head: Waystation's writers' gzip, read as it is. */
export function storedEnvelopeHead(packed: Buffer): Buffer | null {
  const stored = storedHead(packed);
  return stored !== null && stored.length >= Math.min(HEAD_BYTES, STORED_HEAD_BYTES) ? stored : null;
}

/**
 * What the first bytes of a compressed file inflate to so far; null when
 * they do not inflate.
 */
function inflatedHead(packed: Buffer): Buffer | null {
  try {
    return gunzipSync(packed, { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return null;
  }
}

/**
 * How many bytes of a compressed file are read for its head: first a few
 * (gzip's header, the first block's code tables and some text, and
 * inflating more costs more), then more when those did not reach the
 * envelope's head.
 */
const HEAD_READS = [1024, 16 * 1024];

/** How many of a file's first bytes to read when it may be compressed: enough for the head Waystation's writers keep. */
export const FIRST_HEAD_READ = HEAD_READS[0];

/**
 * The first bytes of a version file as written, at least the envelope's head
 * (all a head is read for), inflated when the file is compressed; `read`
 * fills a buffer from the file's start and says how many bytes it read.
 */
export function headFromSync(first: Buffer, size: number, read: (into: Buffer) => number): Buffer {
  if (!isCompressed(first)) return first;
  let head: Buffer | null = null;
  for (const n of HEAD_READS) {
    const want = Math.min(n, size);
    // Bytes the caller read already are not read again: a KiB of them holds the head Waystation's writers keep.
    const got = first.length >= want ? first.subarray(0, want) : fill(Buffer.allocUnsafe(want), read);
    const kept = storedEnvelopeHead(got);
    if (kept !== null) return kept;
    head = inflatedHead(got);
    if (head === null || head.length >= HEAD_BYTES || n >= size) break;
  }
  return head ?? Buffer.alloc(0);
}

/** `into` filled from the file's start by `read`, cut to what it read. */
function fill(into: Buffer, read: (into: Buffer) => number): Buffer {
  return into.subarray(0, read(into));
}

/**
 * headFromSync through a file handle: the head of the version file open as `handle`, `size` bytes long.
 * `first`, the file's first bytes when the caller read them already (FIRST_HEAD_READ of them, or the whole
 * file), are not read again.
 */
export async function readHeadOf(handle: StoreFileHandle, size: number, first?: Buffer): Promise<Buffer> {
  const fromStart = async (n: number) => {
    const buf = Buffer.allocUnsafe(Math.min(n, size));
    return buf.subarray(0, (await handle.read(buf, 0, buf.length, 0)).bytesRead);
  };
  const got = first ?? (await fromStart(FIRST_HEAD_READ));
  if (!isCompressed(got) || storedEnvelopeHead(got) !== null) return headFromSync(got, size, () => 0);
  // Another writer's gzip: the most headFromSync may ask for, read at once, its tries then served from memory.
  const held = await fromStart(HEAD_READS[HEAD_READS.length - 1]);
  return headFromSync(held, size, () => 0);
}

/**
 * Replace the full segment at `abs`, whose bytes are `bytes` as read from the
 * file `read` describes (held open by the caller), by its gzip:
 * written to a temporary file, fsynced, and renamed over it, so a reader
 * finds either form whole. A power cut before the rename leaves the segment as
 * it was (and a temporary file, which readers skip and the recovery report
 * lists as safe to delete). A failure leaves it as it was too: compression saves space, it
 * is never what a save depends on, so it reports instead of throwing.
 */
export async function compressSegment(
  fs: StoreFs,
  abs: string,
  bytes: Buffer,
  read: Pick<Stats, 'dev' | 'ino'>,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  let temp: string | null = null;
  try {
    const packed = await gzipWithStoredHead(bytes);
    temp = await writeTemp(fs, abs, packed, { sync: true });
    // The gzip and its fsync take a while, in which the name can come to hold another file (the task folder
    // removed and a task written anew under its name): that file is not the one compressed, and is left alone.
    // The caller holds the segment open, so no new file can take its inode number meanwhile.
    const now = await fs.lstat(abs);
    if (now.dev !== read.dev || now.ino !== read.ino) {
      await removeQuietly(fs, temp);
      return { ok: false, reason: 'replaced' };
    }
    await commitReplace(fs, temp, abs);
    return { ok: true };
  } catch (err) {
    if (temp !== null) await removeQuietly(fs, temp);
    return { ok: false, reason: errorCode(err) ?? String(err) };
  }
}
