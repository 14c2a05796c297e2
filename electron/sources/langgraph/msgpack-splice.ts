/**
 * Msgpack maps taken apart and put back together without decoding their
 * values: a fork of a Python checkpoint replaces some channels and keeps
 * every other byte as Python's serializer wrote it (a float that happens to
 * be whole, an extension payload, a map with integer keys), which decoding
 * into JavaScript and encoding again would not.
 */
import { ServiceError } from '../../../shared/api/error-codes.js';

/** Raised for bytes that are not the msgpack map expected; says where they stop making sense. */
export class MsgpackSpliceError extends ServiceError {
  readonly code = 'invalid' as const;
}

/** One entry of a map: its key (when it is a string) and the key's and the value's bytes. */
export interface RawEntry {
  key: string | null;
  keyBytes: Uint8Array;
  valueBytes: Uint8Array;
}

/** The offset just past the msgpack value that starts at `at`. */
function skip(b: Uint8Array, at: number): number {
  const need = (n: number) => {
    if (at + n > b.length) throw new MsgpackSpliceError(`the msgpack data ends in the middle of a value at byte ${at}`);
  };
  need(1);
  const t = b[at];
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const len = (bytes: 1 | 2 | 4) => {
    need(1 + bytes);
    return bytes === 1 ? b[at + 1] : bytes === 2 ? view.getUint16(at + 1) : view.getUint32(at + 1);
  };
  const items = (start: number, count: number) => {
    let p = start;
    for (let i = 0; i < count; i++) p = skip(b, p);
    return p;
  };
  if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return at + 1;
  if (t >= 0x80 && t <= 0x8f) return items(at + 1, (t & 0x0f) * 2);
  if (t >= 0x90 && t <= 0x9f) return items(at + 1, t & 0x0f);
  if (t >= 0xa0 && t <= 0xbf) return at + 1 + (t & 0x1f);
  switch (t) {
    case 0xc4:
    case 0xd9:
      return at + 2 + len(1);
    case 0xc5:
    case 0xda:
      return at + 3 + len(2);
    case 0xc6:
    case 0xdb:
      return at + 5 + len(4);
    case 0xc7:
      return at + 3 + len(1);
    case 0xc8:
      return at + 4 + len(2);
    case 0xc9:
      return at + 6 + len(4);
    case 0xca:
      return at + 5;
    case 0xcb:
      return at + 9;
    case 0xcc:
    case 0xd0:
      return at + 2;
    case 0xcd:
    case 0xd1:
      return at + 3;
    case 0xce:
    case 0xd2:
      return at + 5;
    case 0xcf:
    case 0xd3:
      return at + 9;
    case 0xd4:
      return at + 3;
    case 0xd5:
      return at + 4;
    case 0xd6:
      return at + 6;
    case 0xd7:
      return at + 10;
    case 0xd8:
      return at + 18;
    case 0xdc:
      return items(at + 3, len(2));
    case 0xdd:
      return items(at + 5, len(4));
    case 0xde:
      return items(at + 3, len(2) * 2);
    case 0xdf:
      return items(at + 5, len(4) * 2);
    default:
      throw new MsgpackSpliceError(`byte ${at} (0x${t.toString(16)}) starts no msgpack value`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The string a msgpack value's bytes hold, or null when they hold something else. */
function stringOf(raw: Uint8Array): string | null {
  const t = raw[0];
  const start = t >= 0xa0 && t <= 0xbf ? 1 : t === 0xd9 ? 2 : t === 0xda ? 3 : t === 0xdb ? 5 : -1;
  return start < 0 ? null : utf8.decode(raw.subarray(start));
}

/** The entries of the msgpack map `bytes` is (exactly; trailing bytes are refused). */
export function mapEntries(bytes: Uint8Array): RawEntry[] {
  if (bytes.length === 0) throw new MsgpackSpliceError('the msgpack data is empty');
  const t = bytes[0];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count: number;
  let at: number;
  if (t >= 0x80 && t <= 0x8f) [count, at] = [t & 0x0f, 1];
  else if (t === 0xde && bytes.length >= 3) [count, at] = [view.getUint16(1), 3];
  else if (t === 0xdf && bytes.length >= 5) [count, at] = [view.getUint32(1), 5];
  else throw new MsgpackSpliceError('the msgpack data is not a map');
  const out: RawEntry[] = [];
  for (let i = 0; i < count; i++) {
    const keyEnd = skip(bytes, at);
    const valueEnd = skip(bytes, keyEnd);
    const keyBytes = bytes.subarray(at, keyEnd);
    out.push({ key: stringOf(keyBytes), keyBytes, valueBytes: bytes.subarray(keyEnd, valueEnd) });
    at = valueEnd;
  }
  if (at !== bytes.length) throw new MsgpackSpliceError(`the msgpack map ends at byte ${at} of ${bytes.length}`);
  return out;
}

/** A msgpack map of these entries, in this order, their bytes as they are. */
export function joinEntries(entries: readonly Pick<RawEntry, 'keyBytes' | 'valueBytes'>[]): Uint8Array {
  const n = entries.length;
  const header =
    n <= 15 ? [0x80 | n] : n <= 0xffff ? [0xde, n >> 8, n & 0xff] : [0xdf, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  const size = entries.reduce((s, e) => s + e.keyBytes.length + e.valueBytes.length, header.length);
  const out = new Uint8Array(size);
  out.set(header, 0);
  let at = header.length;
  for (const e of entries) {
    out.set(e.keyBytes, at);
    at += e.keyBytes.length;
    out.set(e.valueBytes, at);
    at += e.valueBytes.length;
  }
  return out;
}
