/**
 * The short version of the torture run's crash-kill scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { crashKill } from './scenarios/crash-kill.js';

describe('torture: crash-kill', () => {
  it('SIGKILLed runners and workers, in every mode, resume with no step rerun, no double effect, no corrupt checkpoint and the uncrashed result', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await crashKill({ runs: 12, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(12);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 180_000);
});
