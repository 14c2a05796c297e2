/**
 * The short version of the torture run's malformed-input scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { malformedInput } from './scenarios/malformed-input.js';

describe('torture: malformed-input', () => {
  it('every reader answers a mutated task with a typed problem, never a crash or a hang, and changes no byte', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await malformedInput({ runs: 40, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(40);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 120_000);
});
