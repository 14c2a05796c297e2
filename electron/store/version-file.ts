/**
 * Version files: `versions/00000001.json`, each a full snapshot or a delta
 * against the version before it, with the blobs that version introduced on
 * the lines after its envelope; and the rebuilding of any version from them.
 *
 * A file written by the holder of the task's lease is a segment: its first
 * version's record, then the records of the versions after it, appended one
 * save at a time, each sealed by a line that carries the hash of its bytes
 * (version-records.ts). A version is found in the file named for it, or else
 * in the nearest file before it.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { applyDiff, DiffApplyError, type DiffOp } from '../../shared/diff/json-diff.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { exists, parseJsonBytes, relPath, sequentialReads, type ReadContext } from './file-reader.js';
import { readVersionBytes } from './segment-compression.js';
import {
  parseSegment,
  recordHead,
  SEAL_MISMATCH,
  sealMatches,
  SEGMENT_VERSIONS,
  sealRecord,
  type RecordSpan,
  type Segment,
} from './version-records.js';
import { childPath } from './child-path.js';

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
  return childPath(taskDir, VERSIONS_DIR, versionFileName(version));
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
  /** Where each carried blob's line lies in `bytes`, [start, end) without its line break, in the order given. */
  blobSpans: (readonly [number, number])[];
}

/**
 * A full envelope around already-serialised checkpoint JSON (its UTF-8 bytes).
 *
 * Built by concatenation so the checkpoint is serialised once per save, and
 * with `kind` among the first bytes so a reader can tell full from delta by
 * the file's head.
 */
export function encodeFull(
  version: number,
  checkpointJson: Uint8Array,
  blobs: readonly CarriedBlob[] = [],
  sealed = false,
): EncodedVersion {
  return withCarried(
    [Buffer.from(`${recordHead(version, 'full', sealed ? blobs.length : null)}"checkpoint":`), checkpointJson],
    blobs,
    sealed ? version : null,
  );
}

/** Bytes of the full envelope line of `version` around a checkpoint of `checkpointBytes` bytes, without building it. */
export function fullEnvelopeBytes(version: number, checkpointBytes: number): number {
  return recordHead(version, 'full', null).length + '"checkpoint":'.length + checkpointBytes + 1;
}

/**
 * A delta envelope. The ops' `old` values are dropped: the base version holds
 * them, and a UI diffing two versions computes them afresh.
 */
export function encodeDelta(version: number, ops: readonly DiffOp[], blobs: readonly CarriedBlob[] = [], sealed = false): EncodedVersion {
  const slim = ops.map((o) => (o.op === 'remove' ? { op: o.op, path: o.path } : { op: o.op, path: o.path, value: o.value }));
  const head = recordHead(version, 'delta', sealed ? blobs.length : null);
  return withCarried([Buffer.from(`${head}"base":${version - 1},"ops":${JSON.stringify(slim)}`)], blobs, sealed ? version : null);
}

const NEWLINE = 0x0a;

/**
 * Close the envelope and append one line per carried blob. The blobs ride in
 * the version's own file, so they are committed, made durable and lost with
 * it: nothing else is written per save, and a save that loses a race leaves
 * nothing behind. The envelope does not list them: the references in the
 * checkpoint name them (`@<version>`), and each line's hash is its name.
 *
 * With `sealVersion`, the record of a segment: every line ends in a line
 * break, and a seal line follows (version-records.ts).
 */
function withCarried(envelopeOpen: Uint8Array[], blobs: readonly CarriedBlob[], sealVersion: number | null): EncodedVersion {
  const parts: Uint8Array[] = [...envelopeOpen, CLOSE];
  const envelopeBytes = parts.reduce((n, p) => n + p.length, 0);
  const blobSpans: (readonly [number, number])[] = [];
  if (blobs.length > 0 || sealVersion !== null) {
    let at = envelopeBytes;
    for (const b of blobs) {
      parts.push(LINE_BREAK, b.bytes);
      blobSpans.push([at + 1, at + 1 + b.bytes.length]);
      at += 1 + b.bytes.length;
    }
    parts.push(LINE_BREAK);
  }
  const record = Buffer.concat(parts);
  return { bytes: sealVersion === null ? record : sealRecord(record, sealVersion), envelopeBytes, blobSpans };
}

const CLOSE = Buffer.from('}');
const LINE_BREAK = Buffer.from('\n');

/** Check that parsed JSON is the envelope of `version`. */
export function decodeEnvelope(
  doc: unknown,
  version: number,
  file: string,
): { ok: true; envelope: Envelope } | { ok: false; problem: Problem } {
  const bad = (what: string) => ({ ok: false as const, problem: problem(file, 'schema', `not a version envelope: ${what}`) });
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return bad('expected a JSON object');
  const e = doc as Record<string, unknown>;
  if (e.format !== 'waystation-version') return bad(`format: expected "waystation-version", got ${JSON.stringify(e.format)}`);
  if (e.version !== version) {
    return {
      ok: false,
      problem: problem(file, 'invariant', `the file is named for version ${version} but holds version ${JSON.stringify(e.version)}`),
    };
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

/** A version as read: its envelope, and the bytes its carried blobs are found in. */
export interface VersionFile {
  envelope: Envelope;
  /** Bytes of the envelope line (the whole record when it carries no blobs). */
  envelopeBytes: number;
  /** The version's record: the whole file for a file that holds one version. */
  bytes: Buffer;
  /** The file the record was found in, and its bytes up to the end of the record and its seal. */
  source: RecordSource;
}

/**
 * Where a version's record was read: the file, and the file's bytes (inflated) up to the end of the record and its
 * seal. A file that starts with the same bytes holds the same records up to that version (each record follows from
 * the bytes before it), whatever was appended since.
 */
export interface RecordSource {
  abs: string;
  upTo: Buffer;
}

/**
 * Where a version file's envelope ends: at the first line break when the
 * first line is a JSON document on its own (the file may then carry blobs
 * on the lines after it), else at the end of the file (an envelope another
 * program wrote across several lines, which carries none).
 */
export function parseVersionBytes(
  file: string,
  bytes: Buffer,
): { ok: true; value: unknown; envelopeBytes: number } | { ok: false; problem: Problem } {
  const eol = bytes.indexOf(NEWLINE);
  if (eol >= 0 && eol < bytes.length - 1) {
    const head = parseJsonBytes(file, bytes.subarray(0, eol));
    if (head.ok) return { ok: true, value: head.value, envelopeBytes: eol };
  }
  const whole = parseJsonBytes(file, bytes);
  return whole.ok ? { ok: true, value: whole.value, envelopeBytes: bytes.length } : whole;
}

/**
 * The file a sequential reader read last and what it holds, so that a walk
 * over the versions of a segment reads the file once, not once per version.
 * Only a reader made by `versionWalk` keeps one: files grow, and what it
 * holds is good for one walk.
 */
export class SegmentMemo {
  private abs = '';
  private bytes: Buffer = Buffer.alloc(0);
  private segment: Segment | null = null;
  /** Versions up to this one are known to have no file of their own after the memo's file. */
  private checkedUpTo = 0;

  keep(abs: string, bytes: Buffer, segment: Segment, checkedUpTo: number): void {
    this.abs = abs;
    this.bytes = bytes;
    this.segment = segment;
    this.checkedUpTo = checkedUpTo;
  }

  /** The record of `version` held, when no file of its own may supersede it (probed here for versions not yet checked). */
  async find(ctx: ReadContext, taskDir: string, version: number): Promise<LocatedRecord | null> {
    const span = this.segment?.records.find((r) => r.version === version);
    if (!span) return null;
    for (let v = this.checkedUpTo + 1; v <= version; v++) {
      if (await hasOwnFile(ctx, taskDir, v)) return null;
      this.checkedUpTo = v;
    }
    return { abs: this.abs, bytes: this.bytes, span };
  }

  holds(abs: string): boolean {
    return this.segment !== null && this.abs === abs;
  }

  /** Whether the file held is `source`'s and starts with its bytes. */
  startsWith(source: RecordSource): boolean {
    const { upTo } = source;
    return this.holds(source.abs) && this.bytes.length >= upTo.length && this.bytes.subarray(0, upTo.length).equals(upTo);
  }
}

/**
 * The names in a task's `versions/` folder, read once, for a walk over
 * versions that were all written before it started (a history chain, whose
 * every chunk was carried by a version no newer than the checkpoint that
 * names its head). Walking back through a segment asks, for each version,
 * whether it has a file of its own: one `stat` per version of the task, most
 * of them answering "not there", where one `readdir` answers them all.
 *
 * A name not in the listing is not taken as final: when a version is found
 * nowhere, the walk lists the folder again and looks once more
 * (locateRecord), so a file written after the listing is still found.
 */
export class VersionNames {
  private taskDir = '';
  /** The version numbers with a file of their own. */
  private names: Set<number> | null = null;
  /** Whether the listing was read again since the last version found nowhere. */
  private fresh = false;

  /** The names of `taskDir`'s version files, as just listed by the caller (`files`: the numbers they are named for). */
  static listed(taskDir: string, files: readonly number[]): VersionNames {
    const names = new VersionNames();
    names.taskDir = taskDir;
    names.names = new Set(files);
    // A version found nowhere still lists the folder once more (relist): a file renamed in since the caller's
    // listing is found, as by a walk's own listing.
    return names;
  }

  /** Whether version `version` has a file of its own (errors other than "not there" count as present, as in `exists`). */
  async has(ctx: ReadContext, taskDir: string, version: number): Promise<boolean> {
    if (this.names === null || this.taskDir !== taskDir) {
      let names: string[];
      try {
        names = await ctx.fs.readdirNames(path.join(taskDir, VERSIONS_DIR));
      } catch {
        return exists(ctx, versionPath(taskDir, version));
      }
      this.names = new Set();
      for (const name of names) {
        const v = parseVersionFileName(name);
        if (v !== null) this.names.add(v);
      }
      this.taskDir = taskDir;
    }
    return this.names.has(version);
  }

  /**
   * After a version was found nowhere: forget the listing so the next lookup
   * reads it again, once per miss. True when that is worth a second look
   * (the listing had not just been read).
   */
  relist(): boolean {
    if (this.fresh || this.names === null) return false;
    this.names = null;
    this.fresh = true;
    return true;
  }

  /** A version was found: the next miss may list the folder again. */
  found(): void {
    this.fresh = false;
  }
}

/** Whether version `version` has a file of its own, from the walk's listing when it has one. */
export function hasOwnFile(ctx: ReadContext, taskDir: string, version: number): Promise<boolean> {
  return ctx.versionNames ? ctx.versionNames.has(ctx, taskDir, version) : exists(ctx, versionPath(taskDir, version));
}

/**
 * sequentialReads for a walk over versions or the blobs they carry: the
 * reader also keeps the version file it read last (SegmentMemo), and with
 * `listed`, answers which versions have a file of their own from one listing
 * of `versions/` (VersionNames; only for versions written before the walk).
 */
export function versionWalk(ctx: ReadContext, opts: { listed?: boolean } = {}): { ctx: ReadContext; pace: () => Promise<void> } {
  const walk = sequentialReads(ctx);
  return {
    // A walk given a context that already holds a file and a listing (keptHistoryHead's, for the history read after
    // it) reads on from them.
    ctx: {
      ...walk.ctx,
      segments: ctx.segments ?? new SegmentMemo(),
      ...(opts.listed ? { versionNames: ctx.versionNames ?? new VersionNames() } : {}),
    },
    pace: walk.pace,
  };
}

/** A version's record found: the file it is in, that file's bytes, and where in them the record lies. */
export interface LocatedRecord {
  abs: string;
  bytes: Buffer;
  span: RecordSpan;
}

type Located = { ok: true; value: LocatedRecord } | { ok: false; problem: Problem; missing: boolean };

/**
 * Find version `version`'s record: in its own file, the first record there,
 * or else among the records appended to the nearest file before it (at most
 * SEGMENT_VERSIONS - 1 names back). A version's own file always wins over a
 * record of it in an earlier file.
 *
 * Records are found by their structure; their seals are not hashed here but
 * where their envelope is read (readVersionFile): a blob lookup checks the
 * blob's own hash, and a history of 10,000 messages would otherwise hash
 * every byte of every segment it passes through.
 */
export async function locateRecord(ctx: ReadContext, taskDir: string, version: number): Promise<Located> {
  const located = await locateOnce(ctx, taskDir, version);
  if (!ctx.versionNames) return located;
  if (located.ok || !located.missing) {
    ctx.versionNames.found();
    return located;
  }
  // Found nowhere by the walk's listing of versions/: list the folder again and look once more.
  return ctx.versionNames.relist() ? locateRecord(ctx, taskDir, version) : located;
}

async function locateOnce(ctx: ReadContext, taskDir: string, version: number): Promise<Located> {
  const memo = ctx.segments;
  const held = await memo?.find(ctx, taskDir, version);
  if (held) return { ok: true, value: held };
  const own = versionPath(taskDir, version);
  // Most versions of a segment have no file of their own: a lookup that finds nothing costs no error.
  const raw = (await hasOwnFile(ctx, taskDir, version)) ? await readVersionBytes(ctx, own) : ({ ok: false, missing: true } as const);
  if (raw.ok) {
    const segment = parseSegment(raw.bytes, version, false);
    memo?.keep(own, raw.bytes, segment, version);
    const first = segment.records[0];
    if (!first)
      return { ok: false, missing: false, problem: problem(relPath(ctx, own), 'invariant', `version ${version}: ${segment.tailReason}`) };
    return { ok: true, value: { abs: own, bytes: raw.bytes, span: first } };
  }
  if (!raw.missing) return { ok: false, problem: raw.problem, missing: false };
  for (let f = version - 1; f >= Math.max(1, version - SEGMENT_VERSIONS + 1); f--) {
    const abs = versionPath(taskDir, f);
    if (!memo?.holds(abs) && !(await hasOwnFile(ctx, taskDir, f))) continue;
    // The names between this file and the version were just found absent.
    const read = await readVersionBytes(ctx, abs);
    if (!read.ok) return read.missing ? missingVersion(ctx, taskDir, version) : { ok: false, problem: read.problem, missing: false };
    const segment = parseSegment(read.bytes, f, false);
    memo?.keep(abs, read.bytes, segment, version);
    const span = segment.records.find((r) => r.version === version);
    if (span) return { ok: true, value: { abs, bytes: read.bytes, span } };
    // Not there: say why when the file that would hold it is torn or damaged before it.
    if (segment.tail !== 'clean' && segment.tailVersion !== undefined && segment.tailVersion <= version) {
      return {
        ok: false,
        missing: false,
        problem: problem(relPath(ctx, abs), 'invariant', `version ${segment.tailVersion}: ${segment.tailReason}`),
      };
    }
    if (!segment.sealed) {
      const own = parseVersionBytes(relPath(ctx, abs), read.bytes);
      if (!own.ok) return { ok: false, missing: false, problem: own.problem };
    }
    break;
  }
  return missingVersion(ctx, taskDir, version);
}

function missingVersion(ctx: ReadContext, taskDir: string, version: number): Located {
  return {
    ok: false,
    missing: true,
    problem: problem(relPath(ctx, versionPath(taskDir, version)), 'missing-version', `version ${version} does not exist`),
  };
}

/** Read and decode version `version`. Never throws on a bad file. */
export async function readVersionFile(
  ctx: ReadContext,
  taskDir: string,
  version: number,
): Promise<{ ok: true; value: VersionFile } | { ok: false; problem: Problem; missing: boolean }> {
  const located = await locateRecord(ctx, taskDir, version);
  if (!located.ok) return located;
  const { abs, bytes, span } = located.value;
  const file = relPath(ctx, abs);
  let value: unknown;
  let envelopeBytes: number;
  if (span.envelopeEnd === null) {
    const parsed = parseVersionBytes(file, bytes);
    if (!parsed.ok) return { ok: false, problem: parsed.problem, missing: false };
    ({ value, envelopeBytes } = parsed);
  } else {
    // Seals are checked here, for the records whose envelope is used (see locateRecord).
    if (!sealMatches(bytes, span))
      return { ok: false, missing: false, problem: problem(file, 'invariant', `version ${version}: ${SEAL_MISMATCH}`) };
    const parsed = parseJsonBytes(file, bytes.subarray(span.start, span.envelopeEnd));
    if (!parsed.ok) return { ok: false, problem: parsed.problem, missing: false };
    value = parsed.value;
    envelopeBytes = span.envelopeEnd - span.start;
  }
  const env = decodeEnvelope(value, version, file);
  if (!env.ok) return { ok: false, problem: env.problem, missing: false };
  const source = { abs, upTo: bytes.subarray(0, span.sealedEnd) };
  return { ok: true, value: { envelope: env.envelope, envelopeBytes, bytes: bytes.subarray(span.start, span.end), source } };
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
  /**
   * When rebuilt on a version already known (rebuildVersion's `known`): the deltas applied to it, oldest first,
   * each with the document it made, so a reader holding that version checked can check only what they change.
   */
  since?: readonly AppliedDelta[];
  /** With `since`: the known version they were applied to. */
  from?: number;
  /** Where the version's own record was read (absent for a version given as known and not read). */
  source?: RecordSource;
}

/** A version already rebuilt, which a rebuild of a later version may start from (rebuildVersion). */
export interface KnownVersion {
  version: number;
  rebuilt: RebuiltVersion;
  /**
   * Where its record was read, for a version rebuilt by an earlier read: it is taken only where the walk finds
   * the version's record in that file, and the file still starts with the same bytes, which then hold the same
   * records up to it. Without a source, the version is taken as given (a version rebuilt in this read, or a hot
   * snapshot whose bytes the caller compared).
   */
  source?: RecordSource;
}

/** The delta a version's envelope holds from the version before it. */
export interface VersionDelta {
  version: number;
  ops: DiffOp[];
}

/** A delta applied: the document it made of the one before. */
export interface AppliedDelta extends VersionDelta {
  doc: unknown;
}

/**
 * Rebuild version `version` of the task in `taskDir`: walk back to the
 * nearest full snapshot, then apply the deltas forward.
 *
 * `known`, older versions of the same task already rebuilt, end the walk
 * when one is reached before a full snapshot: rebuilding several versions
 * oldest first reads each file once, and a reader that rebuilt a running
 * task's newest version reads only the records after it the next time.
 *
 * Never throws on bad files; returns the problems that stopped the rebuild.
 */
export async function rebuildVersion(
  ctx: ReadContext,
  taskDir: string,
  version: number,
  known?: KnownVersion | readonly KnownVersion[],
): Promise<{ ok: true; value: RebuiltVersion } | { ok: false; problems: Problem[]; missing: boolean }> {
  const knowns: readonly KnownVersion[] = known === undefined ? [] : 'version' in known ? [known] : known;
  const deltas: VersionDelta[] = [];
  let deltaBytes = 0;
  let source: RecordSource | undefined;
  const fromKnown = (k: KnownVersion): { ok: true; value: RebuiltVersion } | { ok: false; problems: Problem[]; missing: false } => {
    const applied = applyDeltas(ctx, taskDir, k.rebuilt.doc, deltas, true);
    if (!applied.ok) return applied;
    const { fullBytes, fullVersion } = k.rebuilt;
    const deltasBytes = k.rebuilt.deltaBytes + deltaBytes;
    return {
      ok: true,
      value: {
        doc: applied.doc,
        fullBytes,
        deltaBytes: deltasBytes,
        fullVersion,
        since: applied.steps,
        from: k.version,
        source: source ?? k.source,
      },
    };
  };
  // Up to a few thousand small files, one after the other.
  const { ctx: reader, pace } = versionWalk(ctx);
  for (let v = version; v >= 1; v--) {
    const given = knowns.find((k) => k.version === v && !k.source && v < version);
    if (given) return fromKnown(given);
    await pace();
    // A version known from an earlier read: its record is looked for as any version's is, which leaves the file
    // it is in held by the walk (SegmentMemo), and the bytes are compared up to its end.
    const sourced = knowns.find((k) => k.version === v && k.source);
    if (sourced?.source && (await locateRecord(reader, taskDir, v)).ok && reader.segments?.startsWith(sourced.source))
      return fromKnown(sourced);
    const read = await readVersionFile(reader, taskDir, v);
    if (!read.ok) {
      if (read.missing) {
        const abs = versionPath(taskDir, v);
        const p = problem(
          relPath(ctx, abs),
          'missing-version',
          v === version ? `version ${v} does not exist` : `version ${v} is missing, so version ${version} cannot be rebuilt`,
        );
        return { ok: false, problems: [p], missing: v === version };
      }
      return { ok: false, problems: [read.problem], missing: false };
    }
    source ??= read.value.source;
    const { envelope } = read.value;
    if (envelope.kind === 'full') {
      const applied = applyDeltas(ctx, taskDir, envelope.checkpoint, deltas);
      if (!applied.ok) return applied;
      return { ok: true, value: { doc: applied.doc, fullBytes: read.value.envelopeBytes, deltaBytes, fullVersion: v, source } };
    }
    deltas.push({ version: v, ops: envelope.ops });
    deltaBytes += read.value.envelopeBytes;
  }
  return {
    ok: false,
    problems: [problem(relPath(ctx, versionPath(taskDir, 1)), 'invariant', 'version 1 is not a full snapshot')],
    missing: false,
  };
}

/**
 * Apply deltas collected newest first onto `doc`, oldest first. With `keepSteps`, for a rebuild on a version already
 * known, `steps` holds each applied with the document it made (otherwise none is kept: a rebuild from a full snapshot
 * applies up to a few hundred), and the arrays copied record their lineage (array-lineage.ts), so that a reader
 * keeping the result frozen visits only what the deltas changed (kept-checkpoints.ts, freezeSince).
 */
function applyDeltas(
  ctx: ReadContext,
  taskDir: string,
  doc: unknown,
  deltas: readonly VersionDelta[],
  keepSteps = false,
): { ok: true; doc: unknown; steps: AppliedDelta[] } | { ok: false; problems: Problem[]; missing: false } {
  let out = doc;
  const steps: AppliedDelta[] = [];
  for (let i = deltas.length - 1; i >= 0; i--) {
    try {
      out = applyDiff(out, deltas[i].ops, keepSteps);
      if (keepSteps) steps.push({ ...deltas[i], doc: out });
    } catch (err) {
      const file = relPath(ctx, versionPath(taskDir, deltas[i].version));
      const why = err instanceof DiffApplyError ? err.message : String(err);
      return {
        ok: false,
        problems: [problem(file, 'invariant', `the delta does not fit version ${deltas[i].version - 1}: ${why}`)],
        missing: false,
      };
    }
  }
  return { ok: true, doc: out, steps };
}
