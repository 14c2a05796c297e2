/**
 * The runtime benchmark, run end to end at a tiny size: the agent runs
 * through the runtime, the store floor and the real LangGraph graph run
 * beside it, and the report quotes every figure with its target. Nothing here
 * is timed; speed is the benchmark's business.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runRuntimeBench, runtimeCases, type RuntimeBenchResult } from '../../bench/lib/runtime/runtime-bench.js';
import { formatGraphComparison, formatRuntimeBench, graphFigures, runtimeFigures } from '../../bench/lib/runtime/runtime-report.js';
import { payloadBytes } from '../../bench/lib/runtime/runtime-side.js';

describe('the runtime benchmark at 20 steps', () => {
  let result: RuntimeBenchResult;

  beforeAll(async () => {
    result = await runRuntimeBench({
      steps: [20],
      largePlans: [60],
      firstSteps: 10,
      readRuns: 1,
      langgraph: { fullUpTo: 20 },
      warmUpSteps: 5,
    });
  }, 120_000);

  it('runs each case it plans: every step through the runtime, and the store floor beside it', () => {
    expect(result.cases.map((c) => [c.steps, c.planSteps])).toEqual([
      [20, 20],
      [10, 60],
    ]);
    for (const c of result.cases) {
      expect(c.stepMs).toHaveLength(c.steps);
      expect(c.directSaveMs).toHaveLength(c.steps);
      // One save a step (the model's reply goes with the step's result, the step returning at once), plus the one
      // that ends the drive.
      expect(c.storeSaveMs.length).toBe(c.steps + 1);
      expect(c.storage.payloadBytes).toBe(payloadBytes(c.steps));
      expect(c.storage.task.apparentBytes).toBeGreaterThan(c.storage.payloadBytes);
      expect(Object.keys(c.storage.byEntry)).toEqual(expect.arrayContaining(['versions', 'checkpoint.json', 'events.jsonl']));
      // The prompt and the reply of every step, read afresh and by the reader beside a run of its own, which
      // timed its reads after the last nine steps (not the first it made: that one takes the whole history).
      expect(c.read.messages).toBe(2 * c.steps);
      // Timed after as many untimed reads as the graph makes before its own timed read (after its last steps).
      expect(c.read.untimed).toBe(result.graphs[0].readAfterStep.length);
      expect(c.liveRead.messages).toBe(2 * c.steps);
      expect(c.liveRead.ms).toHaveLength(9);
      const f = runtimeFigures(c);
      for (const v of Object.values(f)) expect(Number.isFinite(v) && v > 0).toBe(true);
    }
  });

  it('runs the real graph beside the case of a plan as long as its run, every step and one read of its state', () => {
    expect(result.graphs).toHaveLength(1);
    const g = result.graphs[0];
    expect(g.sampled).toBe(false);
    expect(g.stepMs).toHaveLength(20);
    expect(g.read.messages).toBe(21);
    // Read after each of its last nine steps too, as the reader beside Waystation's task reads.
    expect(g.readAfterStep).toHaveLength(9);
    // Read by a graph opened for the read too, as often untimed first as Waystation's fresh read (each read checks
    // it found every message).
    expect(g.freshRead.untimed).toBe(result.cases[0].read.untimed);
    expect(g.freshRead.ms.length).toBeGreaterThan(0);
    expect(g.sqlite.synchronous).toBe(2);
    const f = graphFigures(result.cases[0], g);
    for (const v of Object.values(f)) expect(Number.isFinite(v) && v > 0).toBe(true);
  });

  it('reports each figure beside its target', () => {
    const runtime = formatRuntimeBench(result.cases);
    expect(runtime).toContain('| 20 of 20 ');
    expect(runtime).toContain('| 10 of 60 ');
    expect(runtime.match(/<= 1\.5x: (met|not met)/g)).toHaveLength(2);
    expect(runtime.match(/<= 2x: (met|not met)/g)).toHaveLength(4);
    const graph = formatGraphComparison(result.cases, result.graphs);
    expect(graph).toMatch(/\| 20 +\|/);
    // At 20 steps: the mean step, the fresh read and the read beside the running task, each against the graph.
    expect(graph.match(/>= 1x: (met|not met)/g)).toHaveLength(3);
    expect(graph).toContain('after each step, Waystation beside the task / graph');
    expect(graph).toContain('the same, the graph too opened for its read');
    expect(graph).toContain('synchronous=2');
  });

  it('plans a large plan once, and not beside an equal case', () => {
    expect(runtimeCases({ steps: [100], largePlans: [100, 10_000] })).toEqual([
      { steps: 100, planSteps: 100 },
      { steps: 100, planSteps: 10_000 },
    ]);
  });
});
