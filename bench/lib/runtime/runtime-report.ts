/**
 * The runtime bench's Markdown: each figure beside its target, every ratio
 * from samples of the same run.
 */
import { percentile } from '../percentile.js';
import { formatBytes, formatMs, formatRatio } from '../format.js';
import { formatTable } from '../table.js';
import type { RuntimeCaseResult } from './runtime-side.js';
import type { GraphRunResult } from './langgraph-graph.js';

/** The figures of one case that the targets speak of. */
export interface RuntimeFigures {
  earlyP50: number;
  lateP50: number;
  /** Late step / early step, p50 (target at most 1.5). */
  lateOverEarly: number;
  stepP50: number;
  directP50: number;
  /** The runtime's cost per step / the store's own save of the same work, p50 (target at most 2). */
  stepOverDirect: number;
  storeSaveP50: number;
  /** Task folder / payload (target at most 2). */
  storageRatio: number;
  storageRatioWithoutHot: number;
  readMedian: number;
  /** The read of a reader beside the running task (RuntimeCaseResult.liveRead), median. */
  liveReadMedian: number;
}

/** The figures of a case, computed from its samples. */
export function runtimeFigures(r: RuntimeCaseResult): RuntimeFigures {
  const early = r.stepMs.slice(r.early.from - 1, r.early.to);
  const late = r.stepMs.slice(r.late.from - 1, r.late.to);
  const earlyP50 = percentile(early, 50);
  const lateP50 = percentile(late, 50);
  const stepP50 = percentile(r.stepMs, 50);
  const directP50 = percentile(r.directSaveMs, 50);
  const hot = r.storage.byEntry['checkpoint.json'] ?? 0;
  return {
    earlyP50,
    lateP50,
    lateOverEarly: lateP50 / earlyP50,
    stepP50,
    directP50,
    stepOverDirect: stepP50 / directP50,
    storeSaveP50: percentile(r.storeSaveMs, 50),
    storageRatio: r.storage.task.apparentBytes / r.storage.payloadBytes,
    storageRatioWithoutHot: (r.storage.task.apparentBytes - hot) / r.storage.payloadBytes,
    readMedian: percentile(r.read.ms, 50),
    liveReadMedian: percentile(r.liveRead.ms, 50),
  };
}

const verdict = (value: number, limit: number) => `${formatRatio(value)} (<= ${limit}x: ${value <= limit ? 'met' : 'not met'})`;

/** The report's tables for every case. */
export function formatRuntimeBench(results: readonly RuntimeCaseResult[]): string {
  const rows = results.map((r) => {
    const f = runtimeFigures(r);
    return [
      `${r.steps.toLocaleString('en-US')} of ${r.planSteps.toLocaleString('en-US')}`,
      `${formatMs(f.earlyP50)} / ${formatMs(f.lateP50)}`,
      verdict(f.lateOverEarly, 1.5),
      `${formatMs(f.stepP50)} (${r.savesPerStep.toFixed(2)} saves, each ${formatMs(f.storeSaveP50)})`,
      formatMs(f.directP50),
      verdict(f.stepOverDirect, 2),
      `${verdict(f.storageRatio, 2)}; ${formatRatio(f.storageRatioWithoutHot)} without checkpoint.json`,
      `${formatMs(f.readMedian)} (${r.read.messages.toLocaleString('en-US')} messages)`,
      formatMs(f.liveReadMedian),
    ];
  });
  const table = formatTable(
    [
      { header: 'steps run of plan' },
      { header: 'step p50, early / late', align: 'right' },
      { header: 'late / early' },
      { header: 'runtime per step p50', align: 'right' },
      { header: 'store save, direct p50', align: 'right' },
      { header: 'runtime / direct save' },
      { header: 'task folder / payload' },
      { header: 'latest state + messages', align: 'right' },
      { header: 'the same, beside the running task', align: 'right' },
    ],
    rows,
  );
  const storage = results.map((r) => {
    const parts = Object.entries(r.storage.byEntry)
      .sort((a, b) => b[1] - a[1])
      .map(([name, bytes]) => `${name} ${formatBytes(bytes)}`)
      .join(', ');
    return `- ${r.steps.toLocaleString('en-US')} of ${r.planSteps.toLocaleString('en-US')}: payload ${formatBytes(r.storage.payloadBytes)}, task folder ${formatBytes(r.storage.task.apparentBytes)} in ${r.storage.task.files} files (${parts})`;
  });
  return [
    table,
    '',
    "A step is `ctx.step` from call to return with the agent's own work taken out: the model call (answered at once), the step's save with its result and the model call's record (one version a step), and their events. \"Direct\" is the same work saved by calling the store once a step, in the same run. Early and late: the first and last tenth of the steps (at most 100 each). The latest state with its messages: `getTask` + `readHistory` on a freshly opened store (median, timed after as many untimed reads as the graph makes before its timed read), and, beside the running task, a store kept open in a process of its own reading `getTask` + the messages of the version read after those it holds (`readHistoryAfter`) after each of the last 100 steps, as an inspector's host does, in a second run of the agent (median of the reads after the last nine steps).",
    '',
    ...storage,
  ].join('\n');
}

/** The figures of the runtime set beside the real graph at one N. */
export interface GraphFigures {
  steps: number;
  /** Mean per step over the whole run (sampled graph: over the steps it ran), graph / Waystation (target at 100 steps: at least 1). */
  meanSpeedup: number;
  /** Late step p50, graph / Waystation (target at 10,000 steps: at least 10). */
  lateSpeedup: number;
  /** Graph storage / Waystation storage (target at 10,000 steps: at least 100). */
  storageAdvantage: number;
  /** Graph getState / Waystation latest read, medians (target: at least 1 at every N). */
  readAdvantage: number;
  /** The same with the graph too opened for its read (GraphRunResult.freshRead), medians: like for like, no target of its own. */
  freshReadAdvantage: number;
  /** The graph's getState after each of its last steps / the read beside the running task after each step, medians. */
  liveReadAdvantage: number;
}

/** Compare a runtime case with the graph run of the same N. */
export function graphFigures(r: RuntimeCaseResult, g: GraphRunResult): GraphFigures {
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ranRuntime = g.sampled
    ? [...r.stepMs.slice(r.early.from - 1, r.early.to), ...r.stepMs.slice(r.late.from - 1, r.late.to)]
    : r.stepMs;
  return {
    steps: r.steps,
    meanSpeedup: mean(g.stepMs) / mean(ranRuntime),
    lateSpeedup: percentile(g.lateMs, 50) / percentile(r.stepMs.slice(r.late.from - 1, r.late.to), 50),
    storageAdvantage: g.storageBytes / r.storage.task.apparentBytes,
    readAdvantage: percentile(g.read.ms, 50) / percentile(r.read.ms, 50),
    freshReadAdvantage: percentile(g.freshRead.ms, 50) / percentile(r.read.ms, 50),
    liveReadAdvantage: percentile(g.readAfterStep, 50) / percentile(r.liveRead.ms, 50),
  };
}

const atLeast = (value: number, limit: number) => `${formatRatio(value)} (>= ${limit}x: ${value >= limit ? 'met' : 'not met'})`;

/** The table of the runtime against the real graph, with the targets that apply at each N. */
export function formatGraphComparison(cases: readonly RuntimeCaseResult[], graphs: readonly GraphRunResult[]): string {
  const rows: string[][] = [];
  for (const g of graphs) {
    const r = cases.find((c) => c.steps === g.steps && c.planSteps === g.steps);
    if (!r) continue;
    const f = graphFigures(r, g);
    const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    rows.push([
      `${g.steps.toLocaleString('en-US')}${g.sampled ? ' (graph sampled)' : ''}`,
      `${formatMs(mean(r.stepMs))} / ${formatMs(mean(g.stepMs))}`,
      g.steps <= 100 ? atLeast(f.meanSpeedup, 1) : formatRatio(f.meanSpeedup),
      `${formatMs(percentile(r.stepMs.slice(r.late.from - 1, r.late.to), 50))} / ${formatMs(percentile(g.lateMs, 50))}`,
      g.steps >= 10_000 ? atLeast(f.lateSpeedup, 10) : formatRatio(f.lateSpeedup),
      `${formatBytes(r.storage.task.apparentBytes)} / ${formatBytes(g.storageBytes)}${g.storageProjected ? ' (projected)' : ''}`,
      g.steps >= 10_000 ? atLeast(f.storageAdvantage, 100) : formatRatio(f.storageAdvantage),
      `${formatMs(percentile(r.read.ms, 50))} / ${formatMs(percentile(g.read.ms, 50))} (${r.read.messages} / ${g.read.messages} msgs)`,
      atLeast(f.readAdvantage, 1),
      `${formatMs(percentile(r.read.ms, 50))} / ${formatMs(percentile(g.freshRead.ms, 50))}`,
      formatRatio(f.freshReadAdvantage),
      `${formatMs(percentile(r.liveRead.ms, 50))} / ${formatMs(percentile(g.readAfterStep, 50))}`,
      atLeast(f.liveReadAdvantage, 1),
    ]);
  }
  const table = formatTable(
    [
      { header: 'steps' },
      { header: 'per step mean, Waystation / graph', align: 'right' },
      { header: 'graph / Waystation' },
      { header: 'late step p50, Waystation / graph', align: 'right' },
      { header: 'graph / Waystation' },
      { header: 'storage, Waystation / graph', align: 'right' },
      { header: 'graph / Waystation' },
      { header: 'latest state + messages', align: 'right' },
      { header: 'graph / Waystation' },
      { header: 'the same, the graph too opened for its read', align: 'right' },
      { header: 'graph / Waystation' },
      { header: 'after each step, Waystation beside the task / graph', align: 'right' },
      { header: 'graph / Waystation' },
    ],
    rows,
  );
  const mode = graphs[0]?.sqlite;
  return [
    table,
    '',
    `The graph: \`StateGraph\` (@langchain/langgraph) with one node that appends the step's message and stores its result, compiled with \`SqliteSaver\` (journal_mode=${mode?.journalMode ?? '?'}, synchronous=${mode?.synchronous ?? '?'}), invoked once a step with \`durability: "sync"\`; its read is \`getState\`, repeated once the run is over and, outside the steps' timing, after each of its last nine steps; opened for its read, \`getState\` of the graph compiled anew over a \`SqliteSaver\` opened for it and closed after (timed after nine untimed reads like it, as a process that did not run the graph reads it: set beside Waystation's read on a freshly opened store, like for like, without a target of its own). Waystation: the bench agent through the runtime (one version a step, the model call saved with the step), its read \`getTask\` + \`readHistory\` on a freshly opened store (timed after as many untimed reads like it: the agent's run never calls that code, where the graph loads its state within every step and reads it after its last steps), and beside the running task a store kept open in a process of its own reading \`getTask\` + \`readHistoryAfter\` (the messages of the version read after those it holds, as a host asks for those of the version it shows) after each step (median of the last nine), set beside the graph's read after each of its last nine steps: each read follows a change; it holds two messages a step (the prompt and the reply), the graph one.`,
  ].join('\n');
}
