import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { percentile, summarize } from '../../../bench/lib/percentile.js';

describe('percentile (nearest rank)', () => {
  it('returns a measured sample with at least p% of samples at or below it and fewer than p% below it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 100 }),
        (samples, p) => {
          const value = percentile(samples, p);
          expect(samples).toContain(value);
          const atOrBelow = samples.filter((s) => s <= value).length;
          const below = samples.filter((s) => s < value).length;
          expect(atOrBelow / samples.length).toBeGreaterThanOrEqual(p / 100);
          expect(below / samples.length).toBeLessThan(p / 100);
        },
      ),
    );
  });

  it('gives the k-th smallest of 1..100 as the k-th percentile, whatever the order', () => {
    const shuffled = Array.from({ length: 100 }, (_, i) => i + 1).sort((a, b) => ((a * 37) % 101) - ((b * 37) % 101));
    for (const p of [1, 50, 90, 99, 100]) expect(percentile(shuffled, p)).toBe(p);
  });

  it('does not reorder the caller’s array', () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });

  it('refuses an empty list and a percentile outside (0, 100]', () => {
    expect(() => percentile([], 50)).toThrow(/empty/);
    expect(() => percentile([1], 0)).toThrow(/\(0, 100\]/);
    expect(() => percentile([1], 101)).toThrow(/\(0, 100\]/);
  });
});

describe('summarize', () => {
  it('agrees with percentile, min, max and the mean', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 200 }), (samples) => {
        const s = summarize(samples);
        expect(s.count).toBe(samples.length);
        expect(s.min).toBe(Math.min(...samples));
        expect(s.max).toBe(Math.max(...samples));
        expect(s.p50).toBe(percentile(samples, 50));
        expect(s.p90).toBe(percentile(samples, 90));
        expect(s.p99).toBe(percentile(samples, 99));
        expect(s.mean).toBeCloseTo(samples.reduce((a, b) => a + b, 0) / samples.length, 6);
      }),
    );
  });
});
