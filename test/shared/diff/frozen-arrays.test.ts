import { describe, expect, it } from 'vitest';
import { copyArray, walkable } from '../../../shared/diff/frozen-arrays.js';

describe('copyArray', () => {
  it('copies a frozen array into one of its own, sharing the elements', () => {
    const first = Object.freeze({ id: 's1' });
    const frozen = Object.freeze([first, Object.freeze({ id: 's2' })]);
    const copy = copyArray<{ id: string }>(frozen);
    expect(copy).toEqual(frozen);
    expect(copy).not.toBe(frozen);
    expect(Object.isFrozen(copy)).toBe(false);
    expect(copy[0]).toBe(first);
    copy.push({ id: 's3' });
    copy[0] = { id: 'changed' };
    expect(frozen).toEqual([{ id: 's1' }, { id: 's2' }]);
  });

  it('keeps every element of a long array in order, nulls and nested arrays included', () => {
    const source = Array.from({ length: 5000 }, (_, i) => (i % 7 === 0 ? null : i % 5 === 0 ? [i] : { n: i }));
    expect(copyArray(Object.freeze(source))).toEqual(source);
    expect(copyArray([])).toEqual([]);
  });
});

describe('walkable', () => {
  it('gives the elements of a long frozen array in a copy, and any other array itself', () => {
    const long = Object.freeze(Array.from({ length: 2000 }, (_, i) => ({ n: i })));
    const walked = walkable(long);
    expect(walked).not.toBe(long);
    expect(walked).toEqual(long);
    expect(walked.every((v, i) => v === long[i])).toBe(true);
    const short = Object.freeze([{ n: 1 }]);
    expect(walkable(short)).toBe(short);
    const open = Array.from({ length: 2000 }, (_, i) => i);
    expect(walkable(open)).toBe(open);
  });
});
