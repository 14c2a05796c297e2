/**
 * Save latency and disk use of the directory store on a long task, side by
 * side with the naive design the first article describes (the whole state,
 * history and results inline, rewritten atomically with fsync on every save).
 *
 * Run: node bin/waystation-tsx.mjs bench/store-bench.ts [--steps 10000] [--window 50]
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { openStore } from '../electron/store/directory-store.js';
import { parseVersionFileName } from '../electron/store/version-file.js';
import { parseSegment } from '../electron/store/version-records.js';
import { writeFileAtomic } from '../electron/store/atomic-file.js';
import { nodeFs } from '../electron/store/store-fs.js';
import { type CheckpointInput, HistoryMessage } from '../shared/checkpoint/schema.js';
import { freshCheckpoint } from './lib/fresh-checkpoint.js';
import { benchOptions, wholeNumber } from './lib/bench-args.js';
import { computeDiff } from '../shared/diff/json-diff.js';

const DEFAULT_STEPS = 10_000;
const DEFAULT_WINDOW = 50;

export interface StoreBenchOptions {
  /** Steps of the task (its plan length). Default 10,000. */
  steps?: number;
  /** Saves measured around each probe point. Default 50. */
  window?: number;
  /** Folder for the temp data; removed afterwards. Default: the OS temp folder. */
  tmpDir?: string;
  /** Print the table (default true). */
  print?: boolean;
}

export interface LatencyStats {
  p50: number;
  p99: number;
  mean: number;
}

export interface StoreBenchResult {
  steps: number;
  early: { step: number; waystation: LatencyStats; naive: LatencyStats };
  late: { step: number; waystation: LatencyStats; naive: LatencyStats };
  /** Late p50 / early p50. */
  waystationGrowth: number;
  naiveGrowth: number;
  payloadBytesPerStep: number;
  /** Apparent bytes (file sizes) per step on disk. */
  waystationBytesPerStep: number;
  /** Allocated bytes (st_blocks) per step on disk, filesystem block rounding included. */
  waystationAllocatedPerStep: number;
  naiveBytesPerStep: number;
  /** History chain blobs / message payload. */
  historyRatio: number;
  /** Everything in the task folder but the hot snapshot / message + result payload. */
  storageRatio: number;
  /** The same in allocated blocks (st_blocks), which is what the task takes from the disk. */
  allocatedRatio: number;
  /** Bytes by part: `versions` includes the blobs they carry, also counted apart as `blobs`. */
  breakdown: { versions: number; fullSnapshots: number; blobs: number; hot: number; events: number };
  /** listTasks over `listing.tasks` task folders. */
  listing: { tasks: number; ms: number };
  /** computeDiff of two checkpoints of about `mb` MB each that differ in a few places. */
  diff: { mb: number; ms: number };
  /**
   * What an open view of the task reads after its last save (medians of 3, a fresh store each): the whole version
   * list and message history, against only what follows the previous version's, as the app asks.
   */
  liveView: { historyMs: number; historyAfterMs: number; messagesMs: number; messagesAfterMs: number };
  /**
   * Listing a task whose runner is appending to a segment, so checkpoint.json
   * is `behind` versions behind and the row applies them (median of 15), and
   * the same once the lease is let go (checkpoint.json current).
   */
  runningRow: { behind: number; behindMs: number; currentMs: number };
  elapsedSeconds: number;
}

/** Time listTasks over `count` small task folders (written directly, without fsync, to set up quickly). */
async function listingBench(dir: string, count: number): Promise<number> {
  const text = (id: string) => JSON.stringify({ ...initialCheckpoint(id, 5), version: 1, history: { count: 0, head: null } });
  for (let i = 0; i < count; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, count - i) }, async (_, j) => {
        const id = `task-${String(i + j).padStart(5, '0')}`;
        const cp = text(id);
        await fs.mkdir(path.join(dir, id, 'versions'), { recursive: true });
        await fs.writeFile(path.join(dir, id, 'checkpoint.json'), cp);
        await fs.writeFile(
          path.join(dir, id, 'versions', '00000001.json'),
          `{"format":"waystation-version","version":1,"kind":"full","checkpoint":${cp}}`,
        );
      }),
    );
  }
  const store = openStore(dir);
  const t0 = performance.now();
  const tasks = await store.listTasks();
  const ms = performance.now() - t0;
  if (tasks.length !== count || tasks.some((t) => t.problems.length > 0)) throw new Error('listing bench: unexpected listing');
  return ms;
}

/** A task of `steps` plan entries, `behind` versions appended under its lease, listed before and after the lease is let go. */
async function runningRowBench(root: string, steps: number, behind: number): Promise<StoreBenchResult['runningRow']> {
  const store = openStore(root);
  const { version: _v, ...first } = initialCheckpoint('row', steps);
  let cp: CheckpointInput = (await store.create(first)).checkpoint;
  const lease = await store.acquireLease('row', { owner: 'bench', heartbeatMs: 0 });
  for (let k = 1; k <= behind; k++) {
    const { version, ...next } = afterStep(cp, k);
    cp = (
      await store.save('row', {
        expectedVersion: version,
        checkpoint: next,
        results: { [`s${k}`]: filler(k, KB) },
        appendHistory: [{ role: 'assistant', content: filler(k + 3, KB) }],
        lease,
      })
    ).checkpoint;
  }
  const median = async () => {
    const ms: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      const [row] = await openStore(root).listTasks();
      ms.push(performance.now() - t0);
      if (row?.checkpoint?.version !== behind + 1)
        throw new Error(`running row bench: the row shows version ${row?.checkpoint?.version}, not ${behind + 1}`);
    }
    return ms.sort((a, b) => a - b)[7];
  };
  const behindMs = await median();
  await store.settle('row');
  await lease.release();
  return { behind, behindMs, currentMs: await median() };
}

/** The reads of an open view after the last save of task `id` (see StoreBenchResult.liveView). */
async function liveViewBench(root: string, id: string): Promise<StoreBenchResult['liveView']> {
  const median = async (read: () => Promise<number>) => {
    const ms: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      if ((await read()) < 0) throw new Error('live view bench: nothing read');
      ms.push(performance.now() - t0);
    }
    return ms.sort((a, b) => a - b)[1];
  };
  const store = openStore(root);
  const versions = await store.history(id);
  const previous = versions[versions.length - 2];
  const before = await store.readVersion(id, previous.version);
  const mark = { version: previous.version, updated_at: previous.updated_at, bytes: previous.bytes };
  const history = await openStore(root).historyAfter(id, mark);
  const messages = await openStore(root).readHistoryAfter(id, undefined, before.history);
  if (
    history.after !== previous.version ||
    history.versions.length !== 1 ||
    messages.from !== before.history.count ||
    messages.messages.length !== 1
  ) {
    throw new Error('live view bench: a read after the previous version did not continue it');
  }
  return {
    historyMs: await median(async () => (await openStore(root).history(id)).length),
    historyAfterMs: await median(async () => (await openStore(root).historyAfter(id, mark)).versions.length),
    messagesMs: await median(async () => (await openStore(root).readHistory(id)).length),
    messagesAfterMs: await median(async () => (await openStore(root).readHistoryAfter(id, undefined, before.history)).messages.length),
  };
}

/** Time computeDiff on two ~5 MB checkpoints (a 20,000-step plan with results inline) differing in a few steps. */
function diffBench(): { mb: number; ms: number } {
  const make = () => ({
    ...initialCheckpoint('diff', 20_000),
    plan: Array.from({ length: 20_000 }, (_, i) => ({
      id: `s${i}`,
      name: `step ${i}`,
      status: 'done',
      attempts: 1,
      result: { text: filler(i, 200), n: i },
    })),
  });
  const a = JSON.parse(JSON.stringify(make()));
  const b = JSON.parse(JSON.stringify(make()));
  for (const i of [5, 500, 15_000]) b.plan[i].status = 'failed';
  b.plan.push({ id: 'extra', name: 'extra', status: 'pending' });
  const mb = JSON.stringify(a).length / 1e6;
  computeDiff(a, b);
  const t0 = performance.now();
  const ops = computeDiff(a, b);
  const ms = performance.now() - t0;
  if (ops.length !== 4) throw new Error(`diff bench: expected 4 ops, got ${ops.length}`);
  return { mb, ms };
}

const KB = 1024;

function filler(seed: number, bytes: number): string {
  const base = `step ${seed} `;
  return (base + 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27))).slice(0, bytes);
}

function initialCheckpoint(taskId: string, steps: number): CheckpointInput {
  return freshCheckpoint({ taskId, taskName: 'store bench', goal: 'a long task', steps, at: new Date(0).toISOString() });
}

/** The checkpoint after step `k` (1-based) finished. */
function afterStep(cp: CheckpointInput, k: number): CheckpointInput {
  const plan = cp.plan.slice();
  plan[k - 1] = { ...plan[k - 1], status: 'done', attempts: 1, finished_at: new Date(k * 1000).toISOString() };
  return {
    ...cp,
    plan,
    current_step: k,
    phase: `step ${k + 1}`,
    run: { ...cp.run, updated_at: new Date(k * 1000).toISOString(), tokens_in: k * 100, tokens_out: k * 50 },
  };
}

function stats(samples: number[]): LatencyStats {
  const s = samples.slice().sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

async function du(dir: string): Promise<{ apparent: number; allocated: number; allocatedHot: number; byTop: Map<string, number> }> {
  let apparent = 0;
  let allocated = 0;
  let allocatedHot = 0;
  const byTop = new Map<string, number>();
  for (const rel of await fs.readdir(dir, { recursive: true })) {
    const st = await fs.stat(path.join(dir, rel));
    if (!st.isFile()) continue;
    apparent += st.size;
    allocated += st.blocks * 512;
    const top = rel.split(path.sep)[0];
    if (top === 'checkpoint.json') allocatedHot += st.blocks * 512;
    byTop.set(top, (byTop.get(top) ?? 0) + st.size);
  }
  return { apparent, allocated, allocatedHot, byTop };
}

/** The naive baseline: one JSON file with everything inline, rewritten atomically on each save. */
async function naiveRun(
  dir: string,
  steps: number,
  probes: number[],
  window: number,
): Promise<{ latencies: Map<number, number[]>; finalBytes: number }> {
  const file = path.join(dir, 'naive-task.json');
  const history: HistoryMessage[] = [];
  const results: Record<string, string> = {};
  let cp = initialCheckpoint('naive', steps);
  const latencies = new Map<number, number[]>();
  const measured = new Set<number>();
  for (const p of probes) for (let k = p; k < p + window && k <= steps; k++) measured.add(k);
  const last = Math.max(...measured);
  for (let k = 1; k <= last; k++) {
    cp = afterStep(cp, k);
    history.push({ role: k % 2 ? 'assistant' : 'user', content: filler(k, KB) });
    results[`s${k}`] = filler(k + 7, KB);
    // Only probe windows are written: rewriting the whole state at every one of 10,000 steps would take hours.
    if (!measured.has(k)) continue;
    const t0 = performance.now();
    await writeFileAtomic(nodeFs, file, JSON.stringify({ ...cp, history, results }));
    const ms = performance.now() - t0;
    const probe = probes.filter((p) => p <= k).pop()!;
    latencies.set(probe, [...(latencies.get(probe) ?? []), ms]);
  }
  return { latencies, finalBytes: (await fs.stat(file)).size };
}

/** Run the benchmark; returns the numbers (and prints a table unless `print` is false). */
export async function runStoreBench(opts: StoreBenchOptions = {}): Promise<StoreBenchResult> {
  const steps = opts.steps ?? DEFAULT_STEPS;
  const window = opts.window ?? DEFAULT_WINDOW;
  const started = performance.now();
  const tmp = await fs.mkdtemp(path.join(opts.tmpDir ?? os.tmpdir(), 'waystation-store-bench-'));
  const early = Math.min(100, Math.max(1, steps - 2 * window));
  const late = Math.max(1, steps - window + 1);
  try {
    const store = openStore(path.join(tmp, 'store'));
    let cp = initialCheckpoint('bench', steps);
    const { version: _v, ...first } = cp;
    await store.create(first);
    // Saved as the runtime saves a task: under its lease, appended to segments, the lease let go at the end.
    const lease = await store.acquireLease('bench', { owner: 'bench', heartbeatMs: 0 });
    const wsLat = new Map<number, number[]>([
      [early, []],
      [late, []],
    ]);
    let payload = 0;
    let historyPayload = 0;
    for (let k = 1; k <= steps; k++) {
      cp = afterStep(cp, k);
      const message: HistoryMessage = { role: k % 2 ? 'assistant' : 'user', content: filler(k, KB) };
      const result = filler(k + 7, KB);
      payload += Buffer.byteLength(JSON.stringify(message)) + Buffer.byteLength(JSON.stringify(result));
      historyPayload += Buffer.byteLength(JSON.stringify(message));
      const { version: _ver, ...next } = cp;
      const t0 = performance.now();
      const saved = await store.save('bench', {
        expectedVersion: k,
        checkpoint: next,
        results: { [`s${k}`]: result },
        appendHistory: [message],
        lease,
      });
      const ms = performance.now() - t0;
      cp = saved.checkpoint;
      if (k >= early && k < early + window) wsLat.get(early)!.push(ms);
      if (k >= late) wsLat.get(late)!.push(ms);
    }
    await store.settle('bench');
    await lease.release();
    const taskDir = path.join(tmp, 'store', 'bench');
    const usage = await du(taskDir);
    const liveView = await liveViewBench(path.join(tmp, 'store'), 'bench');
    const runningRow = await runningRowBench(path.join(tmp, 'row'), steps, 8);
    // Blobs ride in the version files, one line each after the envelope. History chunks are the blobs not named
    // by a result_ref; each chunk holds one message here.
    const resultBlobs = new Set(cp.plan.map((s) => s.result_ref?.slice(7, 71)).filter(Boolean));
    let historyBlobBytes = 0;
    let blobBytes = 0;
    let fullSnapshots = 0;
    for (const name of await fs.readdir(path.join(taskDir, 'versions'))) {
      const first = parseVersionFileName(name);
      if (first === null) continue;
      const bytes = await fs.readFile(path.join(taskDir, 'versions', name));
      for (const record of parseSegment(bytes, first).records) {
        const own = bytes.subarray(record.start, record.end);
        if (own.subarray(0, 80).toString().includes('"kind":"full"')) fullSnapshots++;
        const eol = own.indexOf(0x0a);
        if (eol < 0) continue;
        for (const line of own
          .subarray(eol + 1)
          .toString('utf8')
          .split('\n')) {
          if (line === '') continue;
          const size = Buffer.byteLength(line) + 1;
          blobBytes += size;
          if (!resultBlobs.has(createHash('sha256').update(line).digest('hex'))) historyBlobBytes += size;
        }
      }
    }

    const naiveDir = path.join(tmp, 'naive');
    await fs.mkdir(naiveDir);
    const naive = await naiveRun(naiveDir, steps, [early, late], window);

    const listTasks = 10_000;
    const listingMs = await listingBench(path.join(tmp, 'listing'), listTasks);
    const diff = diffBench();

    const hot = usage.byTop.get('checkpoint.json') ?? 0;
    const result: StoreBenchResult = {
      steps,
      early: { step: early, waystation: stats(wsLat.get(early)!), naive: stats(naive.latencies.get(early)!) },
      late: { step: late, waystation: stats(wsLat.get(late)!), naive: stats(naive.latencies.get(late)!) },
      waystationGrowth: 0,
      naiveGrowth: 0,
      payloadBytesPerStep: payload / steps,
      waystationBytesPerStep: usage.apparent / steps,
      waystationAllocatedPerStep: usage.allocated / steps,
      naiveBytesPerStep: naive.finalBytes / steps,
      historyRatio: historyBlobBytes / historyPayload,
      storageRatio: (usage.apparent - hot) / payload,
      allocatedRatio: (usage.allocated - usage.allocatedHot) / payload,
      breakdown: {
        versions: usage.byTop.get('versions') ?? 0,
        fullSnapshots,
        blobs: blobBytes,
        hot,
        events: usage.byTop.get('events.jsonl') ?? 0,
      },
      listing: { tasks: listTasks, ms: listingMs },
      diff,
      liveView,
      runningRow,
      elapsedSeconds: (performance.now() - started) / 1000,
    };
    result.waystationGrowth = result.late.waystation.p50 / result.early.waystation.p50;
    result.naiveGrowth = result.late.naive.p50 / result.early.naive.p50;
    if (opts.print !== false) printResult(result);
    return result;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

function printResult(r: StoreBenchResult): void {
  const f = (n: number) => n.toFixed(2).padStart(9);
  const kb = (n: number) => `${(n / 1024).toFixed(2)} KiB`;
  console.log(`\nstore bench: ${r.steps}-step task, ~1 KiB message + ~1 KiB result per step (${r.elapsedSeconds.toFixed(1)} s)\n`);
  console.log('save latency (ms)            p50        p99       mean');
  for (const [label, row] of [
    [`waystation @ step ${r.early.step}`, r.early.waystation],
    [`waystation @ step ${r.late.step}`, r.late.waystation],
    [`naive      @ step ${r.early.step}`, r.early.naive],
    [`naive      @ step ${r.late.step}`, r.late.naive],
  ] as const) {
    console.log(`${label.padEnd(26)}${f(row.p50)}  ${f(row.p99)}  ${f(row.mean)}`);
  }
  console.log(`\nlate/early p50: waystation ${r.waystationGrowth.toFixed(2)}x (target <= 1.5x), naive ${r.naiveGrowth.toFixed(2)}x`);
  console.log(`payload per step:            ${kb(r.payloadBytesPerStep)}`);
  console.log(`waystation on disk per step: ${kb(r.waystationBytesPerStep)} (allocated ${kb(r.waystationAllocatedPerStep)})`);
  console.log(`naive on disk per step:      ${kb(r.naiveBytesPerStep)}`);
  console.log(`history blobs / message payload: ${r.historyRatio.toFixed(2)}x (target <= 2x)`);
  console.log(
    `task folder (without hot snapshot) / payload: ${r.storageRatio.toFixed(2)}x, in allocated blocks ${r.allocatedRatio.toFixed(2)}x (target <= 2x)`,
  );
  const b = r.breakdown;
  console.log(
    `breakdown: versions ${kb(b.versions)} (${b.fullSnapshots} full snapshots; blobs carried ${kb(b.blobs)}), checkpoint.json ${kb(b.hot)}, events ${kb(b.events)}`,
  );
  console.log(`listTasks over ${r.listing.tasks} task folders: ${r.listing.ms.toFixed(0)} ms`);
  console.log(`computeDiff of two ${r.diff.mb.toFixed(1)} MB checkpoints: ${r.diff.ms.toFixed(1)} ms`);
  const v = r.liveView;
  console.log(
    `an open view after the last save: version list ${v.historyAfterMs.toFixed(1)} ms (whole list ${v.historyMs.toFixed(0)} ms, ${(v.historyMs / v.historyAfterMs).toFixed(1)}x);`,
  );
  console.log(
    `  messages ${v.messagesAfterMs.toFixed(1)} ms (whole history ${v.messagesMs.toFixed(0)} ms, ${(v.messagesMs / v.messagesAfterMs).toFixed(1)}x)`,
  );
  const row = r.runningRow;
  console.log(
    `a running task's row (${r.steps}-step plan, checkpoint.json ${row.behind} versions behind its segment): ${row.behindMs.toFixed(1)} ms; once the lease is let go: ${row.currentMs.toFixed(1)} ms\n`,
  );
}

/**
 * True when this file is the program being run. Under bin/waystation-tsx.mjs
 * the entry is no longer in argv, so a bench runner that imports this module
 * (npm run bench, or any importer setting `globalThis.WAYSTATION_BENCH_LIBRARY`)
 * opts out explicitly.
 */
function isEntryPoint(): boolean {
  const argv1 = process.argv[1] ?? '';
  if (import.meta.url === pathToFileURL(argv1).href) return true;
  const hosted =
    (globalThis as { WAYSTATION_BENCH_LIBRARY?: boolean }).WAYSTATION_BENCH_LIBRARY === true || process.env.npm_lifecycle_event === 'bench';
  return argv1.endsWith('waystation-tsx.mjs') && !hosted;
}

if (isEntryPoint()) {
  const values = benchOptions(import.meta.url, { steps: { type: 'string' }, window: { type: 'string' } });
  await runStoreBench({
    steps: wholeNumber('steps', values.steps, DEFAULT_STEPS, 2),
    window: wholeNumber('window', values.window, DEFAULT_WINDOW),
  });
}
