import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../../electron/host/serial-queue.js';

describe('the serial queue', () => {
  it('runs work one piece after the other, in the order it was queued', async () => {
    const queue = new SerialQueue();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = queue.run(async () => {
      await gate;
      seen.push('first');
      return 1;
    });
    const second = queue.run(async () => {
      seen.push('second');
      return 2;
    });
    await Promise.resolve();
    expect(seen).toEqual([]);
    release();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(seen).toEqual(['first', 'second']);
  });

  it('carries on past a failure, which reaches only the caller of the failed work', async () => {
    const queue = new SerialQueue();
    const failed = queue.run(async () => {
      throw new Error('one batch failed');
    });
    const next = queue.run(async () => 'next ran');
    await expect(failed).rejects.toThrow('one batch failed');
    expect(await next).toBe('next ran');
    await expect(queue.idle()).resolves.toBeUndefined();
  });
});
