import { describe, expect, it } from 'vitest';
import { tornWrites } from './scenarios/torn-writes.js';

describe('a power cut at a random write', () => {
  it('recovers to a version that was written, never before the last durable one, accounts for the loss and saves on', async () => {
    const report = await tornWrites({ runs: 120, seed: Number(process.env.WAYSTATION_TORTURE_SEED ?? 7), log: () => {} });
    expect(report.examples).toEqual([]);
    expect(report.violations.every((v) => v.count === 0)).toBe(true);
    expect(report.runs).toBe(120);
  }, 60_000);
});
