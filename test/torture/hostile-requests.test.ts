/**
 * The short version of the torture run's hostile-requests scenario (`npm run torture` runs it at full scale).
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { hostileRequests } from './scenarios/hostile-requests.js';

describe('torture: hostile-requests', () => {
  it('hostile HTTP and IPC requests get no data and write nothing, and the host keeps serving', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await hostileRequests({ runs: 400, seed, log: () => {} });
    // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(400);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 60_000);
});
