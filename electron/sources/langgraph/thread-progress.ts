/**
 * Where a LangGraph thread stands at one checkpoint, in Waystation's words:
 * its status, plan, phase and resume hint (docs/LANGGRAPH.md, "Status").
 *
 * LangGraph records no run status. A checkpoint with nodes due is what a
 * running graph leaves between steps, what a breakpoint (`interruptBefore`,
 * `interruptAfter`) leaves, and what a process that ended inside a node
 * leaves: the rows are the same. So such a checkpoint is `running`; on the
 * newest version Waystation shows it running while it is young enough to be a
 * run's heartbeat, and interrupted after (LangGraphSource.readLease,
 * shared/checkpoint/task-state.ts), which is in Needs attention.
 * What is known is said: a node whose writes are saved finished; an answered
 * interrupt whose run did not reach a checkpoint stopped in that node.
 */
import type { PlanStep, TaskStatus } from '../../../shared/checkpoint/schema.js';
import type { DecodedWrite, PendingWork } from './due-nodes.js';
import { isPlainObject } from './inert-value.js';

const ERROR = '__error__';
/** Channels of LangGraph's own bookkeeping, never a node. */
const INTERNAL_NODES = new Set(['__input__', '__start__', '__interrupt__', '__end__']);
const NOT_OUTPUT = new Set([ERROR, '__error_source_node__', '__interrupt__', '__resume__']);

/** An interrupt of an `__interrupt__` write, with the task that raised it. */
export interface Interrupt {
  id: string | null;
  value: unknown;
  task_id: string;
}

export interface ProgressFacts {
  threadId: string;
  /** The thread's newest checkpoint: its pending writes count as LangGraph counts them on resume. */
  latest: boolean;
  /** The checkpoint's `versions_seen`: the nodes that ran before it. */
  seen: Record<string, unknown>;
  work: PendingWork;
  writes: readonly DecodedWrite[];
  interrupts: readonly Interrupt[];
}

export interface Progress {
  status: TaskStatus;
  plan: PlanStep[];
  current_step: number;
  phase: string;
  resume_hint: string;
  /** What invoking the graph with no new input runs next. */
  next: string[];
  /** Due nodes whose writes are saved with no checkpoint after them (the newest version only). */
  finished: string[];
  /** The failing writes, with the node each came from when known. */
  errors: { step_id: string | null; what: string }[];
  /** The interrupts still waiting for an answer. */
  waiting: boolean;
}

const errorText = (v: unknown): string =>
  typeof v === 'string' ? v : isPlainObject(v) && typeof v.message === 'string' ? v.message : JSON.stringify(v);

/** A value as short JSON text (a string as it is). */
export const shortJson = (v: unknown, max = 300): string => {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

/** Nodes in words: LangGraph's `__start__` is the node that takes the graph's input. */
const list = (nodes: readonly string[]) => nodes.map((n) => (n === '__start__' ? '__start__ (the input)' : n)).join(', ');

/** Work out a checkpoint's status, plan, phase and hint; see the module comment. */
export function progressOf(facts: ProgressFacts): Progress {
  const { work, latest } = facts;
  const invoke = `Invoking the graph on thread "${facts.threadId}" with no new input`;
  const finished = latest ? work.due.filter((d) => d.finished).map((d) => d.node) : [];
  const open = work.due.filter((d) => !finished.includes(d.node)).map((d) => d.node);
  const nodeOfTask = (taskId: string) => work.due.find((d) => d.task_ids.includes(taskId))?.node ?? (open.length === 1 ? open[0] : null);

  // A task that wrote its output after an error was retried and finished: LangGraph does not count the error then.
  const output = new Set(facts.writes.filter((w) => !NOT_OUTPUT.has(w.channel)).map((w) => w.task_id));
  const errorWrites = facts.writes.filter((w) => w.channel === ERROR && !output.has(w.task_id));
  const errors = errorWrites.map((w) => ({ step_id: nodeOfTask(w.task_id), what: errorText(w.value) }));
  const failedNodes = [...new Set(errors.map((e) => e.step_id).filter((n): n is string => n !== null))];
  const answered = facts.writes.some((w) => w.channel === '__resume__');
  const waiting = facts.interrupts.length > 0 && !answered;
  const askingNodes = [...new Set(facts.interrupts.map((i) => nodeOfTask(i.task_id)).filter((n): n is string => n !== null))];

  const allFinished = open.length === 0 && finished.length > 0;
  const next = allFinished ? work.triggered : open;
  const status: TaskStatus = waiting ? 'waiting_human' : errors.length > 0 ? 'failed' : work.due.length > 0 ? 'running' : 'done';

  // The plan shows the graph's own nodes: `__start__` (due while the input waits) is LangGraph's.
  const shown = (nodes: readonly string[]) => nodes.filter((node) => !INTERNAL_NODES.has(node));
  const later = new Set([...work.due.map((d) => d.node), ...(allFinished ? next : [])]);
  const ran = shown(Object.keys(facts.seen)).filter((node) => !later.has(node));
  const done = [...ran, ...shown(finished)];
  const plan: PlanStep[] = [
    ...done.map((node) => ({ id: node, name: node, status: 'done' as const, attempts: 1 })),
    ...shown(open).map((node) => {
      const error = errors.find((e) => e.step_id === node);
      return error
        ? { id: node, name: node, status: 'failed' as const, attempts: 1, error: { message: error.what, kind: 'langgraph-error' } }
        : { id: node, name: node, status: 'pending' as const, attempts: 0 };
    }),
    // A node that runs again (a loop back to itself) keeps its one step, done.
    ...shown(allFinished ? next : [])
      .filter((node) => !finished.includes(node))
      .map((node) => ({ id: node, name: node, status: 'pending' as const, attempts: 0 })),
  ];

  let phase: string;
  let hint: string;
  if (waiting) {
    const where = askingNodes.length ? askingNodes : open;
    phase = `waiting for a human${where.length ? ` in ${list(where)}` : ''}`;
    hint = `LangGraph waits for a human: ${facts.interrupts.map((i) => shortJson(i.value)).join('; ')}. Resume by invoking the graph on thread "${facts.threadId}" with a Command whose resume is the answer.`;
  } else if (errors.length > 0) {
    phase = `failed${failedNodes.length ? ` in ${list(failedNodes)}` : ''}`;
    hint = open.length ? `${invoke} runs ${list(open)} again.` : '';
  } else if (work.due.length === 0) {
    phase = 'done';
    hint = '';
  } else if (!latest) {
    // The thread went on after this checkpoint: it is a step of a run, as LangGraph saved it.
    phase = `next: ${list(open)}`;
    hint = `${list(open)} ${open.length > 1 ? 'were' : 'was'} due at this checkpoint; the thread has later checkpoints.`;
  } else if (allFinished) {
    phase = `${list(finished)} finished, not checkpointed; ${next.length ? `next: ${list(next)}` : 'the run ends'}`;
    hint =
      `The run stopped after ${list(finished)} finished, before LangGraph saved the next checkpoint; the writes are saved. ` +
      `${invoke} applies them (${list(finished)} does not run again) and ${next.length ? `runs ${list(next)}` : 'ends the run: they trigger no other node'}.`;
  } else if (answered) {
    phase = `answered; in ${list(open)}`;
    hint =
      `The interrupt in ${list(open)} was answered (the answer is saved), but no checkpoint followed: the process ended while ${list(open)} ran again, or is still running. ` +
      `${invoke} runs ${list(open)} again, which gets the saved answer.`;
  } else if (finished.length > 0) {
    phase = `in ${list(open)} (${list(finished)} finished)`;
    hint =
      `The run stopped during ${list(open)}: ${list(finished)} finished (the writes are saved), ${list(open)} did not. ` +
      `${invoke} runs ${list(open)}; the saved writes are applied, and ${list(finished)} does not run again.`;
  } else {
    phase = `next: ${list(open)}`;
    const unknown = work.unattributed
      ? ` ${work.unattributed} of the due tasks saved writes, which cannot be matched to their nodes here; LangGraph does not run those again.`
      : '';
    hint =
      `LangGraph stopped before ${list(open)}: at a breakpoint (interruptBefore/interruptAfter) waiting for someone to continue it, ` +
      `or in a process that ended (or still runs) inside ${list(open)}; its checkpoint does not say which.${unknown} ${invoke} runs ${list(open)}.`;
  }

  return {
    status,
    plan,
    current_step: done.length,
    phase,
    resume_hint: hint,
    next,
    finished,
    errors,
    waiting,
  };
}
