/**
 * The records of a segment: a version file that holds several versions
 * (docs/FORMAT.md, "Segments").
 *
 * A version appended to an existing file is committed by the fdatasync of
 * that append, not by the creation of a file, so a power cut can leave its
 * record cut short at the end of the file. Each record therefore says how
 * many lines it has (`"lines"` in its envelope, right after `"kind"`) and is
 * followed by a seal line holding the SHA-256 of its bytes: a reader takes a
 * record only when it is whole and its seal matches, and what follows the
 * last such record is a torn tail (the save it belonged to never returned),
 * or damage when more bytes come after it.
 */
import { createHash } from 'node:crypto';

/** The most versions one file holds: the version it is named for and up to fifteen appended after it. */
export const SEGMENT_VERSIONS = 16;

/**
 * The start of a version envelope, up to the field after `kind`. With
 * `lines` (the blob lines that follow the envelope), the envelope of a sealed
 * record. The fields are always in this order, so a segment's records are
 * found from these bytes without parsing the envelopes.
 */
export function recordHead(version: number, kind: 'full' | 'delta', lines: number | null): string {
  return `{"format":"waystation-version","version":${version},"kind":"${kind}",${lines === null ? '' : `"lines":${lines},`}`;
}

const SEALED_HEAD = /^\{"format":"waystation-version","version":(\d+),"kind":"(?:full|delta)","lines":(\d+),/;
const SEAL_LINE = /^\{"seal":(\d+),"sha256":"([0-9a-f]{64})"\}$/;
/** Enough bytes for the longest sealed head. */
export const HEAD_BYTES = 96;
const NEWLINE = 0x0a;

/** `record` (every line ending in a line break) followed by its seal line. */
export function sealRecord(record: Buffer, version: number): Buffer {
  const seal = `{"seal":${version},"sha256":"${createHash('sha256').update(record).digest('hex')}"}\n`;
  return Buffer.concat([record, Buffer.from(seal)]);
}

/** Where one version's record lies in its file. */
export interface RecordSpan {
  version: number;
  /** First byte of the envelope. */
  start: number;
  /** The envelope line's end (the offset of its line break), or null when the envelope is not known to be one line. */
  envelopeEnd: number | null;
  /** End of the record's bytes (its seal line, if any, not included). */
  end: number;
  /** End of the record with its seal line: where the next record starts. */
  sealedEnd: number;
  /** The SHA-256 its seal line gives for those bytes; null for a file of one version, which has no seal. */
  seal: string | null;
}

/** What a file's bytes hold, in order. */
export interface Segment {
  /** Whether the file's records are sealed (it was written to be appended to). */
  sealed: boolean;
  records: RecordSpan[];
  /**
   * What follows the last record: nothing (`clean`), a record cut short
   * (`torn`: a save that never returned), or bytes that are not a sealed
   * record of the next version although more follow them (`damaged`).
   */
  tail: 'clean' | 'torn' | 'damaged';
  /** For `torn` and `damaged`: the version the bad bytes were to hold, and why they are not taken. */
  tailVersion?: number;
  tailReason?: string;
}

/** Why a record whose seal does not match is not taken. */
export const SEAL_MISMATCH = 'its bytes do not hash to its seal: they were changed after they were written';

/** True when a record's bytes hash to its seal (a record without a seal has nothing to check). */
export function sealMatches(bytes: Buffer, span: RecordSpan): boolean {
  return span.seal === null || createHash('sha256').update(bytes.subarray(span.start, span.end)).digest('hex') === span.seal;
}

/**
 * The records of a version file named for version `first`.
 *
 * A file whose first bytes are not a sealed head is one version, as every
 * file was before segments: its bytes are that version's record. With
 * `verify` false, seals are only checked to be well formed, not hashed:
 * for readers that check each record they use (`sealMatches`) or only count
 * them, and for blob lookups, which check each blob's own hash.
 */
export function parseSegment(bytes: Buffer, first: number, verify = true): Segment {
  const records: RecordSpan[] = [];
  if (!SEALED_HEAD.test(bytes.subarray(0, HEAD_BYTES).toString('latin1'))) {
    return {
      sealed: false,
      records: [{ version: first, start: 0, envelopeEnd: null, end: bytes.length, sealedEnd: bytes.length, seal: null }],
      tail: 'clean',
    };
  }
  let pos = 0;
  for (let version = first; pos < bytes.length; version++) {
    const bad = (tail: 'torn' | 'damaged', reason: string): Segment => ({
      sealed: true,
      records,
      tail,
      tailVersion: version,
      tailReason: reason,
    });
    if (records.length === SEGMENT_VERSIONS)
      return bad('damaged', `${bytes.length - pos} bytes follow the ${SEGMENT_VERSIONS}th version, the most a file holds`);
    const head = SEALED_HEAD.exec(bytes.subarray(pos, pos + HEAD_BYTES).toString('latin1'));
    const eol = bytes.indexOf(NEWLINE, pos);
    if (!head)
      return eol < 0 && isPrefixOfHead(bytes.subarray(pos), version)
        ? bad('torn', 'its record was cut short')
        : bad('damaged', `the bytes after version ${version - 1} are not the sealed record of version ${version}`);
    if (Number(head[1]) !== version) return bad('damaged', `the record after version ${version - 1} is named version ${head[1]}`);
    if (eol < 0) return bad('torn', 'its record was cut short');
    let end = eol + 1;
    for (let line = Number(head[2]); line > 0; line--) {
      const next = bytes.indexOf(NEWLINE, end);
      if (next < 0) return bad('torn', 'its record was cut short');
      end = next + 1;
    }
    const sealEnd = bytes.indexOf(NEWLINE, end);
    if (sealEnd < 0) return bad('torn', 'its record was cut short before its seal');
    const seal = SEAL_LINE.exec(bytes.subarray(end, sealEnd).toString('latin1'));
    if (!seal || Number(seal[1]) !== version) return bad('damaged', 'its seal line is not the seal of this version');
    const span = { version, start: pos, envelopeEnd: eol, end, sealedEnd: sealEnd + 1, seal: seal[2] };
    if (verify && !sealMatches(bytes, span)) return bad('damaged', SEAL_MISMATCH);
    records.push(span);
    pos = span.sealedEnd;
  }
  return { sealed: true, records, tail: 'clean' };
}

/** True when `head`, a file's first bytes, begin a sealed record of version `first`. */
export function isSealedHead(head: Buffer, first: number): boolean {
  const m = SEALED_HEAD.exec(head.subarray(0, HEAD_BYTES).toString('latin1'));
  return m !== null && Number(m[1]) === first;
}

/** Bytes enough to hold a whole seal line and the line break before it. */
export const SEAL_TAIL_BYTES = 128;

/**
 * The version named by the seal line `tail` (a file's last bytes) ends
 * with, or null when it does not end with one (a torn tail, or not a
 * segment). Seals are not checked here: the file is read whole before any
 * of its versions is used.
 */
export function lastSeal(tail: Buffer): number | null {
  if (tail.length < 2 || tail[tail.length - 1] !== NEWLINE) return null;
  const start = tail.lastIndexOf(NEWLINE, tail.length - 2);
  if (start < 0) return null;
  const seal = SEAL_LINE.exec(tail.subarray(start + 1, tail.length - 1).toString('latin1'));
  return seal ? Number(seal[1]) : null;
}

/**
 * True when `rest`, the last bytes of a file, could be the start of a sealed
 * record of `version` cut short. A power cut may also leave zeros where the
 * bytes had not reached the disk, so those count as cut short too.
 */
function isPrefixOfHead(rest: Buffer, version: number): boolean {
  const expected = recordHead(version, 'full', 0).slice(0, '{"format":"waystation-version","version":'.length + String(version).length);
  const text = rest.toString('latin1').replace(/\0+$/, '');
  return text.length === 0 || expected.startsWith(text.slice(0, expected.length)) || text.startsWith(expected);
}
