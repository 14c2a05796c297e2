/**
 * The Waystation side of the comparison: the agent workload saved through
 * the directory store, the way Waystation's runtime saves a step.
 *
 * The task has a plan of N steps whose statuses advance (pending → running →
 * done), and each step is one `save` carrying the next state, the step's
 * result (stored as a blob) and the step's message (appended to the history
 * chain). The saves are made under the task's lease, as the runtime makes
 * them, so each appends its version (with the step's new blobs) to the
 * task's open segment and fdatasyncs it; every sixteenth starts a new file
 * (fsynced, linked, `versions/` fsynced). Every save is durable when it
 * returns. checkpoint.json, a copy of a version that readers can rebuild, is
 * written when a segment is full and when the lease is let go, without fsync
 * (docs/FORMAT.md).
 *
 * The next state is built by immutable updates from the frozen checkpoint the
 * store returned, as the store's contract asks (SaveResult.checkpoint).
 */
import path from 'node:path';
import type { Checkpoint, CheckpointInput, PlanStep } from '../../../shared/checkpoint/schema.js';
import { CURRENT_SCHEMA_VERSION } from '../../../shared/checkpoint/schema.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { workloadMessage, workloadResult, workloadStepId, workloadTimestamp } from '../agent-workload.js';
import { directorySize } from '../dir-size.js';
import { msSince, nowNs, timeRepeated } from '../timing.js';
import { middleStep, timedRanges, type ReadTiming, type SideResult } from './side-result.js';

export interface WaystationRunOptions {
  steps: number;
  seed: number;
  /** The store's root folder (created by the caller, empty). */
  dir: string;
  readRuns: number;
}

export interface WaystationSideResult extends SideResult {
  taskId: string;
  /** Sum of SaveResult.bytesWritten over the run: what the store says it wrote. */
  bytesWritten: number;
  /** Letting the lease go after the last step (`settle`: checkpoint.json brought up to it), once per run, not a save. */
  settleMs: number;
}

const TASK_ID = 'bench-compare';

/**
 * Replay the workload through `openStore(dir)` and measure it.
 *
 * Version 1 (create) holds the user's request; step k writes version k + 1,
 * so the middle step's state is version middle + 1.
 */
export async function runWaystation(opts: WaystationRunOptions): Promise<WaystationSideResult> {
  const started = nowNs();
  const store: CheckpointStore = await openStore(opts.dir);
  const { early, late } = timedRanges(opts.steps);
  const middle = middleStep(opts.steps);

  const created = await store.create(initialState(opts.steps), { appendHistory: [workloadMessage(opts.seed, 0)] });
  // As the runtime drives a task: the lease taken once the task exists, held for its steps, let go at the end.
  const lease = await store.acquireLease(TASK_ID, { owner: 'bench', heartbeatMs: 0 });
  let bytesWritten = created.bytesWritten;
  let current = created.checkpoint;
  const allMs: number[] = [];
  for (let step = 1; step <= opts.steps; step++) {
    const next = nextState(current, step, opts.steps, opts.seed);
    const result = workloadResult(opts.seed, step);
    const message = workloadMessage(opts.seed, step);
    const start = nowNs();
    const saved = await store.save(TASK_ID, {
      expectedVersion: current.version,
      checkpoint: next,
      results: { [workloadStepId(step)]: result },
      appendHistory: [message],
      lease,
    });
    allMs.push(msSince(start));
    bytesWritten += saved.bytesWritten;
    current = saved.checkpoint;
  }
  const settleStart = nowNs();
  await store.settle(TASK_ID);
  const settleMs = msSince(settleStart);
  await lease.release();
  const usage = await directorySize(path.join(opts.dir, TASK_ID));

  const version = (step: number) => step + 1;
  const reads: SideResult['reads'] = {
    latest: await timeRead(opts.readRuns, 'getTask + readHistory: latest checkpoint and the whole message list', async () => {
      const entry = await store.getTask(TASK_ID);
      if (!entry?.checkpoint) throw new Error(`getTask(${TASK_ID}) found no readable checkpoint in ${opts.dir}`);
      return { checkpoint: entry.checkpoint, history: await store.readHistory(TASK_ID) };
    }),
    middle: await timeRead(
      opts.readRuns,
      `readVersion(${version(middle)}) + readHistory(${version(middle)}): step ${middle}'s checkpoint and its message list`,
      async () => ({
        checkpoint: await store.readVersion(TASK_ID, version(middle)),
        history: await store.readHistory(TASK_ID, version(middle)),
      }),
    ),
    latestSnapshot: await timeRead(opts.readRuns, 'getTask: latest checkpoint (hot snapshot), history by reference only', async () => {
      const entry = await store.getTask(TASK_ID);
      if (!entry?.checkpoint) throw new Error(`getTask(${TASK_ID}) found no readable checkpoint in ${opts.dir}`);
      return { checkpoint: entry.checkpoint, history: null };
    }),
    middleVersion: await timeRead(
      opts.readRuns,
      `readVersion(${version(middle)}): step ${middle}'s checkpoint, history by reference only`,
      async () => ({
        checkpoint: await store.readVersion(TASK_ID, version(middle)),
        history: null,
      }),
    ),
  };

  return {
    side: 'Waystation',
    taskId: TASK_ID,
    steps: opts.steps,
    sampled: false,
    sampling: null,
    durability:
      "every save is durable before it returns: saved under the task's lease as the runtime saves, a version (with the blobs it carries) is appended to the open segment and fdatasynced, and every 16th starts a new file (fsynced, linked, versions/ fsynced); checkpoint.json, a copy of a version, is written without fsync when a segment is full and when the lease is let go",
    saves: {
      early,
      late,
      earlyMs: allMs.slice(early.from - 1, early.to),
      lateMs: allMs.slice(late.from - 1, late.to),
      allMs,
    },
    storage: {
      bytes: usage.apparentBytes,
      allocatedBytes: usage.allocatedBytes,
      projected: false,
      method: `measured: sum of file sizes under the task folder (${usage.files} files)`,
      usage,
    },
    reads,
    wallMs: msSince(started),
    bytesWritten,
    settleMs,
  };
}

/** Version 1: the plan of `steps` pending steps, nothing done yet. */
export function initialState(steps: number): Omit<CheckpointInput, 'version'> {
  const plan: PlanStep[] = [];
  for (let step = 1; step <= steps; step++) {
    plan.push({ id: workloadStepId(step), name: `Step ${step}`, status: step === 1 ? 'running' : 'pending', attempts: 0 });
  }
  const at = workloadTimestamp(0);
  return {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: TASK_ID,
    task_name: 'Benchmark agent',
    status: 'running',
    phase: 'steps',
    goal: 'Work through the plan, one message and one result per step.',
    plan,
    current_step: 0,
    total_steps: steps,
    artifacts: [],
    side_effects: [],
    resume_hint: '',
    recovery: { mode: 'auto', decisions: [], auto_attempts: 0 },
    errors: [],
    run: { created_at: at, updated_at: at, model: 'bench', tokens_in: 0, tokens_out: 0, cost_usd: 0, elapsed_ms: 0, llm_calls: [] },
    source: { kind: 'runtime' },
    history: { count: 0, head: null },
  };
}

/**
 * The state after step `step`: that step done, the next one running.
 *
 * Only the two plan entries that change are copied; the store fills in
 * `version`, the step's `result_ref` and `history`.
 */
export function nextState(current: Checkpoint, step: number, steps: number, seed: number): Omit<CheckpointInput, 'version'> {
  const { version: _version, ...rest } = current;
  const at = workloadTimestamp(step);
  const result = workloadResult(seed, step);
  const plan = current.plan.slice();
  plan[step - 1] = { ...plan[step - 1], status: 'done', started_at: workloadTimestamp(step - 1), finished_at: at, attempts: 1 };
  if (step < steps) plan[step] = { ...plan[step], status: 'running', started_at: at };
  return {
    ...rest,
    status: step === steps ? 'done' : 'running',
    plan,
    current_step: step,
    run: {
      ...current.run,
      updated_at: at,
      tokens_in: current.run.tokens_in + result.tokens_in,
      tokens_out: current.run.tokens_out + result.tokens_out,
      elapsed_ms: current.run.elapsed_ms + 1000,
    },
    source: { kind: 'runtime' },
  };
}

async function timeRead(
  runs: number,
  what: string,
  read: () => Promise<{ checkpoint: Checkpoint; history: { content: string }[] | null }>,
): Promise<ReadTiming> {
  const { result, ms } = await timeRepeated(runs, read);
  // A read without the history still tells how many messages the version holds.
  const messages = result.history ? result.history.length : result.checkpoint.history.count;
  return { what, ms, messages, lastMessage: result.history ? (result.history[result.history.length - 1]?.content ?? '') : '' };
}
