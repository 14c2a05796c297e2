/**
 * Content-addressed blobs: the canonical JSON of a value (a step result or a
 * history chunk), named by the hash of its bytes. Waystation writes each blob
 * into the version file of the save that introduces it; `blobs/<hex>` files
 * (schema 2, other writers) are read as well.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/checkpoint/canonical-json.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { BLOB_REF_PATTERN } from '../../shared/checkpoint/schema.js';
import { parseJsonBytes, readBytes, relPath, type ReadContext } from './file-reader.js';
import { findCarriedBlob, locateRecord, versionWalk, type CarriedBlob } from './version-file.js';
import type { HistoryMark } from './store-types.js';
import { HistoryIndexReader } from './history-index.js';

export const BLOBS_DIR = 'blobs';

export interface EncodedBlob extends CarriedBlob {
  ref: string;
  bytes: Buffer;
}

/**
 * Serialise a value canonically and name it by its hash, as a blob carried
 * by version `version`'s record (the version whose save introduces it).
 */
export function encodeBlob(value: unknown, version: number): EncodedBlob {
  const bytes = Buffer.from(canonicalJson(value), 'utf8');
  const hex = createHash('sha256').update(bytes).digest('hex');
  return { ref: `sha256:${hex}@${version}`, hex, bytes };
}

/** Where a reference points: the blob's hex digest, and the version file carrying it (null: `blobs/<hex>`). */
export interface BlobLocation {
  hex: string;
  version: number | null;
}

/** Parse a blob reference, or null if it is not one. */
export function parseBlobRef(ref: string): BlobLocation | null {
  const m = BLOB_REF_PATTERN.exec(ref);
  return m ? { hex: m[1], version: m[2] === undefined ? null : Number(m[2]) } : null;
}

export function blobPath(taskDir: string, hex: string): string {
  return path.join(taskDir, BLOBS_DIR, hex);
}

/** A chunk of the message history: the messages one save appended, and the chunk before it. */
export interface HistoryChunk {
  prev: string | null;
  messages: unknown[];
}

/**
 * Read a blob and check that its bytes still hash to its name.
 *
 * A loose blob (`blobs/<hex>`) whose bytes hash otherwise was changed after
 * it was written; a version file with no line hashing to the name carries no
 * such blob, or carries it damaged.
 */
export async function readBlobValue(
  ctx: ReadContext,
  taskDir: string,
  ref: string,
): Promise<{ ok: true; value: unknown } | { ok: false; problem: Problem }> {
  const at = parseBlobRef(ref);
  if (!at) {
    return {
      ok: false,
      problem: problem(
        relPath(ctx, taskDir),
        'schema',
        `not a blob reference: ${JSON.stringify(ref)} (expected sha256:<64 hex digits>, optionally @<version>)`,
      ),
    };
  }
  if (at.version !== null) return readCarriedBlob(ctx, taskDir, ref, at.hex, at.version);
  const abs = blobPath(taskDir, at.hex);
  const file = relPath(ctx, abs);
  const raw = await readBytes(ctx, abs);
  if (!raw.ok) return { ok: false, problem: raw.missing ? problem(file, 'unreadable', `blob ${ref} is missing`) : raw.problem };
  const actual = createHash('sha256').update(raw.bytes).digest('hex');
  if (actual !== at.hex)
    return {
      ok: false,
      problem: problem(file, 'invariant', `the blob's bytes hash to ${actual}, not to its name: it was changed after it was written`),
    };
  return parsed(file, raw.bytes);
}

async function readCarriedBlob(
  ctx: ReadContext,
  taskDir: string,
  ref: string,
  hex: string,
  version: number,
): Promise<{ ok: true; value: unknown } | { ok: false; problem: Problem }> {
  const located = await locateRecord(ctx, taskDir, version);
  if (!located.ok) {
    const p = located.problem;
    return {
      ok: false,
      problem: located.missing ? problem(p.file, 'unreadable', `blob ${ref} is missing: version ${version} does not exist`) : p,
    };
  }
  const { abs, bytes, span } = located.value;
  const record = bytes.subarray(span.start, span.end);
  // The lines are searched by their hash, so the envelope need not be parsed: an envelope written across
  // several lines carries no blobs, and none of its lines hashes to a blob's name.
  const eol = span.envelopeEnd === null ? record.indexOf(0x0a) : span.envelopeEnd - span.start;
  const line = eol < 0 ? null : findCarriedBlob(record, eol, hex);
  const file = relPath(ctx, abs);
  if (!line) {
    return {
      ok: false,
      problem: problem(
        file,
        'invariant',
        `version ${version} carries no blob whose bytes hash to ${hex} (${ref}): it was never there, or its line was changed after it was written`,
      ),
    };
  }
  return parsed(file, line);
}

function parsed(file: string, bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; problem: Problem } {
  const json = parseJsonBytes(file, bytes);
  return json.ok ? { ok: true, value: json.value } : { ok: false, problem: json.problem };
}

/**
 * Follow a history chain from its head and return the messages oldest first.
 *
 * Each chunk names the one before it, so the files are read one after the
 * other, with versionWalk (10,000 steps: 10,000 records). A chunk the
 * task's history index places is read from there, its bytes checked against
 * its name (history-index.ts); any other is found in the record of the
 * version that carries it.
 *
 * `count` bounds the walk, so a chain that loops back on itself cannot hang a reader.
 *
 * With `after`, a history the reader already holds: when the chain passes
 * through `after.head` with exactly `after.count` messages up to it, the walk
 * stops there and only the messages after it are returned, from index
 * `after.count`. Chunks are named by the hash of their bytes, which include
 * the name of the chunk before, so meeting that name means the reader's
 * messages are this chain's first ones. Otherwise (the history was rewritten,
 * or is an older version's) every message is returned, from 0.
 */
export async function readHistoryChain(
  ctx: ReadContext,
  taskDir: string,
  head: string | null,
  count: number,
  after?: HistoryMark,
): Promise<HistoryChainRead> {
  // Every chunk of the chain was carried by a version no newer than the checkpoint naming its head.
  const { ctx: reader, pace } = versionWalk(ctx, { listed: true });
  // Opened at the first chunk the walk reads: a reader that holds the history up to its head reads none.
  const index: { opening: Promise<HistoryIndexReader | null> | null } = { opening: null };
  try {
    return await walkHistoryChain(
      async (ref) => {
        await pace();
        const opened = await (index.opening ??= HistoryIndexReader.open(reader, taskDir));
        return (await opened?.read(ref)) ?? readBlobValue(reader, taskDir, ref);
      },
      relPath(ctx, taskDir),
      head,
      count,
      after,
    );
  } finally {
    await (await index.opening)?.close();
  }
}

export type HistoryChainRead = { ok: true; messages: unknown[]; from: number } | { ok: false; problem: Problem };

/**
 * Walk a history chain from `head` back through `prev`, reading each chunk
 * with `readChunk`: the walk readHistoryChain does, over any store's blobs.
 * `where` names the task in a problem.
 */
export async function walkHistoryChain(
  readChunk: (ref: string) => Promise<{ ok: true; value: unknown } | { ok: false; problem: Problem }>,
  where: string,
  head: string | null,
  count: number,
  after?: HistoryMark,
): Promise<HistoryChainRead> {
  const chunks: unknown[][] = [];
  let total = 0;
  let from = 0;
  let ref = head;
  while (ref !== null) {
    if (after && after.head === ref && after.count === count - total) {
      from = after.count;
      break;
    }
    if (total >= count && chunks.length > 0) break;
    const read = await readChunk(ref);
    if (!read.ok) return read;
    const chunk = read.value as Partial<HistoryChunk> | null;
    if (!chunk || typeof chunk !== 'object' || !Array.isArray(chunk.messages) || !(chunk.prev === null || typeof chunk.prev === 'string')) {
      return {
        ok: false,
        problem: problem(`${where} (${ref})`, 'schema', 'not a history chunk: expected {"prev": <ref or null>, "messages": [...]}'),
      };
    }
    chunks.push(chunk.messages);
    total += chunk.messages.length;
    ref = chunk.prev;
  }
  if (from + total !== count) {
    return {
      ok: false,
      problem: problem(where, 'invariant', `the history chain holds ${total} messages but the checkpoint says ${count}`),
    };
  }
  const messages: unknown[] = [];
  for (let i = chunks.length - 1; i >= 0; i--) for (const m of chunks[i]) messages.push(m);
  return { ok: true, messages, from };
}
