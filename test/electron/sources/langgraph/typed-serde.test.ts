import { describe, expect, it } from 'vitest';
import { decodeTyped } from '../../../../electron/sources/langgraph/typed-serde.js';
import { humanMessage, pack } from '../../../support/python-msgpack.js';

describe('decodeTyped: a serde pair, or the reason it cannot be read', () => {
  it('decodes json, msgpack, bytes, bytearray, null and PostgreSQL empty', () => {
    expect(decodeTyped('json', '{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(decodeTyped('msgpack', pack({ a: 1 }))).toEqual({ ok: true, value: { a: 1 } });
    expect(decodeTyped('bytes', Uint8Array.from([1]))).toEqual({ ok: true, value: { $type: 'bytes', length: 1, base64: 'AQ==' } });
    expect(decodeTyped('bytearray', Uint8Array.from([1]))).toEqual({ ok: true, value: { $type: 'bytes', length: 1, base64: 'AQ==' } });
    expect(decodeTyped('null', new Uint8Array(0))).toEqual({ ok: true, value: null });
    expect(decodeTyped('empty', null)).toEqual({ ok: true, value: null });
  });

  it('reports an encrypted value with its cipher, and decodes nothing of it', () => {
    const d = decodeTyped('msgpack+aes', Uint8Array.from([1, 2, 3]));
    expect(d).toEqual({ ok: false, kind: 'encrypted', reason: expect.stringContaining('encrypted with "aes"') });
  });

  it('never loads pickle, and names an unknown serde type', () => {
    expect(decodeTyped('pickle', Uint8Array.from([0x80, 0x04]))).toMatchObject({
      ok: false,
      kind: 'unknown-type',
      reason: expect.stringContaining('never loads'),
    });
    expect(decodeTyped('cbor', Uint8Array.from([1]))).toMatchObject({
      ok: false,
      kind: 'unknown-type',
      reason: expect.stringContaining('"cbor"'),
    });
  });

  it('says truncated when the data ends early, in either format', () => {
    const full = pack({ messages: [humanMessage('a long enough message', 'm1')] });
    expect(decodeTyped('msgpack', full.slice(0, full.length - 5))).toMatchObject({ ok: false, kind: 'truncated' });
    expect(decodeTyped('json', '{"messages": [1, 2')).toMatchObject({ ok: false, kind: 'truncated' });
  });

  it('refuses json that is not UTF-8', () => {
    expect(decodeTyped('json', Uint8Array.from([0x7b, 0xff, 0x7d]))).toMatchObject({ ok: false, kind: 'invalid' });
  });
});
