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
import { parseArgs } from 'node:util';
import { describeMachine, formatMachine } from './lib/machine.js';
import { writeResultsFile } from './lib/results-file.js';
import { formatStartup, runStartupBench } from './lib/startup.js';

const { values } = parseArgs({
  options: { runs: { type: 'string' }, 'demo-runs': { type: 'string' }, 'no-json': { type: 'boolean', default: false } },
});
const count = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} takes a whole number of at least 1, got "${raw}"`);
    process.exit(2);
  }
  return n;
};

const command = ['npm run bench:startup', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
const machine = await describeMachine(os.tmpdir());
console.log(
  `# ${command}\n\n${formatMachine(machine)
    .map((l) => `- ${l}`)
    .join('\n')}\n`,
);
const startup = await runStartupBench({
  runs: count('runs', values.runs, 15),
  demoRuns: count('demo-runs', values['demo-runs'], 5),
  log: (line) => console.error(line),
});
console.log(`## Start-up\n\n${formatStartup(startup)}\n`);
if (!values['no-json']) console.error(`\nresults: ${await writeResultsFile('startup', { command, machine, startup })}`);
