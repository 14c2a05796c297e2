/**
 * `node bin/waystation-tsx.mjs bench/langgraph-bench.ts`: the LangGraph source
 * bench alone (the same figures `npm run bench` prints under "LangGraph
 * source"), for profiling it without the other benches.
 *
 *   --threads N   threads in the fixture (default 100, twenty questions each)
 *   --runs N      listings per run; opens and diffs are ten times as many (default 5)
 */
import { parseArgs } from 'node:util';
import { formatLangGraphBench, runLangGraphBench } from './lib/langgraph-source-bench.js';

const { values } = parseArgs({ options: { threads: { type: 'string' }, runs: { type: 'string' } } });
const whole = (name: string, raw: string | undefined, fallback: number): number => {
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} takes a whole number of at least 1, got "${raw}"`);
    process.exit(2);
  }
  return n;
};
const result = await runLangGraphBench({
  threads: whole('threads', values.threads, 100),
  questions: 20,
  runs: whole('runs', values.runs, 5),
  log: (line) => console.error(line),
});
console.log(formatLangGraphBench(result));
