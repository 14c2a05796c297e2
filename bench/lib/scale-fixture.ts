/**
 * The checkpoint directory the inspector-at-scale benchmark opens: many
 * tasks, each with a short history, in exactly the bytes the store's own
 * writer produces (blobs, deltas, full snapshots, event logs).
 *
 * Saving 100,000 versions one by one through the store takes from seven
 * minutes to most of an hour on a small, busy VM, so the fixture is stamped
 * from templates instead: each kind of task is written once by the real
 * writer under a placeholder id of the same length as the real ids, and every
 * task is a copy of its template with the id substituted. No blob mentions
 * the id (messages and results are seeded by step, not by task), and the
 * seals of segment records that do (a full snapshot) are computed again, so
 * each copy is byte for byte what the writer would have written for that
 * task, except the wall-clock `at` of its events and its lease entries'
 * holder and clock. Tasks are written as the runtime writes them: saved
 * under the lease, their versions after the first in a segment. `checkStampedTask`
 * proves it on a sample on every run, and the directory is cached under the
 * OS temp folder, keyed by a hash of the generator's parameters and the
 * writer's source: a change to the on-disk format writes a new fixture
 * instead of benchmarking a stale one.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../electron/store/directory-store.js';
import { isCompressed } from '../../electron/store/segment-compression.js';
import { parseVersionFileName, VERSIONS_DIR } from '../../electron/store/version-file.js';
import { parseSegment, sealRecord } from '../../electron/store/version-records.js';
import { mapLimit } from '../../electron/store/directory-scan.js';
import type { CheckpointInput } from '../../shared/checkpoint/schema.js';
import { freshCheckpoint } from './fresh-checkpoint.js';
import { workloadMessage, workloadResult, workloadStepId, workloadTimestamp } from './agent-workload.js';

/** Bump when the generator below changes what it writes. */
const GENERATOR_VERSION = 3;
/** Seed of every task's messages and results: shared, so that blobs (hashed) never depend on the task. */
const PAYLOAD_SEED = 7;
/** Same length as scaleTaskId's ids, so stamping changes no size. */
const PLACEHOLDER = 'task-@@@@@@';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The files whose code decides the bytes of a written task. */
const FORMAT_SOURCES = [
  'electron/store/task-writer.ts',
  'electron/store/file-lease.ts',
  'electron/store/segment-compression.ts',
  'electron/store/version-file.ts',
  'electron/store/blob-store.ts',
  'electron/store/atomic-file.ts',
  'electron/store/event-log.ts',
  'shared/diff/json-diff.ts',
  'shared/checkpoint/schema.ts',
  'bench/lib/fresh-checkpoint.ts',
];

export interface ScaleFixtureOptions {
  tasks: number;
  /** Versions of every task (the first creates it); at least 2. */
  versionsPerTask: number;
  /** Where fixtures are cached. Default: `<os tmpdir>/waystation-bench-fixtures`. */
  cacheDir?: string;
  /** Tasks written at once. Default 16. */
  concurrency?: number;
  log?: (line: string) => void;
}

export interface ScaleFixture {
  root: string;
  tasks: number;
  versions: number;
  /** The cache key: parameters and writer source hashed together. */
  formatHash: string;
  /** True when the directory came from the cache. */
  cached: boolean;
  /** Time spent writing it in this run (0 when cached). */
  writeMs: number;
}

/** The id of task `i`: fixed width, so the listing's order is the generation order. */
export function scaleTaskId(i: number): string {
  return `task-${String(i).padStart(6, '0')}`;
}

/**
 * The kind of task `i`: a third of the tasks (kind 0) finish every step by
 * their last version, the others (kind 1) stop part way, so the listing holds
 * both done and unfinished (halted) tasks.
 */
export function scaleTaskKind(i: number): 0 | 1 {
  return i % 3 === 0 ? 0 : 1;
}

/** Version 1 of a task of `kind`: every step pending. */
export function scaleInitialCheckpoint(taskId: string, kind: 0 | 1, versionsPerTask: number): CheckpointInput {
  const fresh = freshCheckpoint({
    taskId,
    taskName: `scale ${taskId}`,
    goal: 'read, summarise and file a report',
    steps: kind === 0 ? versionsPerTask - 1 : versionsPerTask + 2,
    stepId: workloadStepId,
    at: workloadTimestamp(0),
  });
  return { ...fresh, agent: { name: 'bench-agent', options: { task: taskId } } };
}

/** The checkpoint after step `k` (1-based) of `cp` finished. */
export function scaleAfterStep(cp: CheckpointInput, k: number): CheckpointInput {
  const plan = cp.plan.slice();
  plan[k - 1] = { ...plan[k - 1], status: 'done', attempts: 1, started_at: workloadTimestamp(k - 1), finished_at: workloadTimestamp(k) };
  const finished = k === plan.length;
  return {
    ...cp,
    version: cp.version + 1,
    plan,
    current_step: k,
    status: finished ? 'done' : 'running',
    phase: finished ? 'done' : `step ${k + 1}`,
    run: { ...cp.run, updated_at: workloadTimestamp(k), tokens_in: k * 400, tokens_out: k * 120, elapsed_ms: k * 1000 },
    source: { kind: 'runtime' },
  };
}

/**
 * Write task `taskId` of `kind` through the real store as the runtime writes it: version 1, then one save per
 * finished step under the task's lease (so the versions after the first are records of a segment, and
 * checkpoint.json names the last of them), the lease let go at the end.
 */
async function writeTask(root: string, taskId: string, kind: 0 | 1, versionsPerTask: number): Promise<void> {
  const store = openStore(root);
  const { version: _first, ...first } = scaleInitialCheckpoint(taskId, kind, versionsPerTask);
  let cp: CheckpointInput = (await store.create(first, { appendHistory: [workloadMessage(PAYLOAD_SEED, 0)] })).checkpoint;
  const lease = await store.acquireLease(taskId, { owner: 'scale-fixture', heartbeatMs: 0 });
  try {
    for (let k = 1; k < versionsPerTask; k++) {
      const { version: _v, ...next } = scaleAfterStep(cp, k);
      cp = (
        await store.save(taskId, {
          expectedVersion: k,
          checkpoint: next,
          results: { [workloadStepId(k)]: workloadResult(PAYLOAD_SEED, k) },
          appendHistory: [workloadMessage(PAYLOAD_SEED, k)],
          lease,
        })
      ).checkpoint;
    }
    await store.settle(taskId);
  } finally {
    await lease.release();
  }
}

/** Every file of a task folder as (relative path, bytes), sorted by path. */
async function readTree(dir: string): Promise<[string, Buffer][]> {
  const out: [string, Buffer][] = [];
  for (const rel of (await fs.readdir(dir, { recursive: true })).sort()) {
    const abs = path.join(dir, rel);
    if ((await fs.stat(abs)).isFile()) out.push([rel.split(path.sep).join('/'), await fs.readFile(abs)]);
  }
  return out;
}

/**
 * Events carry the wall clock of their save, and a lease entry its holder's process and clock; everything else
 * must match to the byte.
 */
function withoutClock(rel: string, bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (rel === 'events.jsonl') return text.replace(/"at":"[^"]*"/g, '"at":""');
  if (rel.startsWith('lease/'))
    return text.replace(/"(owner|hostname|process_start|acquired_at|heartbeat_at)":"[^"]*"/g, '"$1":""').replace(/"pid":\d+/g, '"pid":0');
  return text;
}

/** A template: the files of one kind of task, with the placeholder id where the task id goes. */
type Template = [string, Buffer][];

function stamp(template: Template, taskId: string): [string, Buffer][] {
  return template.map(([rel, bytes]) => {
    const stamped = Buffer.from(bytes.toString('utf8').replaceAll(PLACEHOLDER, taskId), 'utf8');
    return [rel, rel.startsWith(`${VERSIONS_DIR}/`) ? resealed(rel, stamped) : stamped];
  });
}

/**
 * A segment's records, each sealed again after the id was stamped into it: a record's seal is the hash of its
 * bytes, and a full snapshot among them holds the task's id. The id and the placeholder have the same length,
 * so every record stays where it was and only the hashes change.
 */
function resealed(rel: string, bytes: Buffer): Buffer {
  if (isCompressed(bytes))
    throw new Error(`the fixture's template ${rel} is a compressed segment, which stamping cannot reseal: use fewer versions per task`);
  const first = parseVersionFileName(path.posix.basename(rel));
  const segment = first === null ? null : parseSegment(bytes, first, false);
  if (!segment?.sealed) return bytes;
  if (segment.tail !== 'clean')
    throw new Error(`the fixture's template ${rel} does not read as the writer wrote it: ${segment.tailReason}`);
  // Each record sealed as the writer seals it (a clean segment is its sealed records and nothing else).
  return Buffer.concat(segment.records.map((r) => sealRecord(bytes.subarray(r.start, r.end), r.version)));
}

async function writeStamped(root: string, template: Template, taskId: string): Promise<void> {
  const dir = path.join(root, taskId);
  const folders = new Set(template.map(([rel]) => path.posix.dirname(rel)).filter((d) => d !== '.'));
  await fs.mkdir(dir);
  for (const folder of folders) await fs.mkdir(path.join(dir, folder), { recursive: true });
  for (const [rel, bytes] of stamp(template, taskId)) await fs.writeFile(path.join(dir, rel), bytes);
}

/**
 * Prove the stamping on task `i`: the real writer, given task `i` itself,
 * writes the same files with the same bytes (event times aside) as its stamped copy.
 */
export async function checkStampedTask(root: string, i: number, versionsPerTask: number): Promise<void> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-fixture-check-'));
  try {
    const id = scaleTaskId(i);
    await writeTask(scratch, id, scaleTaskKind(i), versionsPerTask);
    const written = await readTree(path.join(scratch, id));
    const stamped = await readTree(path.join(root, id));
    const names = (t: [string, Buffer][]) => t.map(([rel]) => rel).join('\n');
    if (names(written) !== names(stamped)) throw new Error(`fixture ${root}: task ${id} does not hold the files the store writes`);
    for (let f = 0; f < written.length; f++) {
      const [rel, bytes] = written[f];
      if (withoutClock(rel, bytes) !== withoutClock(rel, stamped[f][1])) {
        throw new Error(`fixture ${root}: ${id}/${rel} differs from what the store writes for that task`);
      }
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** The cache key of a fixture: its parameters and the writer's source, hashed. */
export async function fixtureFormatHash(tasks: number, versionsPerTask: number): Promise<string> {
  const h = createHash('sha256');
  h.update(JSON.stringify({ GENERATOR_VERSION, tasks, versionsPerTask }));
  for (const rel of FORMAT_SOURCES) h.update(await fs.readFile(path.join(REPO, rel)));
  return h.digest('hex').slice(0, 16);
}

/**
 * Check a sample of the fixture through the real store: every sampled task
 * lists without problems, has exactly `versionsPerTask` versions, and its
 * first and last versions rebuild.
 */
export async function verifyScaleFixture(root: string, tasks: number, versionsPerTask: number): Promise<void> {
  await checkStampedTask(root, Math.min(tasks - 1, 1), versionsPerTask);
  const store = openStore(root);
  const sample = [...new Set([0, 1, 2, Math.floor(tasks / 2), tasks - 1])].filter((i) => i >= 0 && i < tasks);
  for (const i of sample) {
    const id = scaleTaskId(i);
    const entry = await store.getTask(id);
    if (!entry?.checkpoint || entry.problems.length > 0) {
      throw new Error(
        `fixture ${root}: task ${id} does not read back cleanly (${entry ? entry.problems.map((p) => p.message).join('; ') : 'missing'})`,
      );
    }
    const history = await store.history(id);
    if (history.length !== versionsPerTask || entry.checkpoint.version !== versionsPerTask) {
      throw new Error(
        `fixture ${root}: task ${id} has ${history.length} versions (latest ${entry.checkpoint.version}), expected ${versionsPerTask}`,
      );
    }
    const first = await store.readVersion(id, 1);
    if (first.current_step !== 0) throw new Error(`fixture ${root}: version 1 of ${id} does not rebuild as written`);
    // Blobs are checked against their names as they are read: a stamped id inside one would fail here.
    const messages = await store.readHistory(id);
    const ref = entry.checkpoint.plan[0].result_ref;
    if (messages.length !== versionsPerTask || !ref || (await store.readBlob(id, ref)) === null) {
      throw new Error(`fixture ${root}: the history or results of ${id} do not read back`);
    }
  }
}

/**
 * The fixture for these parameters: from the cache when a complete one is
 * there, written afresh otherwise (into a temp folder renamed into place, so
 * an interrupted run never leaves a half-written fixture that looks complete).
 */
export async function ensureScaleFixture(opts: ScaleFixtureOptions): Promise<ScaleFixture> {
  const { tasks, versionsPerTask } = opts;
  if (!Number.isInteger(tasks) || tasks < 1) throw new Error(`tasks must be a whole number of at least 1, got ${tasks}`);
  if (!Number.isInteger(versionsPerTask) || versionsPerTask < 2)
    throw new Error(`versionsPerTask must be at least 2, got ${versionsPerTask}`);
  const cacheDir = opts.cacheDir ?? path.join(os.tmpdir(), 'waystation-bench-fixtures');
  const formatHash = await fixtureFormatHash(tasks, versionsPerTask);
  const root = path.join(cacheDir, `scale-${tasks}x${versionsPerTask}-${formatHash}`);
  const base = { root, tasks, versions: tasks * versionsPerTask, formatHash };
  if (
    await fs.stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    )
  ) {
    // A run that measured writes and was interrupted may have left its probe task behind: not part of the fixture.
    for (const name of await fs.readdir(root))
      if (!name.startsWith('task-')) await fs.rm(path.join(root, name), { recursive: true, force: true });
    await verifyScaleFixture(root, tasks, versionsPerTask);
    return { ...base, cached: true, writeMs: 0 };
  }
  await fs.mkdir(cacheDir, { recursive: true });
  const temp = await fs.mkdtemp(path.join(cacheDir, '.writing-'));
  const started = performance.now();
  try {
    // One template per kind of task (see scaleTaskKind): written by the store, then stamped.
    const templates = new Map<number, Template>();
    for (const kind of [0, 1] as const) {
      const scratch = path.join(temp, '.templates');
      await writeTask(scratch, PLACEHOLDER, kind, versionsPerTask);
      templates.set(kind, await readTree(path.join(scratch, PLACEHOLDER)));
      await fs.rm(scratch, { recursive: true, force: true });
    }
    let done = 0;
    await mapLimit(
      Array.from({ length: tasks }, (_, i) => i),
      opts.concurrency ?? 16,
      async (i) => {
        await writeStamped(temp, templates.get(scaleTaskKind(i))!, scaleTaskId(i));
        if (++done % 2000 === 0) opts.log?.(`  fixture: ${done}/${tasks} tasks written`);
      },
    );
    await verifyScaleFixture(temp, tasks, versionsPerTask);
    await fs.rename(temp, root);
  } catch (err) {
    await fs.rm(temp, { recursive: true, force: true });
    throw err;
  }
  return { ...base, cached: false, writeMs: performance.now() - started };
}
