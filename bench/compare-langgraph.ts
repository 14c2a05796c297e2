/**
 * `npm run bench:compare`: Waystation's store side by side with LangGraph.js
 * checkpointers (SqliteSaver with synchronous=FULL, and MemorySaver for
 * reference), on the same agent workload, in the same run.
 *
 * Prints a Markdown report (the one docs/BENCHMARKS.md quotes) and writes
 * every sample as JSON to bench/results/compare-<date>.json.
 *
 *   --steps 100,1000,10000   task lengths to run
 *   --full-langgraph         run every LangGraph step at every N (10,000 steps
 *                            put ~50 GB through SQLite; hours, not minutes)
 *   --dir DIR                where the stores are created (default: a temp folder)
 *   --keep                   leave the stores on disk
 *   --read-runs 3            repetitions of each read (median reported)
 *   --warm-up 100            steps of a throwaway task each side saves first (0: none), in each section
 *   --seed 1                 payload seed
 *   --no-json                do not write bench/results/
 *   --skip-runtime           skip the section of an agent through the runtime against a real LangGraph
 *                            StateGraph (every graph step up to 1,000 steps; --full-langgraph: every one)
 *   --skip-postgres          skip the PostgreSQL section (Waystation's PostgreSQL store against PostgresSaver)
 *   --only-postgres          run the PostgreSQL section alone
 *   --pg-url URL             the server of the PostgreSQL section (default: a throwaway cluster, durable settings)
 *   --pg-runners 8           runners saving at once in the PostgreSQL section
 *   --pg-concurrent-steps 200  saves each of them makes
 *   --pg-list-tasks 10000    tasks of the inspector listing on PostgreSQL
 *   --pg-live-samples 50     saves timed for the live-update latency
 *   --cold-hosts 5           hosts started cold after the first, for the median of the first rows on a cold host
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchOptions, usageError, wholeNumber, wholeNumbers } from './lib/bench-args.js';
import { formatComparison, runComparison } from './lib/compare/comparison.js';
import { writeResultsFile } from './lib/results-file.js';
import { runRuntimeBench } from './lib/runtime/runtime-bench.js';
import { formatGraphComparison, formatRuntimeBench } from './lib/runtime/runtime-report.js';
import { formatPostgresComparison, runPostgresComparison } from './lib/compare/postgres-comparison.js';
import { LATER_COLD_HOSTS } from './lib/inspector-scale.js';

const values = benchOptions(import.meta.url, {
  steps: { type: 'string', default: '100,1000,10000' },
  'full-langgraph': { type: 'boolean', default: false },
  dir: { type: 'string' },
  keep: { type: 'boolean', default: false },
  'read-runs': { type: 'string' },
  'warm-up': { type: 'string' },
  seed: { type: 'string' },
  'no-json': { type: 'boolean', default: false },
  'skip-runtime': { type: 'boolean', default: false },
  'skip-postgres': { type: 'boolean', default: false },
  'only-postgres': { type: 'boolean', default: false },
  'pg-url': { type: 'string' },
  'pg-runners': { type: 'string' },
  'pg-concurrent-steps': { type: 'string' },
  'pg-list-tasks': { type: 'string' },
  'pg-live-samples': { type: 'string' },
  'cold-hosts': { type: 'string' },
});

const steps = wholeNumbers('steps', values.steps, 2);
const readRuns = wholeNumber('read-runs', values['read-runs'], 3);
const seed = wholeNumber('seed', values.seed, 1, 0);
const warmUpSteps = wholeNumber('warm-up', values['warm-up'], 100, 0);
if (warmUpSteps === 1) usageError('--warm-up takes 0 (none) or a whole number of at least 2, got "1"');
const pgRunners = wholeNumber('pg-runners', values['pg-runners'], 8);
const pgConcurrentSteps = wholeNumber('pg-concurrent-steps', values['pg-concurrent-steps'], 200);
const pgListTasks = wholeNumber('pg-list-tasks', values['pg-list-tasks'], 10_000);
const pgLiveSamples = wholeNumber('pg-live-samples', values['pg-live-samples'], 50);
const coldHosts = wholeNumber('cold-hosts', values['cold-hosts'], LATER_COLD_HOSTS);

const ownDir = values.dir === undefined;
const workDir = values.dir ? path.resolve(values.dir) : await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-compare-'));
await fs.mkdir(workDir, { recursive: true });
const command = ['npm run bench:compare', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');

/** The PostgreSQL section, printed after the others. */
async function postgresSection() {
  const pgResult = await runPostgresComparison(
    {
      steps,
      seed,
      readRuns,
      fullLangGraphUpTo: values['full-langgraph'] ? Number.POSITIVE_INFINITY : 1000,
      runners: pgRunners,
      concurrentSteps: pgConcurrentSteps,
      listTasks: pgListTasks,
      liveSamples: pgLiveSamples,
      laterColdHosts: coldHosts,
      warmUpSteps,
      serverUrl: values['pg-url'],
      log: (line) => console.error(line),
    },
    workDir,
  );
  console.log(`\n${formatPostgresComparison(pgResult)}\n`);
  return pgResult;
}

try {
  if (values['only-postgres']) {
    const load = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ');
    console.log(`# Waystation on PostgreSQL\n\n\`${command}\`, ${os.cpus().length} cores, load average at the start ${load}\n`);
    const postgres = await postgresSection();
    console.log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}`,
    );
    if (!values['no-json']) console.error(`\nresults: ${await writeResultsFile('compare-postgres', { command, postgres })}`);
  } else {
    const result = await runComparison({
      steps,
      seed,
      workDir,
      fullLangGraphUpTo: values['full-langgraph'] ? Number.POSITIVE_INFINITY : 1000,
      readRuns,
      warmUpSteps,
      keepData: values.keep,
      log: (line) => console.error(line),
    });
    console.log(formatComparison(result, command));
    const runtime = values['skip-runtime']
      ? null
      : await runRuntimeBench({
          steps,
          readRuns,
          dir: path.join(workDir, 'runtime'),
          langgraph: { fullUpTo: values['full-langgraph'] ? Number.POSITIVE_INFINITY : 1000 },
          log: (line) => console.error(line),
        });
    if (runtime) {
      console.log(`\n## Through the runtime, against a real LangGraph graph\n\n${formatGraphComparison(runtime.cases, runtime.graphs)}\n`);
      console.log(`### The runtime's own figures\n\n${formatRuntimeBench(runtime.cases)}\n`);
    }
    const postgres = values['skip-postgres'] ? null : await postgresSection();
    if (!values['no-json']) console.error(`\nresults: ${await writeResultsFile('compare', { command, ...result, runtime, postgres })}`);
    const inconsistent = result.runs.filter((r) => !r.consistency.ok);
    if (inconsistent.length > 0) {
      console.error(
        `reads disagreed between the sides at ${inconsistent.map((r) => r.steps).join(', ')} steps: the figures above are not comparable`,
      );
      process.exitCode = 1;
    }
  }
} finally {
  if (ownDir && !values.keep) await fs.rm(workDir, { recursive: true, force: true });
}
