/**
 * A real LangGraph graph doing the runtime bench's work: a `StateGraph` whose
 * one node appends the step's message and stores the step's result, compiled
 * with `SqliteSaver` (WAL, synchronous=FULL), invoked once a step on one
 * thread with `durability: "sync"`, so every step's checkpoints are on disk
 * when `invoke` returns, as a Waystation step's versions are.
 *
 * The messages channel uses a concatenating reducer (what `add_messages`
 * does for new messages), so each checkpoint stores the whole list: the
 * graph's storage grows with the square of the steps. Above `fullUpTo` steps
 * the run is sampled: the thread is brought to the state before the late
 * steps with one `updateState` (a single checkpoint holding every earlier
 * message), the late steps are invoked and timed as usual, and the storage
 * is projected from what those late steps wrote (each checkpoint's size
 * grows linearly with its step, so N steps write about N/2 times a late
 * step's bytes).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { workloadMessage, workloadResult, type StepResult } from '../agent-workload.js';
import { msSince, nowNs, timeRepeated } from '../timing.js';
import { timedRanges, type StepRange } from '../compare/side-result.js';
import { READS_AFTER_STEPS } from './reads-after-steps.js';

interface Message {
  role: string;
  content: string;
}

export interface GraphRunResult {
  steps: number;
  sampled: boolean;
  early: StepRange;
  late: StepRange;
  /** `invoke` per step, for the steps run (every step, or the late ones when sampled). */
  stepMs: number[];
  earlyMs: number[];
  lateMs: number[];
  /** The database, WAL and shared-memory files (measured), or their projection for a sampled run. */
  storageBytes: number;
  storageProjected: boolean;
  /** `getState`: the latest state with every message, read again and again once the run is over. */
  read: { ms: number[]; messages: number };
  /**
   * `getState` of a graph compiled anew over a `SqliteSaver` opened for the read (the database opened, the saver's
   * statements prepared, the database closed after), as a process that did not run the graph reads it; timed after
   * `untimed` reads like it, once the run is over.
   */
  freshRead: { ms: number[]; untimed: number };
  /**
   * `getState` after each of the run's last READS_AFTER_STEPS steps, as Waystation's reader beside the running task
   * reads after each step: every read follows a change.
   */
  readAfterStep: number[];
  sqlite: { journalMode: string; synchronous: number };
}

const THREAD = { configurable: { thread_id: 'bench-graph' } };

// better-sqlite3's handle, as far as the bench uses it.
interface PragmaDatabase {
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): void;
}

/** Run the graph for `steps` steps in `dir` (created empty by the caller). */
export async function runLangGraphGraph(opts: {
  steps: number;
  seed: number;
  dir: string;
  fullUpTo: number;
  readRuns: number;
}): Promise<GraphRunResult> {
  const State = Annotation.Root({
    messages: Annotation<Message[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
    result: Annotation<StepResult | null>({ reducer: (_a, b) => b, default: () => null }),
    step: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  });
  const saver = SqliteSaver.fromConnString(path.join(opts.dir, 'graph.sqlite'));
  (saver as unknown as { setup(): void }).setup();
  const db = saver.db as unknown as PragmaDatabase;
  db.pragma('synchronous = FULL');
  const sqlite = {
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: Number(db.pragma('synchronous', { simple: true })),
  };
  const graph = new StateGraph(State)
    .addNode('agent', (state) => ({
      messages: [workloadMessage(opts.seed, state.step) as Message],
      result: workloadResult(opts.seed, state.step),
    }))
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer: saver });

  const { early, late } = timedRanges(opts.steps);
  const sampled = opts.steps > opts.fullUpTo;
  const stepMs: number[] = [];
  const earlyMs: number[] = [];
  const lateMs: number[] = [];
  const readAfterStep: number[] = [];
  const invokeStep = async (step: number) => {
    const start = nowNs();
    await graph.invoke({ step }, { ...THREAD, durability: 'sync' });
    const ms = msSince(start);
    stepMs.push(ms);
    if (step >= early.from && step <= early.to) earlyMs.push(ms);
    if (step >= late.from && step <= late.to) lateMs.push(ms);
    if (step > opts.steps - READS_AFTER_STEPS) {
      const read = nowNs();
      await graph.getState(THREAD);
      readAfterStep.push(msSince(read));
    }
  };

  // The user's request first, as in Waystation's task.
  await graph.updateState(THREAD, { messages: [workloadMessage(opts.seed, 0) as Message] });
  let lateBytes = 0;
  if (!sampled) {
    for (let step = 1; step <= opts.steps; step++) await invokeStep(step);
  } else {
    for (let step = early.from; step <= early.to; step++) await invokeStep(step);
    const earlier: Message[] = [];
    for (let i = early.to + 1; i < late.from; i++) earlier.push(workloadMessage(opts.seed, i) as Message);
    await graph.updateState(THREAD, { messages: earlier, step: late.from - 1 });
    const before = await storageOf(opts.dir);
    for (let step = late.from; step <= late.to; step++) await invokeStep(step);
    lateBytes = (await storageOf(opts.dir)) - before;
  }
  const { result, ms } = await timeRepeated(opts.readRuns, () => graph.getState(THREAD));
  const messages = (result.values as { messages: Message[] }).messages.length;
  const measured = await storageOf(opts.dir);
  db.close();
  const freshRead = async () => {
    const opened = SqliteSaver.fromConnString(path.join(opts.dir, 'graph.sqlite'));
    try {
      const state = await new StateGraph(State)
        .addNode('agent', () => ({}))
        .addEdge(START, 'agent')
        .addEdge('agent', END)
        .compile({ checkpointer: opened })
        .getState(THREAD);
      const read = (state.values as { messages?: Message[] }).messages?.length;
      if (read !== messages) throw new Error(`a graph opened anew read ${read} messages; the graph that ran read ${messages}`);
    } finally {
      (opened.db as unknown as PragmaDatabase).close();
    }
  };
  for (let i = 0; i < READS_AFTER_STEPS; i++) await freshRead();
  const fresh = await timeRepeated(opts.readRuns, freshRead);
  return {
    steps: opts.steps,
    sampled,
    early,
    late,
    stepMs,
    earlyMs,
    lateMs,
    storageBytes: sampled ? Math.round((lateBytes / (late.to - late.from + 1)) * (opts.steps / 2)) : measured,
    storageProjected: sampled,
    read: { ms, messages },
    freshRead: { ms: fresh.ms, untimed: READS_AFTER_STEPS },
    readAfterStep,
    sqlite,
  };
}

async function storageOf(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await fs.readdir(dir)) bytes += (await fs.stat(path.join(dir, name))).size;
  return bytes;
}
