/**
 * The history index: where the chunks of a task's message history lie in its
 * version files (docs/FORMAT.md, "The history index"), so that reading the
 * history goes straight to each chunk's bytes instead of finding the record
 * of the version that carries it and hashing its lines one by one.
 *
 * It is a derived cache, never a record: `versions/history-index.jsonl`,
 * appended without fsync by the writer that saved the chunks, one line per
 * run of chunks it wrote. A reader uses an entry only when the bytes it points
 * to hash to the name of the chunk it is looking for, so an index that is
 * stale, torn, damaged, missing or written by no one (another program's
 * writer maintains none) costs speed, never a wrong answer: the chunk is then
 * found the way every chunk was found before (blob-store.ts).
 */
import path from 'node:path';
import { hash } from 'node:crypto';
import type { Problem } from '../../shared/checkpoint/problem.js';
import { constants } from 'node:fs';
import { READ_FLAGS, type StoreFileHandle, type StoreFs } from './store-fs.js';
import { parseJsonBytes, readBytes, relPath, type ReadContext } from './file-reader.js';
import { inflatedVersionBytes } from './segment-compression.js';
import { VERSIONS_DIR, versionPath } from './version-file.js';
import { BLOB_REF_PATTERN } from '../../shared/checkpoint/schema.js';

export const HISTORY_INDEX_FILE = 'history-index.jsonl';

/** The version of an index line's layout; lines of another version are skipped. */
const LINE_VERSION = 1;

/** Where one chunk's bytes are: the version file (by the version it is named for) and the byte range in it. */
export type ChunkPlace = readonly [file: number, start: number, end: number];

/**
 * One line of the index: a run of chunks, oldest first, each the `prev` of
 * the one after it, the last of them named `head`. Only the newest chunk's
 * name is written; each older one is named by the `prev` of the chunk read
 * after it, so a line costs about fifteen bytes a chunk.
 */
export interface IndexLine {
  head: string;
  chunks: ChunkPlace[];
}

export function historyIndexPath(taskDir: string): string {
  return path.join(taskDir, VERSIONS_DIR, HISTORY_INDEX_FILE);
}

/** The text of one index line, with its line break. */
export function encodeIndexLine(line: IndexLine): string {
  return `${JSON.stringify({ 'history-index': LINE_VERSION, head: line.head, chunks: line.chunks })}\n`;
}

/** The lines of an index file that are whole and well formed, in order; anything else is skipped. */
export function decodeIndexLines(bytes: Buffer): IndexLine[] {
  const out: IndexLine[] = [];
  let start = 0;
  for (let eol = bytes.indexOf(0x0a); eol >= 0; start = eol + 1, eol = bytes.indexOf(0x0a, start)) {
    let doc: unknown;
    try {
      doc = JSON.parse(bytes.subarray(start, eol).toString('utf8'));
    } catch {
      continue;
    }
    const line = doc as { 'history-index'?: unknown; head?: unknown; chunks?: unknown };
    if (line?.['history-index'] !== LINE_VERSION || typeof line.head !== 'string' || !BLOB_REF_PATTERN.test(line.head)) continue;
    if (!Array.isArray(line.chunks) || line.chunks.length === 0 || !line.chunks.every(isPlace)) continue;
    out.push({ head: line.head, chunks: line.chunks as ChunkPlace[] });
  }
  return out;
}

function isPlace(p: unknown): p is ChunkPlace {
  return (
    Array.isArray(p) &&
    p.length === 3 &&
    p.every((n) => Number.isSafeInteger(n)) &&
    (p[0] as number) >= 1 &&
    (p[1] as number) >= 0 &&
    (p[2] as number) > (p[1] as number)
  );
}

type ChunkRead = { ok: true; value: unknown } | { ok: false; problem: Problem };

/**
 * An index decoded: its lines, where each line's head lies, and the span each version file's chunks take. A store
 * keeps the decoded index of the tasks it read last (kept-indexes.ts) and, as the index is appended to, decodes only
 * the lines added since: decoding the whole index of a 10,000-step task (250 KB) took 2 ms of a 3 ms read of the
 * messages one step added. A walk reads through it and never changes what it holds.
 */
export class DecodedIndex {
  readonly lines: IndexLine[] = [];
  /** Where each line's head is: the newest chunk of its run. */
  readonly heads = new Map<string, { line: number; pos: number }>();
  /** For each version file the index names, the bytes that hold every chunk it places there: read at once. */
  readonly spans = new Map<number, { start: number; end: number }>();
  /** The index's bytes decoded, up to the end of their last whole line. */
  private decoded: Buffer = Buffer.alloc(0);

  /** Whether `bytes`, the index as read now, go on from the bytes decoded: appended to, or unchanged. */
  continuedBy(bytes: Buffer): boolean {
    return bytes.length >= this.decoded.length && bytes.subarray(0, this.decoded.length).equals(this.decoded);
  }

  /**
   * Decode the whole lines of `bytes` past those decoded; `bytes` must go on from them (continuedBy). A torn last
   * line is left for when its line break is written.
   */
  extend(bytes: Buffer): this {
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end <= this.decoded.length) return this;
    for (const line of decodeIndexLines(bytes.subarray(this.decoded.length, end))) this.add(line);
    // A copy: the bytes read may be a buffer the file system reuses.
    this.decoded = Buffer.from(bytes.subarray(0, end));
    return this;
  }

  private add(line: IndexLine): void {
    const at = this.lines.push(line) - 1;
    this.heads.set(line.head, { line: at, pos: line.chunks.length - 1 });
    for (const [file, start, end] of line.chunks) {
      const span = this.spans.get(file);
      if (!span) this.spans.set(file, { start, end });
      else {
        span.start = Math.min(span.start, start);
        span.end = Math.max(span.end, end);
      }
    }
  }
}

/**
 * The index of one task, read for one walk of its history: `read(ref)` gives
 * the chunk named `ref` from where the index says it is, checked against its
 * name, or null when the index does not know it or its bytes are not there
 * (the caller then finds the chunk the long way).
 */
export class HistoryIndexReader {
  /**
   * Where the chunks the walk may ask for next are: each line's head (DecodedIndex.heads) until the walk has read
   * it, then the `prev` of each chunk read, noted here.
   */
  private readonly expected = new Map<string, { line: number; pos: number }>();
  /** The line heads this walk has read. */
  private readonly consumed = new Set<string>();
  /**
   * The span of the version file read last: chunks of one file come one after the other, so the file is read
   * once, and only the bytes from its first chunk to its last (a segment's results and envelopes are two
   * thirds of it), where a read a chunk cost a trip to the file system each. Its name is kept for a problem.
   */
  private held: Held | null = null;

  private constructor(
    private readonly ctx: ReadContext,
    private readonly taskDir: string,
    private readonly index: DecodedIndex,
  ) {}

  /**
   * The task's index, or null when it has none that reads. Never throws. Decoded through the store's kept indexes
   * when the context has them (KeptIndexes), else whole.
   */
  static async open(ctx: ReadContext, taskDir: string): Promise<HistoryIndexReader | null> {
    const abs = historyIndexPath(taskDir);
    const raw = await readBytes(ctx, abs);
    if (!raw.ok) return null;
    const index = ctx.indexes ? ctx.indexes.decoded(abs, raw.bytes) : new DecodedIndex().extend(raw.bytes);
    return index.lines.length > 0 ? new HistoryIndexReader(ctx, taskDir, index) : null;
  }

  /** Where the chunk named `ref` is, if the walk may ask for it next. */
  private placeOf(ref: string): { line: number; pos: number } | undefined {
    return this.expected.get(ref) ?? (this.consumed.has(ref) ? undefined : this.index.heads.get(ref));
  }

  /** The chunk `ref`, read where the index places it and checked against its name; null when the index cannot give it. */
  async read(ref: string): Promise<ChunkRead | null> {
    const at = this.placeOf(ref);
    if (!at) return null;
    this.expected.delete(ref);
    this.consumed.add(ref);
    const m = BLOB_REF_PATTERN.exec(ref);
    if (!m) return null;
    const [file, start, end] = this.index.lines[at.line].chunks[at.pos];
    const held = await this.load(file);
    if (!held.bytes || start < held.start || end > held.start + held.bytes.length) return null;
    const slice = held.bytes.subarray(start - held.start, end - held.start);
    // The one check that makes the cache safe to use: the bytes are the chunk only if they hash to its name.
    if (hash('sha256', slice, 'hex') !== m[1]) return null;
    const parsed = parseJsonBytes(held.name, slice);
    if (!parsed.ok) return { ok: false, problem: parsed.problem };
    const prev = (parsed.value as { prev?: unknown } | null)?.prev;
    if (typeof prev === 'string' && at.pos > 0 && !this.placeOf(prev)) this.expected.set(prev, { line: at.line, pos: at.pos - 1 });
    return { ok: true, value: parsed.value };
  }

  /** Drop the bytes held; the walk calls it when it is done. */
  async close(): Promise<void> {
    this.held = null;
  }

  /** The span of version file `file` that holds its chunks (see fetch); the file read last is held. */
  private async load(file: number): Promise<Held> {
    if (this.held?.file !== file) this.held = await this.fetch(file);
    return this.held;
  }

  /**
   * The span of version file `file` that holds its chunks, as far as the file reaches; no bytes when it cannot
   * be read as a regular file within the size limit (a symbolic link is not followed here, nor a file over the
   * limit read: the long way checks where the link leads, and reports the file). A file of up to WHOLE_READ_BYTES
   * (a segment) is read whole in one call and inflated here when compressed. A larger one (a full snapshot of a
   * large plan in a file of its own) is read whole only when too short to hold the span (a compressed segment, or
   * not what the index knew), else at the span alone: a compressed one then reads bytes that do not hash to the
   * chunks, and the walk goes the long way. Inflating on the thread pool and reading ahead cost more than they
   * saved: a trip to the pool and zlib's stream for each of thousands of files of some 10 KB, about four times the
   * processor time of inflating them here.
   */
  private async fetch(file: number): Promise<Held> {
    const abs = versionPath(this.taskDir, file);
    const span = this.index.spans.get(file)!;
    const none: Held = { file, bytes: null, start: 0, name: relPath(this.ctx, abs) };
    const spanOf = (written: Buffer): Held => {
      const start = Math.min(span.start, written.length);
      return { ...none, bytes: written.subarray(start, Math.min(span.end, written.length)), start };
    };
    try {
      const st = await this.ctx.fs.lstat(abs);
      if (!st.isFile() || st.size > this.ctx.maxFileBytes) return none;
      if (st.size < span.end || st.size <= WHOLE_READ_BYTES) {
        const read = await this.ctx.fs.readWholeFile(abs, { maxBytes: this.ctx.maxFileBytes, followLinks: false });
        if (!read.ok) return none;
        const written = inflatedVersionBytes(none.name, read.bytes, this.ctx.maxFileBytes);
        return written.ok ? spanOf(written.bytes) : none;
      }
      return { ...none, bytes: await readSpan(this.ctx.fs, abs, span), start: span.start };
    } catch {
      return none;
    }
  }
}

/** Version files up to this size are read whole for their chunks' span: a segment of deltas is tens of KB. */
const WHOLE_READ_BYTES = 256 * 1024;

/** Bytes [start, end) of the file at `abs` (fewer where it ends before), a symbolic link not followed. */
async function readSpan(fs: StoreFs, abs: string, span: { start: number; end: number }): Promise<Buffer> {
  const handle: StoreFileHandle = await fs.open(abs, READ_FLAGS | constants.O_NOFOLLOW);
  try {
    const buf = Buffer.allocUnsafe(span.end - span.start);
    const got = await handle.read(buf, 0, buf.length, span.start);
    return buf.subarray(0, got.bytesRead);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** A version file's chunk span, read. */
interface Held {
  file: number;
  bytes: Buffer | null;
  start: number;
  name: string;
}

/**
 * What a writer has saved of the history since it last wrote the index, and
 * the writing of it. A writer notes each chunk it commits; the lines are
 * appended when its segment closes and whenever a segment's worth of chunks
 * has gathered, without fsync: the index is derived, and a line lost to a
 * crash only sends readers the long way for the chunks it held.
 */
export class HistoryIndexWriter {
  private lines: IndexLine[] = [];
  private chunks = 0;

  /** Chunk `ref`, whose `prev` is `prev`, committed at bytes [start, end) of the version file named for `file`. */
  note(ref: string, prev: string | null, place: ChunkPlace): void {
    const last = this.lines.at(-1);
    if (last && prev !== null && last.head === prev) {
      last.chunks.push(place);
      last.head = ref;
    } else {
      this.lines.push({ head: ref, chunks: [place] });
    }
    this.chunks++;
  }

  /** Chunks noted and not yet written. */
  get pending(): number {
    return this.chunks;
  }

  /** Append the noted lines to the index. A failure is not reported: readers find the chunks without it. */
  async flush(fs: StoreFs, taskDir: string): Promise<void> {
    if (this.lines.length === 0) return;
    const text = this.lines.map(encodeIndexLine).join('');
    this.lines = [];
    this.chunks = 0;
    await fs.appendFile(historyIndexPath(taskDir), text).catch(() => undefined);
  }
}
