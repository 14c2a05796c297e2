/**
 * Reading one file of the checkpoint directory without ever crashing on it.
 *
 * Every failure becomes a Problem: missing, unreadable, too large, not UTF-8,
 * truncated or invalid JSON, or a symlink that leads outside the root. Reads
 * never write.
 */
import path from 'node:path';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { errorCode, settledReads, syncReadsOf, type StoreFs, type WholeFile } from './store-fs.js';
import type { SegmentMemo, VersionNames } from './version-file.js';
import type { VersionHeads } from './version-heads.js';
import type { KeptCheckpoints, KeptSnapshot } from './kept-checkpoints.js';
import type { KeptIndexes } from './kept-indexes.js';

/** What a reader needs: the file system, the root (resolved) and the size limit. */
export interface ReadContext {
  fs: StoreFs;
  /** The root as given; problems name files relative to it. */
  root: string;
  /** The root with symlinks resolved, for the outside-root check. */
  realRoot: string;
  maxFileBytes: number;
  /** The most of an event log one read goes through (event-log.ts); a larger log is a warning on its task. */
  maxEventLogBytes?: number;
  /** A sequential reader's last version file (see SegmentMemo); none for other readers. */
  segments?: SegmentMemo;
  /** A walk's listing of a task's versions/ (see VersionNames); none for other readers. */
  versionNames?: VersionNames;
  /** What the heads of the version files read so far hold, kept for the store's lifetime (version-heads.ts). */
  heads?: VersionHeads;
  /**
   * The version files whose identity this read already found to be what `heads` keeps of them: one lstat a file a
   * read, where the gap check asks of each file both its ends and its head. Made for one read (readNativeTask).
   */
  identified?: Set<string>;
  /** The hot snapshots of the tasks this store opened last, parsed and checked (kept-checkpoints.ts). */
  kept?: KeptCheckpoints;
  /** The history indexes this store read last, decoded (kept-indexes.ts). */
  indexes?: KeptIndexes;
}

/** Files a sequential reader reads between two turns of the event loop. */
const SEQUENTIAL_SLICE = 256;

/**
 * For a reader that reads many small files one after the other (the version
 * files of a rebuild, the chunks of a history chain): `ctx` with its reads
 * answered synchronously where the file system has such reads (a trip
 * through the thread pool per file costs more than reading it from the page
 * cache, see settledReads), and `pace`, awaited before each file, which
 * yields to the event loop every SEQUENTIAL_SLICE files so that nothing else
 * waits long behind a long read.
 */
export function sequentialReads(ctx: ReadContext): { ctx: ReadContext; pace: () => Promise<void> } {
  const sync = syncReadsOf(ctx.fs);
  if (!sync && !ctx.fs.settled) return { ctx, pace: () => Promise.resolve() };
  let files = 0;
  return {
    ctx: sync ? { ...ctx, fs: settledReads(ctx.fs, sync) } : ctx,
    pace: () => (++files % SEQUENTIAL_SLICE === 0 ? nextTurn() : Promise.resolve()),
  };
}

/**
 * True when a path exists; errors other than "not there" count as present (a
 * read that follows reports them). Asked synchronously where the StoreFs can
 * answer so (see sequentialReads): a lookup that usually finds nothing, made
 * on every save and for every segment, costs less than the trip through the
 * thread pool.
 */
export async function exists(ctx: ReadContext, abs: string): Promise<boolean> {
  try {
    const sync = syncReadsOf(ctx.fs);
    return sync ? sync.exists(abs) : await ctx.fs.exists(abs);
  } catch {
    return true;
  }
}

export type FileRead<T> =
  | {
      ok: true;
      value: T;
      bytes: number;
      mtimeMs: number;
      /** The snapshot kept of these bytes (readKeptJsonFile), whose checks are made once; `value` is its frozen doc. */
      kept?: KeptSnapshot;
    }
  | { ok: false; missing: boolean; problem: Problem };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A path relative to the root, with forward slashes, for problems. */
export function relPath(ctx: ReadContext, abs: string): string {
  // Paths under the root are made by joining onto it, so cutting the prefix is
  // enough; path.relative normalises both sides, a cost paid for every task of a listing.
  const prefix = ctx.root.endsWith(path.sep) ? ctx.root : ctx.root + path.sep;
  const rel = abs.startsWith(prefix) ? abs.slice(prefix.length) : path.relative(ctx.root, abs);
  return (path.sep === '/' ? rel : rel.split(path.sep).join('/')) || '.';
}

/** True when `real` (a resolved path) is the root or inside it. */
export function insideRoot(ctx: ReadContext, real: string): boolean {
  const rel = path.relative(ctx.realRoot, real);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolve a symlink and check that it stays inside the root.
 *
 * Returns the resolved path, or a problem: `outside-root`, or `unreadable`
 * for a link cycle (realpath gives up with ELOOP, so cycles never hang).
 */
export async function resolveLink(
  ctx: ReadContext,
  abs: string,
): Promise<{ ok: true; real: string } | { ok: false; missing: boolean; problem: Problem }> {
  const file = relPath(ctx, abs);
  let real: string;
  try {
    real = await ctx.fs.realpath(abs);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ELOOP')
      return {
        ok: false,
        missing: false,
        problem: problem(file, 'unreadable', 'a symlink cycle: the link never reaches a file; nothing was read'),
      };
    if (code === 'ENOENT')
      return { ok: false, missing: false, problem: problem(file, 'unreadable', 'a symlink to nothing (the target does not exist)') };
    return { ok: false, missing: false, problem: problem(file, 'unreadable', `cannot resolve the symlink (${code ?? String(err)})`) };
  }
  if (!insideRoot(ctx, real)) {
    return {
      ok: false,
      missing: false,
      problem: problem(file, 'outside-root', `a symlink to ${real}, outside the checkpoint directory; not followed`),
    };
  }
  return { ok: true, real };
}

/** Read a file's bytes, within the size limit, refusing symlinks that leave the root. */
export async function readBytes(
  ctx: ReadContext,
  abs: string,
): Promise<{ ok: true; bytes: Buffer; mtimeMs: number } | { ok: false; missing: boolean; problem: Problem }> {
  const file = relPath(ctx, abs);
  let read: WholeFile;
  try {
    // Not following a final symlink makes the common case (a plain file) cost nothing extra; only links take the realpath check.
    read = await ctx.fs.readWholeFile(abs, { maxBytes: ctx.maxFileBytes, followLinks: false });
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { ok: false, missing: true, problem: problem(file, 'unreadable', 'the file does not exist') };
    if (code !== 'ELOOP')
      return {
        ok: false,
        missing: false,
        problem: problem(file, 'unreadable', `cannot read the file (${code ?? String(err)}); nothing was changed`),
      };
    const link = await resolveLink(ctx, abs);
    if (!link.ok) return link;
    try {
      read = await ctx.fs.readWholeFile(link.real, { maxBytes: ctx.maxFileBytes, followLinks: true });
    } catch (err2) {
      return {
        ok: false,
        missing: false,
        problem: problem(file, 'unreadable', `cannot read the file (${errorCode(err2) ?? String(err2)})`),
      };
    }
  }
  if (read.ok) return { ok: true, bytes: read.bytes, mtimeMs: read.mtimeMs };
  if (read.reason === 'not-a-file') return { ok: false, missing: false, problem: problem(file, 'unreadable', 'not a regular file') };
  return {
    ok: false,
    missing: false,
    problem: problem(file, 'too-large', `${read.size} bytes, over the ${ctx.maxFileBytes}-byte limit for one file; not loaded`),
  };
}

/**
 * A file's name for a problem or a refusal, or a function that builds it:
 * where the name is needed only when something is wrong, a save or a
 * listing of many files does not build it for the files that are fine.
 */
export type LazyName = string | (() => string);

/** The name a LazyName stands for. */
export function nameOf(name: LazyName): string {
  return typeof name === 'string' ? name : name();
}

/** Decode UTF-8 strictly and parse JSON, classifying failures. */
export function parseJsonBytes(
  name: LazyName,
  bytes: Uint8Array,
): { ok: true; value: unknown; text: string } | { ok: false; problem: Problem } {
  const file = () => nameOf(name);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    const at = firstBadUtf8(bytes);
    return {
      ok: false,
      problem: problem(file(), 'not-utf8', `bytes that are not valid UTF-8 (first at byte ${at}); the file was not loaded`),
    };
  }
  try {
    const value: unknown = JSON.parse(text);
    // JSON.parse is iterative, but serialising, cloning, validating and diffing a value recurse: a document
    // nested thousands deep would overflow the stack of whoever reads it next. It takes two bytes a level.
    if (text.length > 2 * MAX_JSON_DEPTH && opensMoreThan(text, MAX_JSON_DEPTH) && nestedDeeperThan(value, MAX_JSON_DEPTH)) {
      return {
        ok: false,
        problem: problem(file(), 'too-large', `nested more than ${MAX_JSON_DEPTH} levels deep, which no checkpoint file is; not loaded`),
      };
    }
    return { ok: true, value, text };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (looksTruncated(text, message)) {
      return {
        ok: false,
        problem: problem(file(), 'truncated', `the JSON ends early after ${bytes.length} bytes: a torn or partial write`),
      };
    }
    return { ok: false, problem: problem(file(), 'invalid-json', `not valid JSON (${message})`) };
  }
}

/** How deep a file's JSON may nest: far beyond any checkpoint, far below what overflows a recursive reader. */
export const MAX_JSON_DEPTH = 512;

/**
 * True when the text has more than `limit` opening brackets, counting those
 * inside strings too: without that many, nothing in it can nest deeper than
 * `limit`, and the walk below (which allocates as it goes) is skipped. A
 * listing parses 10,000 files of a few dozen brackets each.
 */
export function opensMoreThan(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) if (++count > limit) return true;
  }
  return false;
}

/** True when a parsed value nests more than `limit` arrays or objects deep; walked with a stack of its own. */
export function nestedDeeperThan(root: unknown, limit: number): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const d = depths.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') {
        values.push(child);
        depths.push(d + 1);
      }
    }
  }
  return false;
}

/** Read and parse a JSON file. */
export async function readJsonFile(ctx: ReadContext, abs: string): Promise<FileRead<unknown>> {
  const raw = await readBytes(ctx, abs);
  return raw.ok ? parsedRead(ctx, abs, raw) : raw;
}

/**
 * readJsonFile through the context's kept snapshots (kept-checkpoints.ts): bytes the store kept are not parsed
 * again, and a document `keep` accepts is kept, frozen, for the next read. Without kept snapshots, readJsonFile.
 */
export async function readKeptJsonFile(ctx: ReadContext, abs: string, keep: (doc: unknown) => boolean): Promise<FileRead<unknown>> {
  if (!ctx.kept) return readJsonFile(ctx, abs);
  const raw = await readBytes(ctx, abs);
  if (!raw.ok) return raw;
  const found = ctx.kept.match(abs, raw.bytes);
  if (found) return { ok: true, value: found.doc, bytes: raw.bytes.length, mtimeMs: raw.mtimeMs, kept: found };
  const read = parsedRead(ctx, abs, raw);
  // A copy: the bytes read may be a buffer the file system reuses.
  const kept = read.ok && keep(read.value) ? ctx.kept.keep(abs, Buffer.from(raw.bytes), read.value) : null;
  return kept && read.ok ? { ...read, kept } : read;
}

/** The FileRead of bytes read from `abs`: their JSON, or why they are not JSON. */
function parsedRead(ctx: ReadContext, abs: string, raw: { bytes: Buffer; mtimeMs: number }): FileRead<unknown> {
  const parsed = parseJsonBytes(() => relPath(ctx, abs), raw.bytes);
  if (!parsed.ok) return { ok: false, missing: false, problem: parsed.problem };
  return { ok: true, value: parsed.value, bytes: raw.bytes.length, mtimeMs: raw.mtimeMs };
}

/**
 * A parse error at the very end of the text (or an empty file) is a torn
 * write; anywhere else the file is simply not JSON.
 */
function looksTruncated(text: string, message: string): boolean {
  if (text.trim() === '') return true;
  if (/end of JSON input/i.test(message)) return true;
  const pos = /position (\d+)/.exec(message);
  if (/Unterminated string/i.test(message) && pos) return true;
  return pos !== null && Number(pos[1]) >= text.trimEnd().length;
}

/** Offset of the first byte that breaks UTF-8, for the problem message. */
function firstBadUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > bytes.length) return i;
    for (let k = 1; k < len; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    i += len;
  }
  // Overlongs and surrogates pass the quick scan; the decoder still rejected the file.
  return 0;
}
