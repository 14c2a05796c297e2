/**
 * The short version of the torture run's python-agents scenario (`npm run torture` runs 200 kills' worth and more).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { pythonKill } from './scenarios/python-kill.js';

describe('torture: python agents', () => {
  it('SIGKILLed Python agents, in every mode, resume with no step rerun, one publication, no corrupt checkpoint and the uncrashed result', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await pythonKill({ runs: 8, seed, log: () => {} });
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBe(8);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 300_000);
});
