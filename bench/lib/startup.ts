/**
 * Start-up on the path a user takes: `waystation --version`, `waystation ls`
 * of an empty directory, `waystation serve` of it until it prints its URL,
 * the four-step demo end to end, and eight demo tasks
 * at once against one. Every figure is a median of processes started in this
 * run, against a bare `node -e 0` started in the same rounds (interleaved, so
 * a change of load on a shared machine moves both alike).
 *
 * The CLI runs as installed (bin/waystation.mjs): from dist/ when that build
 * matches the sources, which the report states; the same commands run with
 * WAYSTATION_FROM_SOURCE=1 (the TypeScript loader) for comparison.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledBuildState, type BuildState } from '../../electron/runtime/build-stamp.js';
import { formatMs, formatRatio } from './format.js';
import { percentile } from './percentile.js';
import { formatTable } from './table.js';
import { msSince, nowNs } from './timing.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(repo, 'bin', 'waystation.mjs');

export interface StartupOptions {
  /** Rounds of the short commands (each round starts every command once). Default 15. */
  runs?: number;
  /** Runs of the demo, alone and eight at once. Default 5. */
  demoRuns?: number;
  /** Tasks started at once for the throughput figure. Default 8. */
  concurrent?: number;
  log?: (line: string) => void;
}

export interface StartupResult {
  build: BuildState;
  loadavgBefore: number[];
  loadavgAfter: number[];
  /** Median wall ms of each command, and its samples. */
  commands: { name: string; command: string; medianMs: number; ratio: number; samples: number[] }[];
  baselineMs: number;
  demo: { medianMs: number; samples: number[] };
  throughput: { concurrent: number; oneMs: number; manyMs: number; speedup: number };
}

/** Run a process to its end; resolve with its wall time in ms. Fails on a non-zero exit, with its stderr. */
function timeProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = nowNs();
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = msSince(started);
      if (code === 0) resolve(ms);
      else reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

/**
 * Start `waystation serve` and resolve with the wall time in ms until it prints its URL (what a user waits for
 * before the browser can ask anything); the host is then stopped.
 */
function timeServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = nowNs();
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let ms: number | null = null;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (ms === null && /http:\/\/127\.0\.0\.1:\d+/.test(out)) {
        ms = msSince(started);
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      // Stopped by the SIGTERM sent at the URL: exit 0 once its handler runs, or the signal's own end before.
      if (ms !== null && (code === 0 || signal === 'SIGTERM')) resolve(ms);
      else
        reject(
          new Error(`node ${args.join(' ')} ended (${code ?? signal})${ms === null ? ' before printing its URL' : ''}: ${stderr.trim()}`),
        );
    });
  });
}

const DEMO_ENV = { SKIP_FAILURE: '1', WAYSTATION_OFFLINE_LATENCY_MS: '0', NO_COLOR: '1' };

/** Measure start-up; see the module comment. */
export async function runStartupBench(opts: StartupOptions = {}): Promise<StartupResult> {
  const runs = opts.runs ?? 15;
  const demoRuns = opts.demoRuns ?? 5;
  const concurrent = opts.concurrent ?? 8;
  const log = opts.log ?? (() => {});
  const build = compiledBuildState(repo);
  const loadavgBefore = os.loadavg();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-startup-'));
  try {
    const empty = path.join(tmp, 'empty');
    await fs.mkdir(empty);
    const source = { WAYSTATION_FROM_SOURCE: '1' };
    const commands = [
      { name: 'node -e 0', command: 'node -e 0', args: ['-e', '0'], env: {} },
      { name: '--version', command: 'waystation --version', args: [bin, '--version'], env: {} },
      { name: 'ls (empty)', command: 'waystation ls EMPTY', args: [bin, 'ls', empty], env: {} },
      {
        name: 'serve (empty)',
        command: 'waystation serve EMPTY, to its URL',
        args: [bin, 'serve', empty, '--quiet'],
        env: {},
        untilUrl: true,
      },
      { name: '--version, sources', command: 'WAYSTATION_FROM_SOURCE=1 waystation --version', args: [bin, '--version'], env: source },
      { name: 'ls (empty), sources', command: 'WAYSTATION_FROM_SOURCE=1 waystation ls EMPTY', args: [bin, 'ls', empty], env: source },
    ];
    const samples = commands.map(() => [] as number[]);
    // One warm-up round: the first start of each reads its files from disk, later ones from the page cache.
    const time = (c: (typeof commands)[number]) => ('untilUrl' in c ? timeServe(c.args, c.env) : timeProcess(c.args, c.env));
    for (const c of commands) await time(c);
    for (let r = 0; r < runs; r++) {
      for (const [i, c] of commands.entries()) samples[i].push(await time(c));
    }
    const medians = samples.map((s) => percentile(s, 50));
    const baselineMs = medians[0];
    log(`start-up: baseline node -e 0 ${formatMs(baselineMs)} over ${runs} rounds`);

    let n = 0;
    const demo = (dir: string) => timeProcess([bin, 'run', dir, 'checkpoint-demo', '--task', `demo-${++n}`], DEMO_ENV);
    const demoDir = path.join(tmp, 'demo');
    await demo(demoDir);
    const demoSamples: number[] = [];
    for (let r = 0; r < demoRuns; r++) demoSamples.push(await demo(demoDir));
    log(`start-up: the four-step demo ${formatMs(percentile(demoSamples, 50))}`);

    const oneSamples: number[] = [];
    const manySamples: number[] = [];
    for (let r = 0; r < demoRuns; r++) {
      oneSamples.push(await demo(path.join(tmp, `one-${r}`)));
      const started = nowNs();
      await Promise.all(Array.from({ length: concurrent }, () => demo(path.join(tmp, `many-${r}`))));
      manySamples.push(msSince(started));
    }
    const oneMs = percentile(oneSamples, 50);
    const manyMs = percentile(manySamples, 50);
    return {
      build,
      loadavgBefore,
      loadavgAfter: os.loadavg(),
      commands: commands.slice(1).map((c, i) => ({
        name: c.name,
        command: c.command,
        medianMs: medians[i + 1],
        ratio: medians[i + 1] / baselineMs,
        samples: samples[i + 1],
      })),
      baselineMs,
      demo: { medianMs: percentile(demoSamples, 50), samples: demoSamples },
      throughput: { concurrent, oneMs, manyMs, speedup: concurrent / manyMs / (1 / oneMs) },
    };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** The report: the build it ran, the load around it, each figure beside its target. */
export function formatStartup(r: StartupResult): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const built = r.build.state === 'fresh' ? 'from dist/ (the build matches the sources)' : `from the sources: ${r.build.reason}`;
  const rows = [
    ['node -e 0', formatMs(r.baselineMs), '1.00x', 'baseline'],
    ...r.commands.map((c) => [
      c.command,
      formatMs(c.medianMs),
      formatRatio(c.ratio),
      c.name.endsWith('sources') ? 'before: the TypeScript loader' : c.name.startsWith('serve') ? "none: the app's first wait" : '≤ 3x',
    ]),
    ['the four-step demo (`run DIR checkpoint-demo`)', formatMs(r.demo.medianMs), formatRatio(r.demo.medianMs / r.baselineMs), '< 500 ms'],
    [
      `${r.throughput.concurrent} demo tasks at once against one (throughput)`,
      `${formatMs(r.throughput.manyMs)} vs ${formatMs(r.throughput.oneMs)}`,
      formatRatio(r.throughput.speedup),
      '≥ 1.7x on 2 cores',
    ],
  ];
  return [
    `CLI run ${built}; load average ${load(r.loadavgBefore)} before, ${load(r.loadavgAfter)} after.`,
    '',
    formatTable(
      [
        { header: 'what (median wall time)' },
        { header: 'time', align: 'right' },
        { header: 'vs node -e 0', align: 'right' },
        { header: 'target' },
      ],
      rows,
    ),
  ].join('\n');
}
