/**
 * The runtime bench alone: `node bin/waystation-tsx.mjs bench/runtime-bench.ts`
 * (also part of `npm run bench`).
 *
 *   --steps 100,1000,10000   steps run, a case each with a plan of as many steps
 *   --large-plans 10000      plans run for their first 100 steps (none: "")
 *   --read-runs 3            repetitions of the latest-state read (median reported)
 *   --no-langgraph           skip the real LangGraph graph beside each case
 *   --full-langgraph-up-to 1000  run every graph step up to this N, sample above
 *   --warm-up-steps 50       a first case (and graph) of this many steps, run and not reported (0: none)
 *   --no-json                do not write bench/results/
 */
import os from 'node:os';
import { benchOptions, wholeNumber, wholeNumbers } from './lib/bench-args.js';
import { describeMachine, formatMachine } from './lib/machine.js';
import { runRuntimeBench } from './lib/runtime/runtime-bench.js';
import { formatGraphComparison, formatRuntimeBench } from './lib/runtime/runtime-report.js';
import { writeResultsFile } from './lib/results-file.js';

const values = benchOptions(import.meta.url, {
  steps: { type: 'string', default: '100,1000,10000' },
  'large-plans': { type: 'string', default: '10000' },
  'read-runs': { type: 'string' },
  'no-langgraph': { type: 'boolean', default: false },
  'full-langgraph-up-to': { type: 'string' },
  'warm-up-steps': { type: 'string' },
  'no-json': { type: 'boolean', default: false },
});

const steps = wholeNumbers('steps', values.steps, 2);
const largePlans = wholeNumbers('large-plans', values['large-plans'], 2);
const readRuns = wholeNumber('read-runs', values['read-runs'], 3);
const fullUpTo = wholeNumber('full-langgraph-up-to', values['full-langgraph-up-to'], 1000, 0);
const warmUpSteps = wholeNumber('warm-up-steps', values['warm-up-steps'], 50, 0);

const command = ['node bin/waystation-tsx.mjs bench/runtime-bench.ts', ...process.argv.slice(2)].join(' ');
const machine = await describeMachine(os.tmpdir());
const results = await runRuntimeBench({
  steps,
  largePlans,
  readRuns,
  warmUpSteps,
  langgraph: values['no-langgraph'] ? undefined : { fullUpTo },
  log: (line) => console.error(line),
});
console.log(
  `# ${command}\n\n${formatMachine(machine)
    .map((l) => `- ${l}`)
    .join('\n')}\n\n## Through the runtime\n\n${formatRuntimeBench(results.cases)}\n${
    results.graphs.length
      ? `\n## Through the runtime, against a real LangGraph graph\n\n${formatGraphComparison(results.cases, results.graphs)}\n`
      : ''
  }`,
);
if (!values['no-json']) console.error(`results: ${await writeResultsFile('runtime', { command, machine, results })}`);
