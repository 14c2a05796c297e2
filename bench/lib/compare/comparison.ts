/**
 * Waystation's store and LangGraph.js checkpointers side by side, in one
 * process and one run: the same workload, the same durability, the figures
 * put next to each other with their ratios and the targets they are held to.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { workloadMessage } from '../agent-workload.js';
import { formatBytes, formatCount, formatMs, formatRatio } from '../format.js';
import { describeMachine, formatMachine, type MachineDescription } from '../machine.js';
import { percentile } from '../percentile.js';
import { formatTable } from '../table.js';
import { runLangGraph, type LangGraphSideResult, type SqliteCalibration } from './langgraph-side.js';
import { FLOOR_PROTOCOLS, measureDiskFloor, type DiskFloor, type FloorProtocol } from './disk-floor.js';
import { middleStep, type SideResult } from './side-result.js';
import { runWaystation, type WaystationSideResult } from './waystation-side.js';

export interface ComparisonOptions {
  /** Task lengths to run, e.g. [100, 1000, 10000]. */
  steps: number[];
  seed: number;
  /** Folder the stores are created in (one sub-folder per run); must exist. */
  workDir: string;
  /** LangGraph runs every step up to this N and is sampled above it. */
  fullLangGraphUpTo: number;
  /** Repetitions of each read; the report quotes the median. */
  readRuns: number;
  /**
   * Steps of the throwaway task each side saves before anything is measured
   * (0: none). Node compiles hot JavaScript over the first thousands of calls;
   * without this, whichever side runs first in the process pays that inside
   * its measured saves, and the shorter runs measure the compiler.
   */
  warmUpSteps: number;
  /** Leave the stores on disk after measuring them. */
  keepData?: boolean;
  /** Progress lines (to stderr in the CLI). */
  log?: (line: string) => void;
}

/** One figure of one run, on every side. */
export interface Figure {
  name: string;
  unit: 'ms' | 'bytes';
  waystation: number | null;
  sqlite: number | null;
  memory: number | null;
  /** LangGraph SQLite ÷ Waystation: above 1, Waystation is faster or smaller. */
  ratio: number | null;
  note?: string;
}

export interface RunComparison {
  steps: number;
  waystation: WaystationSideResult;
  sqlite: LangGraphSideResult;
  memory: LangGraphSideResult;
  figures: Figure[];
  /** Every side read back the same messages; problems say where not. */
  consistency: { ok: boolean; problems: string[] };
}

export interface TargetCheck {
  target: string;
  steps: number;
  figure: string;
  /** The ratio reached (LangGraph SQLite ÷ Waystation) and the one required. */
  ratio: number;
  required: number;
  met: boolean;
}

export interface ComparisonResult {
  benchmark: 'compare-langgraph';
  startedAt: string;
  machine: MachineDescription;
  options: Omit<ComparisonOptions, 'log'>;
  durability: string[];
  runs: RunComparison[];
  targets: TargetCheck[];
  /** Set when a sampled SQLite run needed a calibration run of its own. */
  calibration: SqliteCalibration | null;
  /** The disk's own cost of one step on each side, measured in this run (see disk-floor.ts). */
  diskFloor: DiskFloor;
}

const CALIBRATION_STEPS = 1000;

/**
 * Run the comparison for every N in `opts.steps`, smallest first.
 *
 * Each N gets fresh stores in its own folders. Sides run one after another,
 * never concurrently, so they do not compete for the disk or the CPUs.
 */
export async function runComparison(opts: ComparisonOptions): Promise<ComparisonResult> {
  const log = opts.log ?? (() => {});
  const startedAt = new Date().toISOString();
  const machine = await describeMachine(opts.workDir);
  const runs: RunComparison[] = [];
  let calibration: SqliteCalibration | null = null;
  let ownCalibration: SqliteCalibration | null = null;

  // Stores are removed when the run ends, not between measurements: on a disk mounted with `discard`, removing
  // half a gigabyte makes file-creating commits several times slower for about a minute, which would be charged
  // to whichever side runs next.
  const used: { dir: string; keep: boolean }[] = [];
  /** A new folder for a store; `measured`: one the report describes, kept with --keep. */
  const fresh = async (name: string, measured = true) => {
    const dir = await freshDir(opts.workDir, name);
    used.push({ dir, keep: measured && !!opts.keepData });
    return dir;
  };
  let diskFloor: DiskFloor;
  try {
    if (opts.warmUpSteps > 0) {
      log(`warming up: a throwaway ${formatCount(opts.warmUpSteps)}-step task on each side`);
      await warmUp(opts, fresh);
    }
    diskFloor = measureDiskFloor(await fresh('disk-floor', false));

    for (const steps of [...opts.steps].sort((a, b) => a - b)) {
      const sampled = steps > opts.fullLangGraphUpTo;
      if (sampled && (calibration === null || calibration.steps < CALIBRATION_STEPS)) {
        log(`calibrating SQLite storage with a full ${CALIBRATION_STEPS}-step run`);
        const dir = await fresh(`calibration-${CALIBRATION_STEPS}`);
        calibration = (await runLangGraph({ kind: 'sqlite', steps: CALIBRATION_STEPS, seed: opts.seed, dir, sampled: false, readRuns: 1 }))
          .calibration;
        ownCalibration = calibration;
      }

      log(`${formatCount(steps)} steps: Waystation`);
      const waystation = await runWaystation({ steps, seed: opts.seed, dir: await fresh(`waystation-${steps}`), readRuns: opts.readRuns });
      log(`  done in ${formatMs(waystation.wallMs)}; LangGraph SqliteSaver${sampled ? ' (sampled)' : ''}`);

      const sqDir = await fresh(`langgraph-sqlite-${steps}`);
      const sqlite = await runLangGraph({
        kind: 'sqlite',
        steps,
        seed: opts.seed,
        dir: sqDir,
        sampled,
        sqliteCalibration: calibration ?? undefined,
        readRuns: opts.readRuns,
      });
      if (sqlite.calibration && (calibration === null || sqlite.calibration.steps >= calibration.steps)) calibration = sqlite.calibration;
      log(`  done in ${formatMs(sqlite.wallMs)}; LangGraph MemorySaver${sampled ? ' (sampled)' : ''}`);

      const memory = await runLangGraph({ kind: 'memory', steps, seed: opts.seed, dir: opts.workDir, sampled, readRuns: opts.readRuns });
      log(`  done in ${formatMs(memory.wallMs)}`);

      runs.push({
        steps,
        waystation,
        sqlite,
        memory,
        figures: figuresOf(waystation, sqlite, memory),
        consistency: checkConsistency(steps, opts.seed, [waystation, sqlite, memory]),
      });
    }
  } finally {
    for (const { dir, keep } of used) await removeDir(dir, keep);
  }

  const { log: _log, ...options } = opts;
  return {
    benchmark: 'compare-langgraph',
    startedAt,
    machine,
    options,
    durability: durabilityLines(runs),
    runs,
    targets: checkTargets(runs),
    calibration: ownCalibration,
    diskFloor,
  };
}

/** Save a task of `opts.warmUpSteps` on every side, in folders from `fresh` (removed with the others, never kept). */
async function warmUp(opts: ComparisonOptions, fresh: (name: string, measured: boolean) => Promise<string>): Promise<void> {
  const steps = opts.warmUpSteps;
  await runWaystation({ steps, seed: opts.seed + 1, dir: await fresh('warm-up-waystation', false), readRuns: 1 });
  await runLangGraph({
    kind: 'sqlite',
    steps,
    seed: opts.seed + 1,
    dir: await fresh('warm-up-langgraph-sqlite', false),
    sampled: false,
    readRuns: 1,
  });
  await runLangGraph({ kind: 'memory', steps, seed: opts.seed + 1, dir: opts.workDir, sampled: false, readRuns: 1 });
}

/** The median of a read's repetitions. */
function median(ms: number[]): number {
  return percentile(ms, 50);
}

function figuresOf(ws: WaystationSideResult, sq: LangGraphSideResult, mem: LangGraphSideResult): Figure[] {
  const { early, late } = ws.saves;
  const p = (samples: number[] | null, q: number) => (samples && samples.length > 0 ? percentile(samples, q) : null);
  const row = (name: string, unit: Figure['unit'], w: number | null, s: number | null, m: number | null, note?: string): Figure => ({
    name,
    unit,
    waystation: w,
    sqlite: s,
    memory: m,
    ratio: w !== null && s !== null && w > 0 ? s / w : null,
    ...(note ? { note } : {}),
  });
  const earlyName = `steps ${early.from}–${early.to}`;
  const lateName = `steps ${late.from}–${late.to}`;
  return [
    row(`save p50, early (${earlyName})`, 'ms', p(ws.saves.earlyMs, 50), p(sq.saves.earlyMs, 50), p(mem.saves.earlyMs, 50)),
    row(`save p99, early (${earlyName})`, 'ms', p(ws.saves.earlyMs, 99), p(sq.saves.earlyMs, 99), p(mem.saves.earlyMs, 99)),
    row(`save p50, late (${lateName})`, 'ms', p(ws.saves.lateMs, 50), p(sq.saves.lateMs, 50), p(mem.saves.lateMs, 50)),
    row(`save p99, late (${lateName})`, 'ms', p(ws.saves.lateMs, 99), p(sq.saves.lateMs, 99), p(mem.saves.lateMs, 99)),
    row(
      'save p50, all steps',
      'ms',
      p(ws.saves.allMs, 50),
      p(sq.saves.allMs, 50),
      p(mem.saves.allMs, 50),
      sq.sampled ? 'LangGraph sampled: not every step ran' : undefined,
    ),
    row(
      'save p99, all steps',
      'ms',
      p(ws.saves.allMs, 99),
      p(sq.saves.allMs, 99),
      p(mem.saves.allMs, 99),
      sq.sampled ? 'LangGraph sampled: not every step ran' : undefined,
    ),
    row(
      `bytes after ${formatCount(ws.steps)} steps`,
      'bytes',
      ws.storage.bytes,
      sq.storage.bytes,
      mem.storage.bytes,
      [sq.storage.projected ? 'LangGraph projected' : '', 'MemorySaver: serialized bytes held in memory'].filter(Boolean).join('; '),
    ),
    row('read latest, with message list', 'ms', median(ws.reads.latest.ms), median(sq.reads.latest.ms), median(mem.reads.latest.ms)),
    row(
      `read step ${middleStep(ws.steps)}, with message list`,
      'ms',
      median(ws.reads.middle.ms),
      median(sq.reads.middle.ms),
      median(mem.reads.middle.ms),
    ),
    row(
      'read latest, checkpoint only',
      'ms',
      median(ws.reads.latestSnapshot.ms),
      median(sq.reads.latest.ms),
      median(mem.reads.latest.ms),
      'Waystation: history by reference; LangGraph always returns the list',
    ),
    row(
      `read step ${middleStep(ws.steps)}, checkpoint only`,
      'ms',
      median(ws.reads.middleVersion.ms),
      median(sq.reads.middle.ms),
      median(mem.reads.middle.ms),
      'Waystation: history by reference; LangGraph always returns the list',
    ),
  ];
}

/**
 * Every side must have read back the state it was asked for: N + 1 messages
 * at the latest checkpoint (the request and one per step), middle + 1 at the
 * middle one, ending with the message of that step.
 */
export function checkConsistency(steps: number, seed: number, sides: SideResult[]): { ok: boolean; problems: string[] } {
  const problems: string[] = [];
  const middle = middleStep(steps);
  for (const side of sides) {
    for (const [name, read] of Object.entries(side.reads)) {
      const atMiddle = name.startsWith('middle');
      const step = atMiddle ? middle : steps;
      if (read.messages !== step + 1) problems.push(`${side.side} ${name}: ${read.messages} messages, expected ${step + 1}`);
      // Reads without the list (history by reference) have no last message to compare.
      if (read.lastMessage !== '' && read.lastMessage !== workloadMessage(seed, step).content) {
        problems.push(`${side.side} ${name}: the newest message is not step ${step}'s`);
      }
    }
    const { saves } = side;
    if (saves.earlyMs.length !== saves.early.to - saves.early.from + 1)
      problems.push(`${side.side}: ${saves.earlyMs.length} early saves timed`);
    if (saves.lateMs.length !== saves.late.to - saves.late.from + 1) problems.push(`${side.side}: ${saves.lateMs.length} late saves timed`);
    if (saves.allMs && saves.allMs.length !== steps) problems.push(`${side.side}: ${saves.allMs.length} saves timed for ${steps} steps`);
  }
  return { ok: problems.length === 0, problems };
}

/**
 * The targets: at 10,000 steps, at least 10x less storage than the
 * SQLite checkpointer and saves at least 10x faster (late saves, where a
 * long task spends its time); at 100 steps, saves no slower (p50 of all).
 */
export function checkTargets(runs: RunComparison[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const find = (steps: number, prefix: string) => runs.find((r) => r.steps === steps)?.figures.find((f) => f.name.startsWith(prefix));
  const add = (target: string, steps: number, prefix: string, required: number) => {
    const figure = find(steps, prefix);
    if (!figure || figure.ratio === null) return;
    checks.push({ target, steps, figure: figure.name, ratio: figure.ratio, required, met: figure.ratio >= required });
  };
  add('at least 10x less storage than SQLite', 10_000, 'bytes after', 10);
  add('saves at least 10x faster than SQLite (p50, late)', 10_000, 'save p50, late', 10);
  add('saves no slower than SQLite (p50, all steps)', 100, 'save p50, all steps', 1);
  return checks;
}

function durabilityLines(runs: RunComparison[]): string[] {
  const first = runs[0];
  if (!first) return [];
  return [
    `Waystation: ${first.waystation.durability}.`,
    `LangGraph SqliteSaver: ${first.sqlite.durability}.`,
    `LangGraph MemorySaver: ${first.memory.durability}.`,
  ];
}

/**
 * The whole report as Markdown: machine, durability, one table per N, the
 * targets, and how any sampled figure was obtained.
 */
export function formatComparison(result: ComparisonResult, command: string): string {
  const out: string[] = [];
  out.push(
    `Command: \`${command}\``,
    '',
    'Machine:',
    ...formatMachine(result.machine).map((l) => `- ${l}`),
    '',
    'Durability:',
    ...result.durability.map((l) => `- ${l}`),
  );
  out.push(
    '',
    'Workload: per step, one 1,024-byte message appended to the history and one step result (~250 bytes) stored; seeded, identical bytes on every side.',
  );
  out.push(
    '',
    result.options.warmUpSteps > 0
      ? `Warm-up: before anything is measured, each side saves a throwaway ${formatCount(result.options.warmUpSteps)}-step task in the same process (other payloads, folders removed), so no side's measured saves include Node compiling its code.`
      : 'Warm-up: none (--warm-up 0): the side that runs first also pays for Node compiling the code the sides share.',
  );
  out.push('', ...formatDiskFloor(result.diskFloor));
  for (const run of result.runs) {
    out.push('', `#### ${formatCount(run.steps)} steps`, '');
    out.push(
      formatTable(
        [
          { header: 'figure' },
          { header: 'Waystation', align: 'right' },
          { header: 'LangGraph SQLite', align: 'right' },
          { header: 'SQLite ÷ Waystation', align: 'right' },
          { header: 'LangGraph memory (no durability)', align: 'right' },
          { header: 'note' },
        ],
        run.figures.map((f) => [
          f.name,
          cell(f.waystation, f.unit),
          cell(f.sqlite, f.unit),
          f.ratio === null ? 'n/a' : formatRatio(f.ratio),
          cell(f.memory, f.unit),
          f.note ?? '',
        ]),
      ),
    );
    for (const side of [run.sqlite, run.memory]) {
      if (side.sampling) out.push('', `${side.side}, sampled: ${side.sampling}. ${side.storage.method}.`);
    }
    if (run.sqlite.sqlite) {
      const s = run.sqlite.sqlite;
      out.push(
        '',
        `SQLite files: db ${formatBytes(s.dbBytes)}, -wal ${formatBytes(s.walBytes)}, -shm ${formatBytes(s.shmBytes)}. Waystation: ${run.waystation.storage.method}, ${formatBytes(run.waystation.storage.allocatedBytes ?? 0)} allocated in blocks; letting the lease go after the last step (checkpoint.json written, once a run) took ${formatMs(run.waystation.settleMs)}.`,
      );
    }
    if (!run.consistency.ok) out.push('', `**Inconsistent reads:** ${run.consistency.problems.join('; ')}`);
  }
  out.push('', '#### Targets', '');
  out.push(
    formatTable(
      [
        { header: 'target' },
        { header: 'steps', align: 'right' },
        { header: 'figure' },
        { header: 'reached', align: 'right' },
        { header: 'required', align: 'right' },
        { header: 'met' },
      ],
      result.targets.map((t) => [
        t.target,
        formatCount(t.steps),
        t.figure,
        formatRatio(t.ratio),
        `≥ ${formatRatio(t.required)}`,
        t.met ? 'yes' : '**no**',
      ]),
    ),
  );
  return out.join('\n');
}

function cell(value: number | null, unit: Figure['unit']): string {
  if (value === null) return 'n/a';
  return unit === 'ms' ? formatMs(value) : formatBytes(value);
}

async function freshDir(root: string, name: string): Promise<string> {
  const dir = path.join(root, name);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

async function removeDir(dir: string, keep: boolean | undefined): Promise<void> {
  if (!keep) await fs.rm(dir, { recursive: true, force: true });
}

/**
 * The disk floor of each storage design, with its ratio to SQLite's: what the
 * disk charged a step in this run before any code, so a save's figure can be
 * read as floor plus code.
 */
export function formatDiskFloor(floor: DiskFloor): string[] {
  const sqlite = percentile(floor.ms.sqlite, 50);
  const rows = (Object.keys(FLOOR_PROTOCOLS) as FloorProtocol[]).map((p) => {
    const p50 = percentile(floor.ms[p], 50);
    return [p, FLOOR_PROTOCOLS[p], formatMs(p50), formatMs(percentile(floor.ms[p], 99)), formatRatio(sqlite / p50)];
  });
  return [
    `Disk floor, measured in this run in the same folder (${floor.iterations} steps a protocol, in alternating rounds; ${formatBytes(floor.bytes)} per version file or append, ` +
      `${formatBytes(floor.hotBytes)} hot snapshot). What a save costs beyond its design's floor is its own code; the floor moves from run to run with what the disk did before.`,
    '',
    formatTable(
      [
        { header: 'protocol' },
        { header: 'file operations of one step' },
        { header: 'p50', align: 'right' },
        { header: 'p99', align: 'right' },
        { header: 'SQLite ÷ this (p50)', align: 'right' },
      ],
      rows,
    ),
  ];
}
