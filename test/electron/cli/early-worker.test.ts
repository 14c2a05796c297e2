import { describe, expect, it } from 'vitest';
import { startsWorker } from '../../../electron/cli/early-worker.js';

describe('the worker started early', () => {
  it('is started only for the commands that run one, and not for their help', () => {
    expect(startsWorker(['run', 'DIR', 'checkpoint-demo'])).toBe(true);
    expect(startsWorker(['resume', 'DIR', 'TASK', '--mode', 'auto'])).toBe(true);
    expect(startsWorker(['approve', 'DIR', 'TASK'])).toBe(true);
    expect(startsWorker(['run', '--help'])).toBe(false);
    expect(startsWorker(['reject', 'DIR', 'TASK'])).toBe(false);
    expect(startsWorker(['ls', 'run'])).toBe(false);
    expect(startsWorker(['--version'])).toBe(false);
    expect(startsWorker([])).toBe(false);
  });
});
