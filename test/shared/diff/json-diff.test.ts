import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyDiff, computeDiff, DiffApplyError } from '../../../shared/diff/json-diff.js';

/** JSON round trip: the values the store diffs come from JSON.parse. */
const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe('computeDiff / applyDiff', () => {
  it('applying the diff of a to b gives b exactly, and a is left as it was', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const before = JSON.stringify(a);
        const ops = computeDiff(a, b);
        const out = applyDiff(a, ops);
        expect(out).toStrictEqual(b);
        expect(JSON.stringify(a)).toBe(before);
      }),
      { numRuns: 500 },
    );
  });

  it('ops survive a JSON round trip (they are what the store writes in deltas)', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const ops = JSON.parse(JSON.stringify(computeDiff(a, b)));
        expect(applyDiff(a, ops)).toStrictEqual(b);
      }),
      { numRuns: 300 },
    );
  });

  it('diffs of related values (one edited from the other) round-trip', () => {
    const edited = json.chain((a) => fc.tuple(fc.constant(a), fc.oneof(fc.constant(a), json, fc.constant(mutateSome(a)))));
    fc.assert(
      fc.property(edited, ([a, b]) => {
        expect(applyDiff(a, computeDiff(a, b))).toStrictEqual(b);
      }),
      { numRuns: 300 },
    );
  });

  it('treats an identical sub-value as unchanged without looking inside it', () => {
    // A subtree that throws when read: the diff must never open it, only compare it by identity.
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('read');
        },
        ownKeys: () => {
          throw new Error('listed');
        },
      },
    );
    const plan = Array.from({ length: 1000 }, (_, i) => (i === 500 ? { status: 'pending' } : untouchable));
    const next = plan.map((s, i) => (i === 500 ? { status: 'done' } : s));
    expect(computeDiff({ plan, shared: untouchable }, { plan: next, shared: untouchable })).toEqual([
      { op: 'replace', path: ['plan', 500, 'status'], value: 'done', old: 'pending' },
    ]);
  });

  it('removes shrunk array tails from the highest index down', () => {
    const ops = computeDiff({ xs: [1, 2, 3, 4] }, { xs: [1] });
    expect(ops).toEqual([
      { op: 'remove', path: ['xs', 3], old: 4 },
      { op: 'remove', path: ['xs', 2], old: 3 },
      { op: 'remove', path: ['xs', 1], old: 2 },
    ]);
    expect(applyDiff({ xs: [1, 2, 3, 4] }, ops)).toEqual({ xs: [1] });
  });

  it('records the before value of replaces and removes', () => {
    const ops = computeDiff({ a: 1, b: { c: 'x' }, gone: [1] }, { a: 2, b: { c: 'y' }, added: true });
    expect(ops).toEqual([
      { op: 'replace', path: ['a'], value: 2, old: 1 },
      { op: 'replace', path: ['b', 'c'], value: 'y', old: 'x' },
      { op: 'remove', path: ['gone'], old: [1] },
      { op: 'add', path: ['added'], value: true },
    ]);
  });

  it('equal values give no ops', () => {
    expect(computeDiff({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toEqual([]);
  });

  it('keeps "__proto__" and prototype-named keys as plain data', () => {
    const a = JSON.parse('{"__proto__":{"x":1},"constructor":1}');
    const b = JSON.parse('{"__proto__":{"x":2},"toString":"s"}');
    const out = applyDiff(a, computeDiff(a, b)) as Record<string, unknown>;
    expect(out).toStrictEqual(b);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('refuses ops computed against another base', () => {
    const ops = computeDiff({ xs: [1, 2, 3] }, { xs: [1] });
    expect(() => applyDiff({ xs: [] }, ops)).toThrow(DiffApplyError);
    expect(() => applyDiff(5, [{ op: 'add', path: ['a'], value: 1 }])).toThrow(DiffApplyError);
  });
});

/** A copy of `v` with some leaves changed and some array elements dropped. */
function mutateSome(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((_, i) => i % 3 !== 1).map(mutateSome);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k.length % 2 === 0) out[k] = mutateSome(x);
    out['added'] = 1;
    return out;
  }
  if (typeof v === 'number') return v + 1;
  if (typeof v === 'string') return v + '!';
  return v;
}

describe('JSON semantics', () => {
  it('treats members whose value is undefined as absent', () => {
    expect(computeDiff({ a: 1, b: undefined }, { a: 1 })).toEqual([]);
    expect(computeDiff({ a: 1 }, { a: 1, b: undefined })).toEqual([]);
    expect(computeDiff({ a: undefined }, { a: 2 })).toEqual([{ op: 'add', path: ['a'], value: 2 }]);
    expect(computeDiff({ a: 2 }, { a: undefined })).toEqual([{ op: 'remove', path: ['a'], old: 2 }]);
  });
});
