/**
 * The short version of the torture run's races scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { races } from './scenarios/races.js';

describe('torture: races', () => {
  it('one runner drives a task, the others refuse clearly; reads while another process writes are whole; the host survives its directory moving', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await races({ runs: 20, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(20);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 180_000);
});
