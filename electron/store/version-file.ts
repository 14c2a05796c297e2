/**
 * Version files: `versions/00000001.json`, each a full snapshot or a delta
 * against the version before it, with the blobs that version introduced on
 * the lines after its envelope; and the rebuilding of any version from them.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { applyDiff, DiffApplyError, type DiffOp } from '../../shared/diff/json-diff.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { parseJsonBytes, readBytes, relPath, sequentialReads, type ReadContext } from './file-reader.js';

export const VERSIONS_DIR = 'versions';
const NAME = /^(\d{8})\.json$/;

/** `00000042.json` for version 42. */
export function versionFileName(version: number): string {
  return `${String(version).padStart(8, '0')}.json`;
}

/** The version number of a version file name, or null for anything else (temp files included). */
export function parseVersionFileName(name: string): number | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const n = Number(m[1]);
  return n > 0 ? n : null;
}

export function versionPath(taskDir: string, version: number): string {
  return path.join(taskDir, VERSIONS_DIR, versionFileName(version));
}

export type Envelope =
  | { format: 'waystation-version'; version: number; kind: 'full'; checkpoint: unknown }
  | { format: 'waystation-version'; version: number; kind: 'delta'; base: number; ops: DiffOp[] };

/** A blob a version file carries: the hex SHA-256 of its bytes, and the bytes (canonical JSON, one line). */
export interface CarriedBlob {
  hex: string;
  bytes: Uint8Array;
}

/** A version file's bytes, and how many of them are the envelope line (what a rebuild parses). */
export interface EncodedVersion {
  bytes: Buffer;
  envelopeBytes: number;
}

/**
 * A full envelope around already-serialised checkpoint JSON (its UTF-8 bytes).
 *
 * Built by concatenation so the checkpoint is serialised once per save, and
 * with `kind` among the first bytes so a reader can tell full from delta by
 * the file's head.
 */
export function encodeFull(version: number, checkpointJson: Uint8Array, blobs: readonly CarriedBlob[] = []): EncodedVersion {
  return withCarried([fullHead(version), checkpointJson], blobs);
}

/** Bytes of the full envelope line of `version` around a checkpoint of `checkpointBytes` bytes, without building it. */
export function fullEnvelopeBytes(version: number, checkpointBytes: number): number {
  return fullHead(version).length + checkpointBytes + 1;
}

function fullHead(version: number): Buffer {
  return Buffer.from(`{"format":"waystation-version","version":${version},"kind":"full","checkpoint":`);
}

/**
 * A delta envelope. The ops' `old` values are dropped: the base version holds
 * them, and a UI diffing two versions computes them afresh.
 */
export function encodeDelta(version: number, ops: readonly DiffOp[], blobs: readonly CarriedBlob[] = []): EncodedVersion {
  const slim = ops.map((o) => (o.op === 'remove' ? { op: o.op, path: o.path } : { op: o.op, path: o.path, value: o.value }));
  return withCarried([Buffer.from(`{"format":"waystation-version","version":${version},"kind":"delta","base":${version - 1},"ops":${JSON.stringify(slim)}`)], blobs);
}

const NEWLINE = 0x0a;

/**
 * Close the envelope and append one line per carried blob. The blobs ride in
 * the version's own file, so they are committed, made durable and lost with
 * it: nothing else is written per save, and a save that loses a race leaves
 * nothing behind. The envelope does not list them: the references in the
 * checkpoint name them (`@<version>`), and each line's hash is its name.
 */
function withCarried(envelopeOpen: Uint8Array[], blobs: readonly CarriedBlob[]): EncodedVersion {
  const parts: Uint8Array[] = [...envelopeOpen, CLOSE];
  const envelopeBytes = parts.reduce((n, p) => n + p.length, 0);
  if (blobs.length > 0) {
    for (const b of blobs) parts.push(LINE_BREAK, b.bytes);
    parts.push(LINE_BREAK);
  }
  return { bytes: Buffer.concat(parts), envelopeBytes };
}

const CLOSE = Buffer.from('}');
const LINE_BREAK = Buffer.from('\n');

/** Check that parsed JSON is the envelope of `version`. */
export function decodeEnvelope(doc: unknown, version: number, file: string): { ok: true; envelope: Envelope } | { ok: false; problem: Problem } {
  const bad = (what: string) => ({ ok: false as const, problem: problem(file, 'schema', `not a version envelope: ${what}`) });
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return bad('expected a JSON object');
  const e = doc as Record<string, unknown>;
  if (e.format !== 'waystation-version') return bad(`format: expected "waystation-version", got ${JSON.stringify(e.format)}`);
  if (e.version !== version) {
    return { ok: false, problem: problem(file, 'invariant', `the file is named for version ${version} but holds version ${JSON.stringify(e.version)}`) };
  }
  if (e.kind === 'full') {
    if (typeof e.checkpoint !== 'object' || e.checkpoint === null) return bad('checkpoint: expected an object');
    return { ok: true, envelope: e as Envelope };
  }
  if (e.kind === 'delta') {
    if (e.base !== version - 1) return bad(`base: expected ${version - 1}, got ${JSON.stringify(e.base)}`);
    if (!Array.isArray(e.ops)) return bad('ops: expected an array');
    return { ok: true, envelope: e as Envelope };
  }
  return bad(`kind: expected "full" or "delta", got ${JSON.stringify(e.kind)}`);
}

/** A version file as read: its envelope, and the bytes its carried blobs are found in. */
export interface VersionFile {
  envelope: Envelope;
  /** Bytes of the envelope line (the whole file when it carries no blobs). */
  envelopeBytes: number;
  /** The whole file. */
  bytes: Buffer;
}

/**
 * Where a version file's envelope ends: at the first line break when the
 * first line is a JSON document on its own (the file may then carry blobs
 * on the lines after it), else at the end of the file (an envelope another
 * program wrote across several lines, which carries none).
 */
export function parseVersionBytes(file: string, bytes: Buffer): { ok: true; value: unknown; envelopeBytes: number } | { ok: false; problem: Problem } {
  const eol = bytes.indexOf(NEWLINE);
  if (eol >= 0 && eol < bytes.length - 1) {
    const head = parseJsonBytes(file, bytes.subarray(0, eol));
    if (head.ok) return { ok: true, value: head.value, envelopeBytes: eol };
  }
  const whole = parseJsonBytes(file, bytes);
  return whole.ok ? { ok: true, value: whole.value, envelopeBytes: bytes.length } : whole;
}

/** Read and decode version `version`'s file. Never throws on a bad file. */
export async function readVersionFile(
  ctx: ReadContext,
  taskDir: string,
  version: number,
): Promise<{ ok: true; value: VersionFile } | { ok: false; problem: Problem; missing: boolean }> {
  const abs = versionPath(taskDir, version);
  const raw = await readBytes(ctx, abs);
  if (!raw.ok) return { ok: false, problem: raw.problem, missing: raw.missing };
  const file = relPath(ctx, abs);
  const parsed = parseVersionBytes(file, raw.bytes);
  if (!parsed.ok) return { ok: false, problem: parsed.problem, missing: false };
  const env = decodeEnvelope(parsed.value, version, file);
  if (!env.ok) return { ok: false, problem: env.problem, missing: false };
  return { ok: true, value: { envelope: env.envelope, envelopeBytes: parsed.envelopeBytes, bytes: raw.bytes } };
}

/**
 * The bytes of the blob named `hex` among the lines after a version file's
 * envelope, found by hashing each line: what is returned is checked by
 * construction. Null when no line hashes to `hex`.
 */
export function findCarriedBlob(bytes: Buffer, envelopeBytes: number, hex: string): Buffer | null {
  let start = envelopeBytes + 1;
  while (start < bytes.length) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      const line = bytes.subarray(start, end);
      if (createHash('sha256').update(line).digest('hex') === hex) return line;
    }
    start = end + 1;
  }
  return null;
}

export interface RebuiltVersion {
  /** The checkpoint JSON of the version, before migration and validation. */
  doc: unknown;
  /** Bytes of the envelope of the full snapshot the rebuild started from. */
  fullBytes: number;
  /** Bytes of the delta envelopes after that snapshot, up to and including this version. */
  deltaBytes: number;
  /** The version number of that full snapshot. */
  fullVersion: number;
}

/**
 * Rebuild version `version` of the task in `taskDir`: walk back to the
 * nearest full snapshot, then apply the deltas forward.
 *
 * `known`, an older version of the same task already rebuilt, ends the walk
 * when it is reached before a full snapshot: rebuilding several versions
 * oldest first reads each file once.
 *
 * Never throws on bad files; returns the problems that stopped the rebuild.
 */
export async function rebuildVersion(
  ctx: ReadContext,
  taskDir: string,
  version: number,
  known?: { version: number; rebuilt: RebuiltVersion },
): Promise<{ ok: true; value: RebuiltVersion } | { ok: false; problems: Problem[]; missing: boolean }> {
  const deltas: { version: number; ops: DiffOp[] }[] = [];
  let deltaBytes = 0;
  // Up to a few thousand small files, one after the other.
  const { ctx: reader, pace } = sequentialReads(ctx);
  for (let v = version; v >= 1; v--) {
    if (known && v === known.version && v < version) {
      const applied = applyDeltas(ctx, taskDir, known.rebuilt.doc, deltas);
      if (!applied.ok) return applied;
      const { fullBytes, fullVersion } = known.rebuilt;
      return { ok: true, value: { doc: applied.doc, fullBytes, deltaBytes: known.rebuilt.deltaBytes + deltaBytes, fullVersion } };
    }
    await pace();
    const read = await readVersionFile(reader, taskDir, v);
    if (!read.ok) {
      if (read.missing) {
        const abs = versionPath(taskDir, v);
        const p = problem(relPath(ctx, abs), 'missing-version', v === version ? `version ${v} does not exist` : `version ${v} is missing, so version ${version} cannot be rebuilt`);
        return { ok: false, problems: [p], missing: v === version };
      }
      return { ok: false, problems: [read.problem], missing: false };
    }
    const { envelope } = read.value;
    if (envelope.kind === 'full') {
      const applied = applyDeltas(ctx, taskDir, envelope.checkpoint, deltas);
      if (!applied.ok) return applied;
      return { ok: true, value: { doc: applied.doc, fullBytes: read.value.envelopeBytes, deltaBytes, fullVersion: v } };
    }
    deltas.push({ version: v, ops: envelope.ops });
    deltaBytes += read.value.envelopeBytes;
  }
  return { ok: false, problems: [problem(relPath(ctx, versionPath(taskDir, 1)), 'invariant', 'version 1 is not a full snapshot')], missing: false };
}

/** Apply deltas collected newest first onto `doc`, oldest first. */
function applyDeltas(
  ctx: ReadContext,
  taskDir: string,
  doc: unknown,
  deltas: readonly { version: number; ops: DiffOp[] }[],
): { ok: true; doc: unknown } | { ok: false; problems: Problem[]; missing: false } {
  let out = doc;
  for (let i = deltas.length - 1; i >= 0; i--) {
    try {
      out = applyDiff(out, deltas[i].ops);
    } catch (err) {
      const file = relPath(ctx, versionPath(taskDir, deltas[i].version));
      const why = err instanceof DiffApplyError ? err.message : String(err);
      return { ok: false, problems: [problem(file, 'invariant', `the delta does not fit version ${deltas[i].version - 1}: ${why}`)], missing: false };
    }
  }
  return { ok: true, doc: out };
}
