/**
 * `npm run torture`: every torture scenario at full scale, a table of runs,
 * faults injected and violations per scenario, the figures as JSON in
 * bench/results/torture-<date>.json, and a non-zero exit on any violation.
 *
 *   npm run torture -- [--runs 1000] [--scale 1] [--seed N] [--only crashes,torn-writes] [--parallel N]
 *
 * --runs is the number of crash runs (SIGKILLed runs of the demo agents);
 * --scale multiplies the other scenarios' counts; --seed replays a run.
 */
import '../support/trust-store-env.js';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { formatTable } from '../../bench/lib/table.js';
import { writeResultsFile } from '../../bench/lib/results-file.js';
import { crashKill, crashKillPostgres } from './scenarios/crash-kill.js';
import { tornWrites } from './scenarios/torn-writes.js';
import { diskFaults } from './scenarios/disk-faults.js';
import { races } from './scenarios/races.js';
import { malformedInput } from './scenarios/malformed-input.js';
import { hostileRequests } from './scenarios/hostile-requests.js';
import { pythonKill } from './scenarios/python-kill.js';
import { pythonStop } from './scenarios/python-stop.js';
import { untrustedInput } from './scenarios/untrusted-input.js';
import { timeTravel } from './scenarios/time-travel.js';
import type { Scenario, ScenarioReport } from './lib/scenario.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    scale: { type: 'string', default: '1' },
    seed: { type: 'string' },
    only: { type: 'string' },
    parallel: { type: 'string' },
  },
});

const crashRuns = Number(values.runs);
const scale = Number(values.scale);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
if (!Number.isInteger(crashRuns) || crashRuns < 1 || !(scale > 0) || !Number.isInteger(seed)) {
  console.error('usage: npm run torture -- [--runs N] [--scale F] [--seed N] [--only NAMES] [--parallel N]');
  process.exit(2);
}

/** Each scenario with its full-scale count. */
const scenarios: { name: string; run: Scenario; runs: number }[] = [
  { name: 'crashes', run: crashKill, runs: crashRuns },
  { name: 'crashes-postgres', run: crashKillPostgres, runs: Math.round(100 * scale) },
  { name: 'torn-writes', run: tornWrites, runs: Math.round(2000 * scale) },
  { name: 'disk-faults', run: diskFaults, runs: Math.round(1000 * scale) },
  { name: 'races', run: races, runs: Math.round(300 * scale) },
  { name: 'malformed-input', run: malformedInput, runs: Math.round(1000 * scale) },
  { name: 'hostile-requests', run: hostileRequests, runs: Math.round(5000 * scale) },
  { name: 'python-agents', run: pythonKill, runs: Math.round(200 * scale) },
  { name: 'python-stops', run: pythonStop, runs: Math.round(200 * scale) },
  { name: 'untrusted-input', run: untrustedInput, runs: Math.round(2000 * scale) },
  { name: 'time-travel', run: timeTravel, runs: Math.round(200 * scale) },
];
const only = values.only?.split(',').map((s) => s.trim());
const selected = only ? scenarios.filter((s) => only.includes(s.name)) : scenarios;
if (only && selected.length !== only.length) {
  console.error(`unknown scenario in --only; the scenarios are ${scenarios.map((s) => s.name).join(', ')}`);
  process.exit(2);
}

const log = (line: string) => console.log(`  ${new Date().toISOString().slice(11, 19)} ${line}`);
const started = Date.now();
const reports: ScenarioReport[] = [];
console.log(`Waystation torture run, seed ${seed}, ${os.cpus().length} cores, Node ${process.version}`);
for (const s of selected) {
  log(`${s.name}: ${s.runs} runs...`);
  let report: ScenarioReport;
  try {
    report = await s.run({ runs: s.runs, seed, log, parallel: values.parallel ? Number(values.parallel) : undefined });
  } catch (err) {
    // A scenario that cannot finish proves nothing: it counts as a violation, and the others still run.
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    report = {
      name: s.name,
      runs: 0,
      faultsInjected: 0,
      violations: [{ check: 'the scenario itself failed', count: 1 }],
      examples: [message],
      figures: {},
      seed,
      elapsedMs: 0,
    };
  }
  reports.push(report);
  const violations = report.violations.reduce((n, v) => n + v.count, 0);
  log(
    `${s.name}: ${report.runs} runs, ${report.faultsInjected} faults, ${violations} violations in ${(report.elapsedMs / 1000).toFixed(1)} s`,
  );
  for (const e of report.examples) log(`  VIOLATION ${e}`);
}

const total = (r: ScenarioReport) => r.violations.reduce((n, v) => n + v.count, 0);
console.log('');
console.log(
  formatTable(
    [
      { header: 'scenario' },
      { header: 'runs', align: 'right' },
      { header: 'faults injected', align: 'right' },
      { header: 'violations', align: 'right' },
      { header: 'time', align: 'right' },
    ],
    reports.map((r) => [r.name, String(r.runs), String(r.faultsInjected), String(total(r)), `${(r.elapsedMs / 1000).toFixed(0)} s`]),
  ),
);
console.log('');
for (const r of reports) {
  console.log(`${r.name}:`);
  for (const v of r.violations) console.log(`  ${v.count === 0 ? 'ok  ' : 'FAIL'} ${v.check}: ${v.count}`);
  for (const [k, v] of Object.entries(r.figures)) console.log(`       ${k}: ${v}`);
}
const elapsedMs = Date.now() - started;
const file = await writeResultsFile('torture', {
  seed,
  command: `npm run torture -- --runs ${crashRuns} --scale ${scale} --seed ${seed}${values.only ? ` --only ${values.only}` : ''}`,
  machine: {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  },
  elapsed_ms: elapsedMs,
  reports,
});
const violations = reports.reduce((n, r) => n + total(r), 0);
console.log(
  `\n${violations === 0 ? 'No violations' : `${violations} VIOLATIONS`} in ${(elapsedMs / 60_000).toFixed(1)} min; replay with --seed ${seed}. Results: ${file}`,
);
process.exitCode = violations === 0 ? 0 : 1;
