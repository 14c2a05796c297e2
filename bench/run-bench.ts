/**
 * `npm run bench`: the store bench (save latency, disk use) and the inspector
 * at scale (listing, first rows, diff, live events, memory), in one run.
 *
 *   --quick              a small, fast run (1,000-step store, 500 tasks)
 *   --skip-store         skip the store bench
 *   --skip-startup       no start-up figures (CLI, demo, eight tasks at once)
 *   --skip-runtime       skip the runtime bench (an agent through the runtime, beside a real LangGraph graph)
 *   --skip-scale         skip the inspector at scale
 *   --runtime-steps L    the runtime bench's step counts (default 100,1000,10000; --quick: 100,1000)
 *   --tasks N            tasks in the scale fixture (default 10,000)
 *   --versions N         versions per task (default 10)
 *   --writes N           versions written for the event latency (default 100)
 *   --no-browser         skip the Chromium measurement
 *   --cold-hosts N       hosts started cold after the first, for the median of the first rows on a cold host (default 5)
 *   --skip-langgraph     skip the LangGraph source (10,000 checkpoints over 100 threads)
 *   --no-json            do not write bench/results/bench-<date>.json
 *
 * The scale fixture is cached under the OS temp folder (see
 * bench/lib/scale-fixture.ts); the first run writes it.
 */
import { describeMachine, formatMachine } from './lib/machine.js';
import { LATER_COLD_HOSTS, runInspectorScale } from './lib/inspector-scale.js';
import { formatInspectorScale } from './lib/inspector-scale-report.js';
import { writeResultsFile } from './lib/results-file.js';
import { formatStartup, runStartupBench } from './lib/startup.js';
import os from 'node:os';
import { benchOptions, wholeNumber, wholeNumbers } from './lib/bench-args.js';
import { runRuntimeBench } from './lib/runtime/runtime-bench.js';
import { formatGraphComparison, formatRuntimeBench } from './lib/runtime/runtime-report.js';
import { formatLangGraphBench, runLangGraphBench } from './lib/langgraph-source-bench.js';

// Importing the store bench must not start its standalone run.
(globalThis as { WAYSTATION_BENCH_LIBRARY?: boolean }).WAYSTATION_BENCH_LIBRARY = true;
const { runStoreBench } = await import('./store-bench.js');

const values = benchOptions(import.meta.url, {
  quick: { type: 'boolean', default: false },
  'skip-store': { type: 'boolean', default: false },
  'skip-startup': { type: 'boolean', default: false },
  'skip-runtime': { type: 'boolean', default: false },
  'skip-scale': { type: 'boolean', default: false },
  'runtime-steps': { type: 'string' },
  tasks: { type: 'string' },
  versions: { type: 'string' },
  writes: { type: 'string' },
  'no-browser': { type: 'boolean', default: false },
  'cold-hosts': { type: 'string' },
  'skip-langgraph': { type: 'boolean', default: false },
  'no-json': { type: 'boolean', default: false },
});

const quick = values.quick;
// Every count checked before anything is measured: a typo found after the start-up and scale benches costs minutes.
const tasks = wholeNumber('tasks', values.tasks, quick ? 500 : 10_000);
const versionsPerTask = wholeNumber('versions', values.versions, 10, 2);
const writes = wholeNumber('writes', values.writes, quick ? 20 : 100);
const laterColdHosts = wholeNumber('cold-hosts', values['cold-hosts'], LATER_COLD_HOSTS);
const runtimeSteps = wholeNumbers('runtime-steps', values['runtime-steps'] ?? (quick ? '100,1000' : '100,1000,10000'), 2);

const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
const machine = await describeMachine(os.tmpdir());
console.log(
  `# ${command}\n\n${formatMachine(machine)
    .map((l) => `- ${l}`)
    .join('\n')}\n`,
);

// First, while the machine holds no fixture in memory: start-up is what a user meets first.
const startup = values['skip-startup']
  ? null
  : await runStartupBench({ runs: quick ? 5 : 15, demoRuns: quick ? 2 : 5, log: (line) => console.error(line) });
if (startup) console.log(`## Start-up\n\n${formatStartup(startup)}\n`);

const scale = values['skip-scale']
  ? null
  : await runInspectorScale({
      tasks,
      versionsPerTask,
      diffBytes: 5 * 1024 * 1024,
      writes,
      writeSpacingMs: 300,
      runs: quick ? 3 : 5,
      browser: !values['no-browser'],
      laterColdHosts,
      log: (line) => console.error(line),
    });
if (scale) console.log(`## Inspector at scale\n\n${formatInspectorScale(scale)}\n`);

const runtime = values['skip-runtime']
  ? null
  : await runRuntimeBench({
      steps: runtimeSteps,
      largePlans: [10_000],
      langgraph: { fullUpTo: 1000 },
      log: (line) => console.error(line),
    });
if (runtime) {
  console.log(`## Through the runtime\n\n${formatRuntimeBench(runtime.cases)}\n`);
  console.log(`## Through the runtime, against a real LangGraph graph\n\n${formatGraphComparison(runtime.cases, runtime.graphs)}\n`);
}

const langgraph = values['skip-langgraph']
  ? null
  : await runLangGraphBench({ threads: quick ? 10 : 100, questions: 20, runs: quick ? 3 : 5, log: (line) => console.error(line) });
if (langgraph) console.log(`## LangGraph source\n\n${formatLangGraphBench(langgraph)}\n`);

const store = values['skip-store'] ? null : await runStoreBench({ steps: quick ? 1000 : 10_000, print: true });

if (!values['no-json']) {
  console.error(`\nresults: ${await writeResultsFile('bench', { command, machine, startup, scale, runtime, langgraph, store })}`);
}
