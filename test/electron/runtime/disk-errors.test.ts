/** A failed write described as a person can act on it: the file, what went wrong, what to do. */
import { describe, expect, it } from 'vitest';
import { describeDiskError } from '../../../electron/runtime/disk-errors.js';

describe('describeDiskError', () => {
  it('names the file, the cause in words, what was left untouched and what to do', () => {
    const err = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const text = describeDiskError(err, '/data/t/lease', 'the task t was not touched');
    expect(text).toBe(
      'cannot write /data/t/lease: there is no space left on the device (ENOSPC); the task t was not touched. To continue, free some space on that disk, then run the command again',
    );
  });

  it('leaves other errors alone', () => {
    expect(describeDiskError(new Error('boom'), '/f', 'nothing')).toBeNull();
  });
});
