import { describe, expect, it } from 'vitest';
import { jsonArrayPieces } from '../../../electron/host/json-pieces.js';

describe('jsonArrayPieces', () => {
  it('makes the very text of the whole array, for none, one and many items', () => {
    const lists: unknown[][] = [[], [{ a: 1 }], Array.from({ length: 50 }, (_, i) => ({ i, s: `"quoted" ${i}`, n: null }))];
    for (const items of lists) {
      expect([...jsonArrayPieces(items)].join('')).toBe(JSON.stringify(items));
    }
  });

  it('writes an item with no JSON text as null, as JSON.stringify does in an array', () => {
    const items = [1, undefined, () => 0, 'x'];
    expect([...jsonArrayPieces(items)].join('')).toBe(JSON.stringify(items));
  });

  it('cuts pieces of about the size asked, each ending after a whole item', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ i, pad: 'x'.repeat(90) }));
    const pieces = [...jsonArrayPieces(items, undefined, 1000)];
    expect(pieces.join('')).toBe(JSON.stringify(items));
    expect(pieces.length).toBeGreaterThan(5);
    // Each piece but the last reaches the size, and goes over it by less than one item.
    const item = JSON.stringify(items[0]).length + 1;
    for (const p of pieces.slice(0, -1)) {
      expect(p.length).toBeGreaterThanOrEqual(1000);
      expect(p.length).toBeLessThan(1000 + item);
    }
  });

  it('turns an item to text only when the piece holding it is asked for', () => {
    const seen: number[] = [];
    const pieces = jsonArrayPieces(
      [0, 1, 2, 3],
      (n) => {
        seen.push(n);
        return String(n).padStart(10, '0');
      },
      10,
    );
    expect(seen).toEqual([]);
    expect(pieces.next().value).toBe('[0000000000');
    expect(seen).toEqual([0]);
    expect([...pieces].join('')).toBe(',0000000001,0000000002,0000000003]');
    expect(seen).toEqual([0, 1, 2, 3]);
  });
});
