/**
 * A torture scenario at a small scale, as a vitest test: what `npm test` runs
 * of each (`npm run torture` runs them at full scale). The seed comes from
 * WAYSTATION_TORTURE_SEED when set, so a failing sequence can be replayed.
 */
import { describe, expect, it } from 'vitest';
import type { Scenario } from './scenario.js';

export function shortRun(name: string, promise: string, scenario: Scenario, runs: number, timeoutMs: number): void {
  describe(`torture: ${name}`, () => {
    it(
      promise,
      async () => {
        const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
        const report = await scenario({ runs, seed, log: () => {} });
        // Joined, so a failure prints what went wrong rather than "[ Array(1) ]".
        expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
        expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
        // Every check ran: the scenario did its runs and injected its faults.
        expect(report.runs).toBeGreaterThanOrEqual(runs);
        expect(report.faultsInjected).toBeGreaterThan(0);
      },
      timeoutMs,
    );
  });
}
