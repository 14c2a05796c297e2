import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatRelative, formatTime } from '../../renderer/src/components/format.js';

// Instants from 1970 to 2100, in the zone the tests run in.
const instant = fc.integer({ min: 0, max: 4_102_444_800_000 });

describe('dates and times', () => {
  it('give the local date and time to the second, year first, which read back as the same second', () => {
    fc.assert(
      fc.property(instant, (t) => {
        const text = formatTime(new Date(t).toISOString());
        const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
        expect(m).not.toBeNull();
        const [, y, mo, d, h, mi, s] = m!.map(Number);
        expect(new Date(y, mo - 1, d, h, mi, s).getTime()).toBe(Math.floor(t / 1000) * 1000);
      }),
      { numRuns: 500 },
    );
  });

  it('say what is missing or unreadable as it is', () => {
    expect(formatTime(null)).toBe('—');
    expect(formatTime('not a time')).toBe('not a time');
    expect(formatRelative(undefined)).toBe('—');
  });

  it('count back from now for a day, then give the local date', () => {
    const now = Date.parse('2026-12-06T12:00:00Z');
    expect(formatRelative('2026-12-06T11:59:58Z', now)).toBe('just now');
    expect(formatRelative('2026-12-06T11:59:00Z', now)).toBe('1 min ago');
    expect(formatRelative('2026-12-06T09:00:00Z', now)).toBe('3 h ago');
    const older = Date.parse('2026-11-20T08:00:00Z');
    const d = new Date(older);
    const expected = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    expect(formatRelative(new Date(older).toISOString(), now)).toBe(expected);
    expect(formatTime(new Date(older).toISOString()).startsWith(`${expected} `)).toBe(true);
  });
});
