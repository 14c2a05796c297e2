/**
 * The short version of the torture run's torn-writes scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { tornWrites } from './scenarios/torn-writes.js';

describe('torture: torn-writes', () => {
  it('a power cut at any write recovers to a written version, never before the last durable one, accounted for, and saves on', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await tornWrites({ runs: 120, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(120);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 60_000);
});
