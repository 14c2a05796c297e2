/**
 * The short version of the torture run's crash-kill scenario on PostgreSQL
 * (`npm run torture -- --only crashes-postgres` runs it at full scale):
 * runners and workers SIGKILLed at random moments, mid-transaction included,
 * their tasks kept in a database of the throwaway cluster.
 * WAYSTATION_TORTURE_SEED replays a failing sequence.
 */
import { describe, expect, it } from 'vitest';
import { crashKillPostgres } from './scenarios/crash-kill.js';

describe('torture: crash-kill on PostgreSQL', () => {
  it('SIGKILLed runners and workers resume from the database with no step rerun, no double effect, no corrupt task and the uncrashed result', async () => {
    const seed = Number(process.env.WAYSTATION_TORTURE_SEED ?? Date.now() % 1_000_000);
    const report = await crashKillPostgres({ runs: 6, seed, log: () => {} });
    expect(report.examples.join('\n'), `seed ${seed}`).toBe('');
    expect(report.violations.filter((v) => v.count > 0)).toEqual([]);
    expect(report.runs).toBeGreaterThanOrEqual(6);
    expect(report.faultsInjected).toBeGreaterThan(0);
  }, 180_000);
});
