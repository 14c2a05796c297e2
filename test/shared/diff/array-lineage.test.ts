/** A recorded copy answers which places changed, through copies of copies, and only once it is frozen. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { changedSince, copiedFrom, noteLineage } from '../../../shared/diff/array-lineage.js';
import { applyDiff, computeDiff } from '../../../shared/diff/json-diff.js';

/** The places below both lengths where two arrays hold different elements, found by comparing each. */
function differing(a: readonly unknown[], b: readonly unknown[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

/** A copy of `from` with some places replaced, some appended and maybe a cut, and its record. */
function recordedCopy(from: readonly object[], edits: { at: number; kind: 'set' | 'cut' | 'push' }[]): object[] {
  const copy = [...from];
  const written: number[] = [];
  for (const e of edits) {
    if (e.kind === 'set' && copy.length > 0) {
      const i = e.at % copy.length;
      copy[i] = { i };
      written.push(i);
    } else if (e.kind === 'cut') {
      const to = e.at % (copy.length + 1);
      for (let i = to; i < copy.length; i++) written.push(i);
      copy.length = to;
    } else copy.push({ pushed: e.at });
  }
  noteLineage(copy, from, written);
  return Object.freeze(copy) as object[];
}

const edits = fc.array(fc.record({ at: fc.nat(50), kind: fc.constantFrom('set' as const, 'cut' as const, 'push' as const) }), {
  maxLength: 8,
});

describe('array lineage', () => {
  it('lists, for a copy of a copy of a copy, every place that differs from each generation it came from', () => {
    fc.assert(
      fc.property(fc.nat(30), edits, edits, edits, (length, e1, e2, e3) => {
        const g0 = Object.freeze(Array.from({ length }, (_, i) => ({ g0: i })));
        const g1 = recordedCopy(g0, e1);
        const g2 = recordedCopy(g1, e2);
        const g3 = recordedCopy(g2, e3);
        for (const from of [g2, g1, g0]) {
          const said = changedSince(g3, from)!;
          expect(said).not.toBeNull();
          // Never a place missed; a place listed may hold the same element again (written back).
          for (const i of differing(from, g3)) expect(said).toContain(i);
          expect([...said].sort((x, y) => x - y)).toEqual(said);
          expect(said.every((i) => i < Math.min(from.length, g3.length))).toBe(true);
        }
      }),
    );
  });

  it('answers only for a frozen copy, and only about an array it was made from', () => {
    const from = Object.freeze([{ a: 1 }, { b: 2 }]);
    const copy = [...from];
    copy[1] = { b: 3 };
    noteLineage(copy, from, [1]);
    expect(changedSince(copy, from)).toBeNull();
    Object.freeze(copy);
    expect(changedSince(copy, from)).toEqual([1]);
    expect(changedSince(copy, Object.freeze([...from]))).toBeNull();
    expect(changedSince(from, from)).toEqual([]);
    expect(copiedFrom(copy)).toEqual({ from, changed: [1] });
    expect(copiedFrom(from)).toBeNull();
  });

  it('moves a record to the copy made from it, so no list keeps every earlier version of itself', () => {
    const g0 = Object.freeze([1, 2, 3]);
    const g1 = recordedCopy(g0 as unknown as object[], [{ at: 0, kind: 'set' }]);
    expect(changedSince(g1, g0)).toEqual([0]);
    const g2 = recordedCopy(g1, [{ at: 2, kind: 'set' }]);
    expect(changedSince(g2, g0)).toEqual([0, 2]);
    expect(changedSince(g1, g0)).toBeNull();
    // Four generations back at most: g6 answers for g2 (made from it through g3, g4 and g5), not for g1.
    let at = g2;
    for (let i = 0; i < 4; i++) at = recordedCopy(at, []);
    expect(changedSince(at, g2)).toEqual([]);
    expect(changedSince(at, g1)).toBeNull();
    expect(changedSince(at, g0)).toBeNull();
  });

  it('applyDiff records its copies when asked, and the diff of its result through them is the diff by comparison', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.integer(),
        fc.array(tie('node'), { maxLength: 6 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, value, (a, b) => {
        const ops = computeDiff(a, b);
        const frozenDeep = (v: unknown): unknown => {
          if (typeof v === 'object' && v !== null) {
            for (const m of Object.values(v)) frozenDeep(m);
            Object.freeze(v);
          }
          return v;
        };
        const recorded = frozenDeep(applyDiff(a, ops, true));
        const plain = applyDiff(a, ops);
        expect(recorded).toEqual(b);
        expect(computeDiff(a, recorded)).toEqual(computeDiff(a, plain));
      }),
    );
  });
});
