/**
 * One case of the runtime bench: the bench agent driven through the runtime
 * (startTask, the engine, the lease, the store), and, in the same run, the
 * same workload saved by calling the store directly, which is the floor the
 * runtime's cost per step is measured against.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore, startTask, type CheckpointStore, type OperationEnv } from '../../../electron/runtime/index.js';
import { startBenchChild } from '../host-client.js';
import { workloadMessage, workloadResult, workloadStepId } from '../agent-workload.js';
import { directorySize, type DiskUsage } from '../dir-size.js';
import { msSince, nowNs, timeRepeated } from '../timing.js';
import { timedRanges, type StepRange } from '../compare/side-result.js';
import { initialState, nextState } from '../compare/waystation-side.js';
import { benchAgent, stepPrompt, WorkloadProvider, type StepTiming } from './bench-agent.js';
import { READS_AFTER_STEPS } from './reads-after-steps.js';

export interface RuntimeCase {
  /** Steps the agent runs. */
  steps: number;
  /** Steps in its plan (at least `steps`). */
  planSteps: number;
}

export interface RuntimeCaseResult extends RuntimeCase {
  early: StepRange;
  late: StepRange;
  /** Per step: the runtime's time for it, the agent's own work taken out. */
  stepMs: number[];
  /** Every store.save the drive made, in order, timed where the engine calls it. */
  storeSaveMs: number[];
  /** Versions the drive wrote per step it ran. */
  savesPerStep: number;
  /** The same workload saved by calling the store directly, one save per step: the floor. */
  directSaveMs: number[];
  storage: RuntimeStorage;
  /**
   * Reading the latest state with its messages from a freshly opened store (getTask + readHistory), timed after
   * `untimed` reads like it (see FRESH_READS_BEFORE).
   */
  read: { ms: number[]; messages: number; untimed: number };
  /**
   * Reading it as a reader beside the running task does (an inspector's host, in a process of its own): a store
   * kept open, after each of the last steps, getTask and the messages after those it holds (readHistoryAfter).
   * The first of those reads, which takes the whole history, is not among these.
   */
  liveRead: { ms: number[]; messages: number };
  wallMs: number;
}

export interface RuntimeStorage {
  /** JSON bytes of what the agent handed over: each step's result, the prompt and the model's reply as messages. */
  payloadBytes: number;
  task: DiskUsage;
  /** Apparent bytes by top-level entry of the task folder (checkpoint.json, versions, events.jsonl, ...). */
  byEntry: Record<string, number>;
}

const TASK_ID = 'bench-runtime';
const SEED = 1;

/** Drive one case in `dir` (created empty by the caller). */
export async function runRuntimeCase(c: RuntimeCase, dir: string, readRuns: number): Promise<RuntimeCaseResult> {
  const started = nowNs();
  const runtimeDir = path.join(dir, 'runtime');
  const directDir = path.join(dir, 'direct');
  await fs.mkdir(runtimeDir, { recursive: true });
  await fs.mkdir(directDir, { recursive: true });

  const storeSaveMs: number[] = [];
  const inner = openStore(runtimeDir);
  const store = timedSaves(inner, storeSaveMs);
  const timings: StepTiming[] = [];
  await drive(c, runtimeDir, store, (t) => timings.push(t));
  if (timings.length !== c.steps) throw new Error(`the bench agent ran ${timings.length} steps of ${c.steps}`);

  const directSaveMs = await saveDirectly(c, directDir);
  const taskDir = path.join(runtimeDir, TASK_ID);
  const storage: RuntimeStorage = {
    payloadBytes: payloadBytes(c.steps),
    task: await directorySize(taskDir),
    byEntry: await bytesByEntry(taskDir),
  };
  const freshRead = async () => {
    const fresh = openStore(runtimeDir);
    const entry = await fresh.getTask(TASK_ID);
    if (!entry?.checkpoint) throw new Error(`getTask(${TASK_ID}) found no readable checkpoint in ${runtimeDir}`);
    return fresh.readHistory(TASK_ID);
  };
  for (let i = 0; i < FRESH_READS_BEFORE; i++) await freshRead();
  const { result, ms } = await timeRepeated(readRuns, freshRead);
  const liveRead = await readBesideTheRun(c, path.join(dir, 'live'));
  const { early, late } = timedRanges(c.steps);
  return {
    ...c,
    early,
    late,
    stepMs: timings.map((t) => t.stepMs - t.agentMs),
    storeSaveMs,
    savesPerStep: storeSaveMs.length / c.steps,
    directSaveMs,
    storage,
    read: { ms, messages: result.length, untimed: FRESH_READS_BEFORE },
    liveRead,
    wallMs: msSince(started),
  };
}

/** The bench agent run through the runtime in `root`, each step's timing given to `record`. */
async function drive(
  c: RuntimeCase,
  root: string,
  store: CheckpointStore,
  record: (t: StepTiming) => void,
  between?: (step: number) => Promise<void>,
): Promise<void> {
  const agent = benchAgent({ seed: SEED, steps: c.steps, planSteps: c.planSteps, record, between });
  const env: OperationEnv = { store, root, llm: new WorkloadProvider(SEED, c.steps), actor: 'bench' };
  const outcome = await startTask(env, agent, { taskId: TASK_ID });
  if (outcome.status !== 'done') throw new Error(`the bench agent ended ${outcome.status}: ${outcome.message}`);
}

/**
 * The case run again in `root`, with a reader beside it (liveReader): a run of its own, so that nothing the
 * reader does is in the figures of the run measured above.
 */
async function readBesideTheRun(c: RuntimeCase, root: string): Promise<RuntimeCaseResult['liveRead']> {
  await fs.mkdir(root, { recursive: true });
  const live = liveReader(root, Math.max(1, c.steps - LIVE_READS + 1), c.steps);
  try {
    let steps = 0;
    await drive(c, root, openStore(root), () => steps++, live.after);
    if (steps !== c.steps) throw new Error(`the bench agent ran ${steps} steps of ${c.steps}`);
  } finally {
    await live.stop();
  }
  return { ms: live.ms, messages: live.messages() };
}

/**
 * Fresh reads made before those timed. The graph's repeated read is timed after it read its state after each of its
 * last READS_AFTER_STEPS steps (and loaded it within every step): the code of Waystation's fresh read, which the
 * agent's run never calls, runs as often first, so that neither side is timed while V8 still compiles its read.
 */
const FRESH_READS_BEFORE = READS_AFTER_STEPS;

/** The reader beside the running task reads after each of the last this many steps ... */
const LIVE_READS = 100;
/** ... and the last this many of those reads are timed (RuntimeCaseResult.liveRead). */
const LIVE_TIMED = READS_AFTER_STEPS;

/**
 * The reader beside the running task (live-reader.ts, a process of its own, as an inspector's host is):
 * `after(step)` has it read after each step from `from` on, as a host that has shown the task for a while (its
 * first read takes the whole history, and its code is compiled by the reads that follow); the last LIVE_TIMED
 * reads, those of the run's last steps, are timed.
 */
function liveReader(root: string, from: number, last: number) {
  const child = startBenchChild('runtime/live-reader.ts', [root, TASK_ID]);
  const ms: number[] = [];
  let messages = 0;
  const ready = child.next('ready');
  const after = async (step: number) => {
    if (step < from) return;
    await ready;
    child.send('read');
    const read = await child.next<{ ms: number; messages: number }>('read');
    if (step > last - LIVE_TIMED && step > from) ms.push(read.ms);
    messages = read.messages;
  };
  return { ms, after, messages: () => messages, stop: () => child.stop() };
}

/** The store with each save timed into `into`. */
function timedSaves(inner: CheckpointStore, into: number[]): CheckpointStore {
  const store = Object.create(inner) as CheckpointStore;
  store.save = async (taskId, request) => {
    const start = nowNs();
    const saved = await inner.save(taskId, request);
    into.push(msSince(start));
    return saved;
  };
  return store;
}

/** The workload saved through the store called directly, under the lease, one save per step (the store bench's way). */
async function saveDirectly(c: RuntimeCase, dir: string): Promise<number[]> {
  const store = openStore(dir);
  const created = await store.create(initialState(c.planSteps), { appendHistory: [workloadMessage(SEED, 0)] });
  const taskId = created.checkpoint.task_id;
  const lease = await store.acquireLease(taskId, { owner: 'bench', heartbeatMs: 0 });
  const ms: number[] = [];
  let current = created.checkpoint;
  try {
    for (let step = 1; step <= c.steps; step++) {
      const next = nextState(current, step, c.planSteps, SEED);
      const result = workloadResult(SEED, step);
      const message = workloadMessage(SEED, step);
      const start = nowNs();
      const saved = await store.save(taskId, {
        expectedVersion: current.version,
        checkpoint: next,
        results: { [workloadStepId(step)]: result },
        appendHistory: [message],
        lease,
      });
      ms.push(msSince(start));
      current = saved.checkpoint;
    }
    await store.settle(taskId);
  } finally {
    await lease.release();
  }
  return ms;
}

/** JSON bytes of what the bench agent hands over in `steps` steps. */
export function payloadBytes(steps: number): number {
  let bytes = 0;
  for (let step = 1; step <= steps; step++) {
    const reply = workloadMessage(SEED, step).content;
    bytes += Buffer.byteLength(JSON.stringify({ ...workloadResult(SEED, step), reply_chars: reply.length }));
    bytes += Buffer.byteLength(JSON.stringify({ role: 'user', content: stepPrompt(step) }));
    bytes += Buffer.byteLength(JSON.stringify({ role: 'assistant', content: reply }));
  }
  return bytes;
}

async function bytesByEntry(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    out[entry.name] = entry.isDirectory() ? (await directorySize(full)).apparentBytes : (await fs.stat(full)).size;
  }
  return out;
}
