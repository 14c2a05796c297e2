import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runLangGraph, sampledSchedule, serializedRunBytes } from '../../../../bench/lib/compare/langgraph-side.js';
import { middleStep, timedRanges } from '../../../../bench/lib/compare/side-result.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-langgraph-side-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the LangGraph side', () => {
  it('computes exactly the serialized bytes a full run hands to the saver', async () => {
    const run = await runLangGraph({ kind: 'memory', steps: 7, seed: 3, dir, sampled: false, readRuns: 1 });
    expect(run.serializedBytes).toBe(await serializedRunBytes(7, 3));
    // The memory saver holds exactly what it was handed.
    expect(run.storage.bytes).toBe(run.serializedBytes);
  });

  it('runs SQLite with WAL and synchronous=FULL and measures its files', async () => {
    const run = await runLangGraph({ kind: 'sqlite', steps: 6, seed: 3, dir, sampled: false, readRuns: 1 });
    expect(run.sqlite).toMatchObject({ journalMode: 'wal', synchronous: 2 });
    expect(run.storage.bytes).toBe(run.sqlite!.dbBytes + run.sqlite!.walBytes + run.sqlite!.shmBytes);
    expect(run.calibration?.steps).toBe(6);
    expect(run.reads.latest.messages).toBe(7);
    expect(run.reads.middle.messages).toBe(middleStep(6) + 1);
  });

  it('samples the early, middle and late steps and reads the same states as a full run', async () => {
    const steps = 40;
    const full = await runLangGraph({ kind: 'memory', steps, seed: 9, dir, sampled: false, readRuns: 1 });
    const sampled = await runLangGraph({ kind: 'memory', steps, seed: 9, dir, sampled: true, readRuns: 1 });
    const { early, late } = timedRanges(steps);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const expected = new Set([...range(early.from, early.to), middleStep(steps), late.from - 1, ...range(late.from, late.to)]);
    expect(sampledSchedule(steps)).toEqual([...expected].sort((a, b) => a - b));
    expect(sampledSchedule(steps).length).toBeLessThan(steps);
    expect(sampled.saves.allMs).toBeNull();
    expect(sampled.saves.earlyMs).toHaveLength(full.saves.earlyMs.length);
    expect(sampled.saves.lateMs).toHaveLength(full.saves.lateMs.length);
    expect(sampled.storage).toMatchObject({ projected: true, bytes: full.storage.bytes });
    expect({ latest: sampled.reads.latest.lastMessage, middle: sampled.reads.middle.lastMessage }).toEqual({
      latest: full.reads.latest.lastMessage,
      middle: full.reads.middle.lastMessage,
    });
  });
});
