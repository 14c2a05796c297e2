import { describe, expect, it } from 'vitest';
import { KeyedSerial } from '../../../electron/store/keyed-serial.js';

/** A promise and the functions that settle it, for calls whose order the test decides. */
function gate() {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const done = new Promise<void>((resolve, reject) => ((open = resolve), (fail = reject)));
  return { done, open, fail };
}

describe('KeyedSerial', () => {
  it('runs the calls of one key one after the other, those of another key alongside, and goes on past a failure', async () => {
    const serial = new KeyedSerial();
    const order: string[] = [];
    const first = gate();
    const a1 = serial.run('a', async () => (order.push('a1 start'), await first.done, order.push('a1 end'), 1));
    const a2 = serial.run('a', async () => (order.push('a2'), 2));
    const b1 = serial.run('b', async () => (order.push('b1'), 3));
    expect(await b1).toBe(3);
    // b ran while a's first call was still held open; a's second waits for it.
    expect(order).toEqual(['a1 start', 'b1']);
    first.fail(new Error('a1 failed'));
    await expect(a1).rejects.toThrow('a1 failed');
    expect(await a2).toBe(2);
    expect(order).toEqual(['a1 start', 'b1', 'a2']);
    // A key gone idle starts at once.
    expect(await serial.run('a', async () => 4)).toBe(4);
  });
});
