/**
 * The short version of the torture run's untrusted-input scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { untrustedInput } from './scenarios/untrusted-input.js';

describe('torture: untrusted-input', () => {
  it('an untrusted directory runs nothing, no path is an agent, no bad id runs, no save writes what readers refuse', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await untrustedInput({ runs: 120, seed, log: () => {} });
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(120);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 120_000);
});
