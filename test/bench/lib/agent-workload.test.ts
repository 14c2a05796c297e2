import { describe, expect, it } from 'vitest';
import { MESSAGE_BYTES, workloadMessage, workloadResult, workloadStepId } from '../../../bench/lib/agent-workload.js';

describe('the agent workload', () => {
  it('encodes every message to exactly MESSAGE_BYTES bytes of JSON', () => {
    for (const index of [0, 1, 2, 3, 99, 10_000]) {
      expect(Buffer.byteLength(JSON.stringify(workloadMessage(7, index)))).toBe(MESSAGE_BYTES);
    }
  });

  it('gives the same bytes for the same seed and index, in any order', () => {
    const forward = [1, 2, 3].map((i) => workloadMessage(5, i));
    const backward = [3, 2, 1].map((i) => workloadMessage(5, i)).reverse();
    expect(backward).toEqual(forward);
    expect(workloadResult(5, 42)).toEqual(workloadResult(5, 42));
  });

  it('varies with the seed and the index', () => {
    expect(workloadMessage(1, 1).content).not.toBe(workloadMessage(2, 1).content);
    expect(workloadMessage(1, 1).content).not.toBe(workloadMessage(1, 2).content);
  });

  it('numbers step ids so that they sort like the steps', () => {
    const ids = [2, 10, 1, 10_000].map(workloadStepId);
    expect([...ids].sort()).toEqual([1, 2, 10, 10_000].map(workloadStepId));
  });
});
