/**
 * `node bin/waystation-tsx.mjs bench/langgraph-bench.ts`: the LangGraph source
 * bench alone (the same figures `npm run bench` prints under "LangGraph
 * source"), for profiling it without the other benches.
 *
 *   --threads N   threads in the fixture (default 100, twenty questions each)
 *   --runs N      listings per run; opens and diffs are ten times as many (default 5)
 */
import { benchOptions, wholeNumber } from './lib/bench-args.js';
import { formatLangGraphBench, runLangGraphBench } from './lib/langgraph-source-bench.js';

const values = benchOptions(import.meta.url, { threads: { type: 'string' }, runs: { type: 'string' } });
const result = await runLangGraphBench({
  threads: wholeNumber('threads', values.threads, 100),
  questions: 20,
  runs: wholeNumber('runs', values.runs, 5),
  log: (line) => console.error(line),
});
console.log(formatLangGraphBench(result));
