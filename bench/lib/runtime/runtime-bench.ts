/**
 * The runtime bench: the bench agent through the runtime at each size, each
 * case beside the store called directly with the same work, in one run.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runRuntimeCase, type RuntimeCase, type RuntimeCaseResult } from './runtime-side.js';
import { runLangGraphGraph, type GraphRunResult } from './langgraph-graph.js';

export interface RuntimeBenchOptions {
  /** Steps run, one case each with a plan of as many steps. */
  steps: readonly number[];
  /** Plan sizes run for `firstSteps` steps each, so a large plan's early steps can be set beside a small plan's. */
  largePlans?: readonly number[];
  /** Steps run of each large plan (default 100). */
  firstSteps?: number;
  readRuns?: number;
  /**
   * Run the real LangGraph graph beside each case whose plan is as long as its run, every step up to
   * `fullUpTo` steps, sampled above (see langgraph-graph.ts); omitted: no graph.
   */
  langgraph?: { fullUpTo: number };
  /**
   * Steps of a first case (and graph) run and thrown away, so the first case measured finds the code of both of
   * its sides compiled: without it, the first case ran the runtime cold and the direct saves after it warm
   * (default 50; 0 for none).
   */
  warmUpSteps?: number;
  /** Where the stores are made (default: a temp folder, removed after). */
  dir?: string;
  log?: (line: string) => void;
}

/** The cases a run makes, in order. */
export function runtimeCases(opts: RuntimeBenchOptions): RuntimeCase[] {
  const first = opts.firstSteps ?? 100;
  const cases: RuntimeCase[] = opts.steps.map((n) => ({ steps: n, planSteps: n }));
  for (const plan of opts.largePlans ?? []) {
    const steps = Math.min(first, plan);
    if (!cases.some((c) => c.steps === steps && c.planSteps === plan)) cases.push({ steps, planSteps: plan });
  }
  return cases;
}

export interface RuntimeBenchResult {
  cases: RuntimeCaseResult[];
  /** The graph beside each case of as many plan steps as steps run, by steps. */
  graphs: GraphRunResult[];
}

/** Run every case, and the graph beside it when asked; each gets a fresh folder. */
export async function runRuntimeBench(opts: RuntimeBenchOptions): Promise<RuntimeBenchResult> {
  const base = opts.dir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-runtime-bench-')));
  const cases: RuntimeCaseResult[] = [];
  const graphs: GraphRunResult[] = [];
  try {
    const warm = opts.warmUpSteps ?? 50;
    if (warm > 0) {
      opts.log?.(`warming up: ${warm} steps, not reported`);
      const dir = path.join(base, 'warm-up');
      await runRuntimeCase({ steps: warm, planSteps: warm }, path.join(dir, 'runtime'), 1);
      if (opts.langgraph) {
        await fs.mkdir(path.join(dir, 'graph'), { recursive: true });
        await runLangGraphGraph({ steps: warm, seed: 1, dir: path.join(dir, 'graph'), fullUpTo: warm, readRuns: 1 });
      }
      await fs.rm(dir, { recursive: true, force: true });
    }
    for (const c of runtimeCases(opts)) {
      opts.log?.(`runtime: ${c.steps} steps of a ${c.planSteps}-step plan`);
      const dir = path.join(base, `${c.steps}-of-${c.planSteps}`);
      await fs.rm(dir, { recursive: true, force: true });
      cases.push(await runRuntimeCase(c, dir, opts.readRuns ?? 3));
      await fs.rm(dir, { recursive: true, force: true });
      if (opts.langgraph && c.planSteps === c.steps) {
        opts.log?.(`langgraph: ${c.steps} steps`);
        await fs.mkdir(dir, { recursive: true });
        graphs.push(
          await runLangGraphGraph({ steps: c.steps, seed: 1, dir, fullUpTo: opts.langgraph.fullUpTo, readRuns: opts.readRuns ?? 3 }),
        );
        await fs.rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    if (!opts.dir) await fs.rm(base, { recursive: true, force: true });
  }
  return { cases, graphs };
}
