/**
 * Content-addressed blobs: `blobs/<sha256 hex>` holds the canonical JSON of a
 * value (a step result or a history chunk), named by the hash of its bytes.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/checkpoint/canonical-json.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { parseJsonBytes, readBytes, relPath, type ReadContext } from './file-reader.js';

export const BLOBS_DIR = 'blobs';
const REF = /^sha256:([0-9a-f]{64})$/;

export interface EncodedBlob {
  ref: string;
  hex: string;
  bytes: Buffer;
}

/** Serialise a value canonically and name it by its hash. */
export function encodeBlob(value: unknown): EncodedBlob {
  const bytes = Buffer.from(canonicalJson(value), 'utf8');
  const hex = createHash('sha256').update(bytes).digest('hex');
  return { ref: `sha256:${hex}`, hex, bytes };
}

/** The hex digest of a `sha256:<hex>` reference, or null if it is not one. */
export function refHex(ref: string): string | null {
  return REF.exec(ref)?.[1] ?? null;
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
 * A mismatch means the file was changed or damaged after it was written.
 */
export async function readBlobValue(ctx: ReadContext, taskDir: string, ref: string): Promise<{ ok: true; value: unknown } | { ok: false; problem: Problem }> {
  const hex = refHex(ref);
  if (!hex) return { ok: false, problem: problem(relPath(ctx, path.join(taskDir, BLOBS_DIR)), 'schema', `not a blob reference: ${JSON.stringify(ref)} (expected sha256:<64 hex digits>)`) };
  const abs = blobPath(taskDir, hex);
  const file = relPath(ctx, abs);
  const raw = await readBytes(ctx, abs);
  if (!raw.ok) return { ok: false, problem: raw.missing ? problem(file, 'unreadable', `blob ${ref} is missing`) : raw.problem };
  const actual = createHash('sha256').update(raw.bytes).digest('hex');
  if (actual !== hex) return { ok: false, problem: problem(file, 'invariant', `the blob's bytes hash to ${actual}, not to its name: it was changed after it was written`) };
  const parsed = parseJsonBytes(file, raw.bytes);
  return parsed.ok ? { ok: true, value: parsed.value } : { ok: false, problem: parsed.problem };
}

/**
 * Follow a history chain from its head and return the messages oldest first.
 *
 * `count` bounds the walk, so a chain that loops back on itself cannot hang a reader.
 */
export async function readHistoryChain(
  ctx: ReadContext,
  taskDir: string,
  head: string | null,
  count: number,
): Promise<{ ok: true; messages: unknown[] } | { ok: false; problem: Problem }> {
  const chunks: unknown[][] = [];
  let total = 0;
  let ref = head;
  while (ref !== null) {
    if (total >= count && chunks.length > 0) break;
    const read = await readBlobValue(ctx, taskDir, ref);
    if (!read.ok) return read;
    const chunk = read.value as Partial<HistoryChunk> | null;
    if (!chunk || typeof chunk !== 'object' || !Array.isArray(chunk.messages) || !(chunk.prev === null || typeof chunk.prev === 'string')) {
      return { ok: false, problem: problem(relPath(ctx, blobPath(taskDir, refHex(ref) ?? '')), 'schema', 'not a history chunk: expected {"prev": <ref or null>, "messages": [...]}') };
    }
    chunks.push(chunk.messages);
    total += chunk.messages.length;
    ref = chunk.prev;
  }
  if (total !== count) {
    return { ok: false, problem: problem(relPath(ctx, path.join(taskDir, BLOBS_DIR)), 'invariant', `the history chain holds ${total} messages but the checkpoint says ${count}`) };
  }
  const messages: unknown[] = [];
  for (let i = chunks.length - 1; i >= 0; i--) for (const m of chunks[i]) messages.push(m);
  return { ok: true, messages };
}
