/**
 * The LangGraph source at scale: a SQLite file of 10,000 checkpoints over 100
 * threads, written by real LangGraph (langgraph-fixture.ts). Measured:
 *
 *   - listing the threads, from a fresh source (the file opened and copied
 *     into memory, every thread's latest checkpoint decoded and mapped);
 *   - opening one checkpoint (any version of any thread, fresh each time);
 *   - a diff of two checkpoints of a thread (both read, the structured diff,
 *     the semantic summary and the LangGraph words with both message lists).
 *
 * Each against a baseline measured in the same run: LangGraph's own
 * SqliteSaver doing the nearest thing it can (getTuple of each thread's
 * latest checkpoint; getTuple of the one checkpoint; getTuple of both), so
 * the ratio says what the mapping costs over LangGraph's own reading.
 */
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import { langGraphPartOf, summarizeLangGraphChange } from '../../shared/diff/langgraph-change.js';
import { openLangGraphSource } from '../../electron/sources/langgraph/open-langgraph.js';
import { benchThreadId, ensureLangGraphFixture, type LangGraphFixture } from './langgraph-fixture.js';
import { summarize, type SampleSummary } from './percentile.js';
import { formatBytes, formatCount, formatMs, formatRatio } from './format.js';
import { nowNs, msSince } from './timing.js';

export interface LangGraphBenchResult {
  fixture: LangGraphFixture;
  list: { waystation: SampleSummary; langgraph: SampleSummary; budgetMs: number };
  open: { waystation: SampleSummary; langgraph: SampleSummary; budgetMs: number };
  openFresh: { waystation: SampleSummary; budgetMs: number };
  diff: { waystation: SampleSummary; langgraph: SampleSummary; budgetMs: number };
}

async function sample(runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = nowNs();
    await fn(i);
    out.push(msSince(start));
  }
  return out;
}

/** A deterministic spread of (thread, version) pairs over the fixture. */
const pick = (i: number, threads: number, versions: number) => ({ thread: (i * 37) % threads, version: 1 + ((i * 53) % versions) });

export async function runLangGraphBench(opts: {
  threads: number;
  questions: number;
  runs: number;
  log: (line: string) => void;
}): Promise<LangGraphBenchResult> {
  const fixture = await ensureLangGraphFixture(opts.threads, opts.questions, opts.log);
  const perThread = opts.questions * 5;
  const saver = SqliteSaver.fromConnString(fixture.file);
  const idsOf = new Map<string, string[]>();
  // The checkpoint ids by version, for the baseline's getTuple (listed once, outside the timings).
  {
    const source = await openLangGraphSource(fixture.file);
    for (let t = 0; t < opts.threads; t++) {
      const history = await source.history(benchThreadId(t));
      idsOf.set(
        benchThreadId(t),
        history.map((v) => (v.source as unknown as { langgraph: { checkpoint_id: string } }).langgraph.checkpoint_id),
      );
    }
    await source.close();
  }
  const tuple = (thread: string, version: number) =>
    saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: idsOf.get(thread)![version - 1] } });

  opts.log('langgraph: listing threads...');
  const listW = await sample(opts.runs, async () => {
    const source = await openLangGraphSource(fixture.file);
    const tasks = await source.listTasks();
    if (tasks.length !== opts.threads) throw new Error(`listed ${tasks.length} threads, expected ${opts.threads}`);
    await source.close();
  });
  const listL = await sample(opts.runs, async () => {
    for (let t = 0; t < opts.threads; t++) await saver.getTuple({ configurable: { thread_id: benchThreadId(t), checkpoint_ns: '' } });
  });

  opts.log('langgraph: opening checkpoints...');
  const source = await openLangGraphSource(fixture.file);
  await source.listTasks();
  const openRuns = opts.runs * 10;
  const openW = await sample(openRuns, async (i) => {
    const { thread, version } = pick(i, opts.threads, perThread);
    await source.readVersion(benchThreadId(thread), version);
    await source.readHistory(benchThreadId(thread), version);
  });
  const openL = await sample(openRuns, async (i) => {
    const { thread, version } = pick(i, opts.threads, perThread);
    await tuple(benchThreadId(thread), version);
  });
  // A command-line `show`: a fresh source, the file copied and opened, one checkpoint read.
  const openFresh = await sample(opts.runs, async (i) => {
    const fresh = await openLangGraphSource(fixture.file);
    const { thread, version } = pick(i + 7, opts.threads, perThread);
    await fresh.readVersion(benchThreadId(thread), version);
    await fresh.close();
  });

  opts.log('langgraph: diffs...');
  const diffW = await sample(openRuns, async (i) => {
    const { thread } = pick(i, opts.threads, perThread);
    const id = benchThreadId(thread);
    const [a, b] = [1 + ((i * 11) % (perThread - 1)), perThread];
    const [from, to] = await source.readVersions(id, [a, b]);
    structuredDiff(from, to);
    summarizeChange(from, to);
    summarizeLangGraphChange(
      langGraphPartOf(from)!,
      langGraphPartOf(to)!,
      await source.readHistory(id, a),
      await source.readHistory(id, b),
    );
  });
  const diffL = await sample(openRuns, async (i) => {
    const { thread } = pick(i, opts.threads, perThread);
    const id = benchThreadId(thread);
    await tuple(id, 1 + ((i * 11) % (perThread - 1)));
    await tuple(id, perThread);
  });
  await source.close();
  (saver as unknown as { db: { close(): void } }).db.close();
  return {
    fixture,
    list: { waystation: summarize(listW), langgraph: summarize(listL), budgetMs: 1000 },
    open: { waystation: summarize(openW), langgraph: summarize(openL), budgetMs: 50 },
    openFresh: { waystation: summarize(openFresh), budgetMs: 1000 },
    diff: { waystation: summarize(diffW), langgraph: summarize(diffL), budgetMs: 200 },
  };
}

/** The result as a Markdown table. */
export function formatLangGraphBench(r: LangGraphBenchResult): string {
  const row = (what: string, w: SampleSummary, budget: number, l?: SampleSummary) =>
    `| ${what} | ${formatMs(w.p50)} | ${formatMs(w.max)} | ${formatMs(budget)} | ${w.max <= budget ? 'yes' : '**no**'} | ${l ? formatMs(l.p50) : '-'} | ${l ? formatRatio(w.p50 / l.p50) : '-'} |`;
  return [
    `${formatCount(r.fixture.checkpoints)} checkpoints over ${r.fixture.threads} threads, written by LangGraph's SqliteSaver (${formatBytes(r.fixture.bytes)}).`,
    '',
    '| operation | p50 | max | budget | within | SqliteSaver p50 | ratio |',
    '|---|---:|---:|---:|:---:|---:|---:|',
    row('list the threads (fresh source)', r.list.waystation, r.list.budgetMs, r.list.langgraph),
    row('open a checkpoint (+ its messages)', r.open.waystation, r.open.budgetMs, r.open.langgraph),
    row('diff two checkpoints (words + fields)', r.diff.waystation, r.diff.budgetMs, r.diff.langgraph),
    row('open one checkpoint from a fresh source (CLI show)', r.openFresh.waystation, r.openFresh.budgetMs),
    '',
    'Baseline: SqliteSaver.getTuple of each latest checkpoint (listing), of the checkpoint (opening), of both (diff).',
  ].join('\n');
}
