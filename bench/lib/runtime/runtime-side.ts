/**
 * One case of the runtime bench: the bench agent driven through the runtime
 * (startTask, the engine, the lease, the store), and, in the same run, the
 * same workload saved by calling the store directly, which is the floor the
 * runtime's cost per step is measured against.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore, startTask, type CheckpointStore, type OperationEnv } from '../../../electron/runtime/index.js';
import { workloadMessage, workloadResult, workloadStepId } from '../agent-workload.js';
import { directorySize, type DiskUsage } from '../dir-size.js';
import { msSince, nowNs, timeRepeated } from '../timing.js';
import { timedRanges, type StepRange } from '../compare/side-result.js';
import { initialState, nextState } from '../compare/waystation-side.js';
import { benchAgent, stepPrompt, WorkloadProvider, type StepTiming } from './bench-agent.js';

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
  /** Reading the latest state with its messages from a freshly opened store (getTask + readHistory). */
  read: { ms: number[]; messages: number };
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
  const agent = benchAgent({ seed: SEED, steps: c.steps, planSteps: c.planSteps, record: (t) => timings.push(t) });
  const env: OperationEnv = { store, root: runtimeDir, llm: new WorkloadProvider(SEED, c.steps), actor: 'bench' };
  const outcome = await startTask(env, agent, { taskId: TASK_ID });
  if (outcome.status !== 'done') throw new Error(`the bench agent ended ${outcome.status}: ${outcome.message}`);
  if (timings.length !== c.steps) throw new Error(`the bench agent ran ${timings.length} steps of ${c.steps}`);

  const directSaveMs = await saveDirectly(c, directDir);
  const taskDir = path.join(runtimeDir, TASK_ID);
  const storage: RuntimeStorage = {
    payloadBytes: payloadBytes(c.steps),
    task: await directorySize(taskDir),
    byEntry: await bytesByEntry(taskDir),
  };
  const { result, ms } = await timeRepeated(readRuns, async () => {
    const fresh = openStore(runtimeDir);
    const entry = await fresh.getTask(TASK_ID);
    if (!entry?.checkpoint) throw new Error(`getTask(${TASK_ID}) found no readable checkpoint in ${runtimeDir}`);
    return fresh.readHistory(TASK_ID);
  });
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
    read: { ms, messages: result.length },
    wallMs: msSince(started),
  };
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
