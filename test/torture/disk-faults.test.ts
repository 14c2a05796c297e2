/**
 * The short version of the torture run's disk-faults scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { diskFaults } from './scenarios/disk-faults.js';

describe('torture: disk-faults', () => {
  it('ENOSPC, EACCES and EIO give clear errors, leave the previous version intact, and the task resumes once they are gone', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await diskFaults({ runs: 45, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(45);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 120_000);
});
