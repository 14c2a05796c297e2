import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseTimestamp } from '../../../shared/checkpoint/timestamp.js';

/** Whether parseTimestamp gives Date.parse's answer (NaN is NaN). */
const same = (text: string): boolean => Object.is(parseTimestamp(text), Date.parse(text));

describe('parseTimestamp', () => {
  it('answers what Date.parse answers for any time toISOString can write', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => same(new Date(ms).toISOString())),
      { numRuns: 5000 },
    );
  });

  it('answers what Date.parse answers for text of the same shape with any digits, in range or not', () => {
    const digits = (n: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: n, maxLength: n }).map((d) => d.join(''));
    const shaped = fc
      .tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(3))
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    fc.assert(fc.property(shaped, same), { numRuns: 5000 });
  });

  it('answers what Date.parse answers at the edges and for other forms', () => {
    for (const text of [
      '2024-02-29T00:00:00.000Z', // a leap day
      '2025-02-29T00:00:00.000Z', // not one
      '2100-02-29T00:00:00.000Z',
      '2000-02-29T23:59:59.999Z',
      '2026-04-31T00:00:00.000Z',
      '2026-12-31T24:00:00.000Z',
      '0099-01-01T00:00:00.000Z', // a two-digit year: Date.UTC would read 1999
      '0000-01-01T00:00:00.000Z',
      '2026-01-01T00:00:60.000Z',
      '2026-1-01T00:00:00.000Z',
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.000+02:00',
      '2026-01-01',
      'Mon, 30 Nov 2026 14:00:00 GMT',
      '2026-01-01T00:00:00.0a0Z',
      '',
      'not a time',
    ]) {
      expect(same(text), text).toBe(true);
    }
  });
});
