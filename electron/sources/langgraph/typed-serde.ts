/**
 * A LangGraph serde pair `(type, bytes)` decoded into inert data, or the
 * reason it cannot be.
 *
 * Types: `json` (JavaScript's JsonPlusSerializer, old Python), `msgpack`
 * (Python's), `bytes` / `bytearray` (raw bytes), `null`, and PostgreSQL's
 * `empty` (a channel with no value at that version). A type with a `+` was
 * encrypted by EncryptedSerializer (`msgpack+aes`): without the key nothing
 * of it can be read, and it is reported, not guessed at. `pickle` is never
 * loaded: loading it would run code from the checkpoint.
 */
import { isUtf8 } from 'node:buffer';
import { bytesValue } from './inert-value.js';
import { decodeJsonText } from './json-serde.js';
import { decodeMsgpack } from './msgpack-serde.js';

export type Decoded =
  { ok: true; value: unknown } | { ok: false; reason: string; kind: 'encrypted' | 'unknown-type' | 'truncated' | 'invalid' };

const asBytes = (data: Uint8Array | string | null): Uint8Array =>
  data === null ? new Uint8Array(0) : typeof data === 'string' ? new TextEncoder().encode(data) : data;

/** Decode one serde pair; never throws. */
export function decodeTyped(type: string | null, data: Uint8Array | string | null): Decoded {
  const t = type ?? 'json';
  if (t.includes('+')) {
    const [inner, cipher] = t.split('+', 2);
    return {
      ok: false,
      kind: 'encrypted',
      reason: `encrypted with "${cipher}" (serde ${inner}): Waystation does not hold the key, so this value is not shown`,
    };
  }
  try {
    switch (t) {
      case 'null':
      case 'empty':
        return { ok: true, value: null };
      case 'bytes':
      case 'bytearray':
        return { ok: true, value: bytesValue(asBytes(data)) };
      case 'json': {
        const bytes = typeof data === 'string' ? null : asBytes(data);
        if (bytes && !isUtf8(bytes)) throw new Error('the bytes are not valid UTF-8');
        const text = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') : (data as string);
        try {
          return { ok: true, value: decodeJsonText(text) };
        } catch (err) {
          // V8 names where the parse stopped; stopping at the very end means the text was cut off there.
          const at = /at position (\d+)/.exec(String(err))?.[1];
          if (at !== undefined && Number(at) >= text.trimEnd().length)
            throw new Error(`unexpected end of JSON at byte ${at}`, { cause: err });
          throw err;
        }
      }
      case 'msgpack':
        return { ok: true, value: decodeMsgpack(asBytes(data)) };
      case 'pickle':
        return {
          ok: false,
          kind: 'unknown-type',
          reason: 'serialized with pickle, which Waystation never loads (loading it runs code named in the data)',
        };
      default:
        return { ok: false, kind: 'unknown-type', reason: `serde type "${t}" is not one Waystation knows (json, msgpack, bytes, null)` };
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // Both parsers say so when the data ends early: a torn write or a cut-off copy.
    const truncated = /unexpected end|insufficient data|Unterminated|end of (JSON|data)|out of range|outside the bounds|buffer/i.test(
      message,
    );
    return {
      ok: false,
      kind: truncated ? 'truncated' : 'invalid',
      reason: truncated ? `the ${t} data ends early (truncated): ${message}` : `the ${t} data cannot be decoded: ${message}`,
    };
  }
}
