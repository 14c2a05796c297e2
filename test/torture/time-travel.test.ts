/**
 * The short version of the torture run's time-travel scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { timeTravel } from './scenarios/time-travel.js';

describe('torture: time travel', () => {
  it('fork, rewind and edit killed mid-way and stops sent mid-run leave no half-written operation, lose no version, change no parent, and repeat no effect', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await timeTravel({ runs: 4, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBe(4);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 240_000);
});
