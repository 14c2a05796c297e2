import { describe, expect, it } from 'vitest';
import { copyArray } from '../../../shared/diff/copy-array.js';

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
