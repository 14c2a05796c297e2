import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HOST_YOUNG_GENERATION_BYTES } from '../../../electron/host/host-heap.js';

const CHILD = path.join(import.meta.dirname, 'young-generation-child.ts');

/** The young generation's largest size in a fresh process making what a host's list build makes. */
async function largestYoungGeneration(hold: boolean): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', CHILD, hold ? 'hold' : 'free']);
  const report = JSON.parse(stdout) as { largest: number; kept: number };
  expect(report.kept).toBe(1_500_000);
  return report.largest;
}

describe('holdHostHeapGrowth', () => {
  it("stops the young generation's growth at its size, where V8 alone doubles it past that", async () => {
    const [held, free] = await Promise.all([largestYoungGeneration(true), largestYoungGeneration(false)]);
    // Without the hold the same allocations take it further: the bound below is the hold's doing.
    expect(free).toBeGreaterThan(HOST_YOUNG_GENERATION_BYTES);
    expect(held).toBe(HOST_YOUNG_GENERATION_BYTES);
  }, 30_000);
});
