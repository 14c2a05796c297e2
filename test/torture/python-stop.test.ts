/**
 * The short version of the torture run's python-stops scenario (`npm run torture` runs 200 and more).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { pythonStop } from './scenarios/python-stop.js';

describe('torture: python agents asked to stop', () => {
  it('stop at a boundary or finish, then resume to the undisturbed result with no step rerun and one publication', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await pythonStop({ runs: 6, seed, log: () => {} });
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBe(6);
    expect(report.faultsInjected).toBeGreaterThanOrEqual(6);
  }, 300_000);
});
