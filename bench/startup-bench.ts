/**
 * `npm run bench:startup`: how long the CLI and a task take to start (see
 * bench/lib/startup.ts), with the machine line, alone. `npm run bench` runs it
 * too.
 *
 *   --runs N        rounds of the short commands (default 15)
 *   --demo-runs N   runs of the demo, alone and eight at once (default 5)
 *   --no-json       do not write bench/results/startup-<date>.json
 */
import os from 'node:os';
import { benchOptions, wholeNumber } from './lib/bench-args.js';
import { describeMachine, formatMachine } from './lib/machine.js';
import { writeResultsFile } from './lib/results-file.js';
import { formatStartup, runStartupBench } from './lib/startup.js';

const values = benchOptions(import.meta.url, {
  runs: { type: 'string' },
  'demo-runs': { type: 'string' },
  'no-json': { type: 'boolean', default: false },
});

const command = ['npm run bench:startup', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
const machine = await describeMachine(os.tmpdir());
console.log(
  `# ${command}\n\n${formatMachine(machine)
    .map((l) => `- ${l}`)
    .join('\n')}\n`,
);
const startup = await runStartupBench({
  runs: wholeNumber('runs', values.runs, 15),
  demoRuns: wholeNumber('demo-runs', values['demo-runs'], 5),
  log: (line) => console.error(line),
});
console.log(`## Start-up\n\n${formatStartup(startup)}\n`);
if (!values['no-json']) console.error(`\nresults: ${await writeResultsFile('startup', { command, machine, startup })}`);
