/**
 * What a LangGraph checkpoint has left to do, worked out as LangGraph works
 * it out: the nodes due (a channel that triggers the node was updated since
 * the node last ran), which of them finished already (their writes are saved
 * against the checkpoint: LangGraph's pending writes), and so what invoking
 * the graph on the thread with no new input runs.
 *
 * On resume LangGraph does not run a due task that has a saved output write
 * again: it reapplies the writes and runs the others (pregel/loop.js,
 * `_reapplyWritesToSucceededNodes`; `getState` leaves such a task out of
 * `next`). Once every due task has written, the writes are applied and the
 * nodes they trigger run.
 *
 * Writes are saved by task id, not node name. A JavaScript checkpoint's pull
 * task ids are computed here as LangGraph computes them (a UUID v5 of the
 * namespace, step, node and trigger, in the checkpoint id's namespace:
 * pregel/algo.js, `_prepareSingleTask`). Python's ids hash the node's compiled
 * triggers with xxh3, and the checkpoint does not hold those triggers: there,
 * writes are told apart only by count (one due node, or as many writing tasks
 * as due nodes).
 */
import crypto from 'node:crypto';
import { isPlainObject } from './inert-value.js';

const BRANCH_PREFIX = 'branch:to:';
/** The graph's input channel, and the node that reads it. */
const START = '__start__';
const JOIN_PREFIX = 'join:';
/** Pending sends (LangGraph's `Send`): push tasks, which the plan does not show. */
const TASKS_CHANNEL = '__pregel_tasks';
/** The task id of writes that belong to no task (an `updateState`, a `Command`'s resume). */
export const NULL_TASK_ID = '00000000-0000-0000-0000-000000000000';
/** Writes that record how a task ended without being its output (pregel's isTaskOutput). */
const NOT_OUTPUT = new Set(['__error__', '__error_source_node__', '__interrupt__', '__resume__']);

/** A pending write, decoded. */
export interface DecodedWrite {
  task_id: string;
  channel: string;
  value: unknown;
}

/** A channel version's number: JavaScript counts with integers, Python with `"<n>.<random>"` strings. */
export function versionNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number.parseInt(v.split('.')[0], 10) || 0;
  return 0;
}

/** A `join:A+B:NODE` channel (a waiting edge): the nodes it waits for and the node it triggers. */
function parseJoin(channel: string): { sources: string[]; node: string } | null {
  if (!channel.startsWith(JOIN_PREFIX)) return null;
  const rest = channel.slice(JOIN_PREFIX.length);
  const colon = rest.lastIndexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return null;
  return { sources: rest.slice(0, colon).split('+'), node: rest.slice(colon + 1) };
}

/** The sources a join channel has seen: JavaScript keeps a list, Python a set (decoded as `$value`). */
function joinSeen(value: unknown): string[] {
  const list = Array.isArray(value) ? value : isPlainObject(value) && Array.isArray(value.$value) ? value.$value : [];
  return list.filter((v): v is string => typeof v === 'string');
}

/** A node due, with the channel that triggers it. */
export interface DueNode {
  node: string;
  trigger: string;
}

/**
 * The nodes due to run: each `branch:to:NODE` channel holding a value, and
 * each `join:A+B:NODE` channel that has seen all of A, B, at a version NODE
 * has not seen; and `__start__` while the input is in its channel. (Once the
 * run moves on, LangGraph drops the consumed value.)
 */
export function dueNodes(
  channelValues: Record<string, unknown>,
  versions: Record<string, unknown>,
  seen: Record<string, unknown>,
): DueNode[] {
  const due: DueNode[] = [];
  const unseen = (node: string, channel: string) => {
    const seenByNode = isPlainObject(seen[node]) ? (seen[node] as Record<string, unknown>) : {};
    return seenByNode[channel] === undefined || versionNumber(versions[channel]) > versionNumber(seenByNode[channel]);
  };
  for (const channel of Object.keys(channelValues)) {
    let node: string | null = null;
    if (channel === START) node = START;
    else if (channel.startsWith(BRANCH_PREFIX)) node = channel.slice(BRANCH_PREFIX.length);
    else {
      const join = parseJoin(channel);
      const got = join ? joinSeen(channelValues[channel]) : [];
      if (join && join.sources.every((s) => got.includes(s))) node = join.node;
    }
    if (node !== null && !due.some((d) => d.node === node) && unseen(node, channel)) due.push({ node, trigger: channel });
  }
  return due;
}

/** LangGraph's `uuid5` (@langchain/langgraph-checkpoint id.ts): RFC 4122 version 5, the name as UTF-8. */
function uuid5(name: string, namespace: string): string | null {
  const hex = namespace.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return null;
  const hash = crypto.createHash('sha1').update(Buffer.from(hex, 'hex')).update(name, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The ids JavaScript LangGraph gives the pull task of `due` at this
 * checkpoint: with its trigger (what it runs under), and the older form with
 * the node's name (which LangGraph still checks for saved writes).
 */
function jsTaskIds(checkpointId: string, ns: string, step: number, due: DueNode): string[] {
  const name = (last: unknown) => JSON.stringify([ns ? `${ns}|${due.node}` : due.node, String(step), due.node, '__pregel_pull', last]);
  return [uuid5(name([due.trigger]), checkpointId), uuid5(name(due.node), checkpointId)].filter((id): id is string => id !== null);
}

/** What became of one due node at this checkpoint. */
export interface DueState {
  node: string;
  /** Its task saved an output write: LangGraph will not run it again from this checkpoint. */
  finished: boolean;
  /** The task ids its writes were found under. */
  task_ids: string[];
}

/** A checkpoint's due nodes with what their saved writes say. */
export interface PendingWork {
  due: DueState[];
  /**
   * Tasks that saved output writes but could not be told apart by node
   * (a Python checkpoint with several due nodes, some of them written).
   */
  unattributed: number;
  /**
   * The nodes the finished tasks' writes trigger (a `branch:to:NODE` write, a
   * waiting edge completed, a `Send`): what runs once every due node has
   * finished. In write order, without repeats.
   */
  triggered: string[];
}

const hasOutput = (writes: readonly DecodedWrite[]) => writes.some((w) => !NOT_OUTPUT.has(w.channel));

/**
 * Match a checkpoint's pending writes to its due nodes; see the module
 * comment. `step` is the checkpoint's metadata step (its tasks run at
 * step + 1); null when the metadata has none.
 */
export function pendingWork(opts: {
  checkpointId: string;
  ns: string;
  step: number | null;
  due: readonly DueNode[];
  writes: readonly DecodedWrite[];
  channelValues: Record<string, unknown>;
}): PendingWork {
  const byTask = new Map<string, DecodedWrite[]>();
  for (const w of opts.writes) {
    if (w.task_id === NULL_TASK_ID) continue;
    const list = byTask.get(w.task_id) ?? [];
    list.push(w);
    byTask.set(w.task_id, list);
  }
  // JavaScript's writes of delta-channel input, under an id of their own: no task's.
  const inputId = uuid5('__input__', opts.checkpointId);
  if (inputId) byTask.delete(inputId);

  const claimed = new Set<string>();
  const due: DueState[] = opts.due.map((d) => {
    const ids = opts.step === null ? [] : jsTaskIds(opts.checkpointId, opts.ns, opts.step + 1, d).filter((id) => byTask.has(id));
    for (const id of ids) claimed.add(id);
    return { node: d.node, task_ids: ids, finished: ids.some((id) => hasOutput(byTask.get(id)!)) };
  });

  // Python (or anything whose ids are not computed): tell the writes apart by count, when sends cannot muddle it.
  const sendsPending = Array.isArray(opts.channelValues[TASKS_CHANNEL]) && (opts.channelValues[TASKS_CHANNEL] as unknown[]).length > 0;
  const rest = [...byTask.keys()].filter((id) => !claimed.has(id));
  const restWritten = rest.filter((id) => hasOutput(byTask.get(id)!));
  const open = due.filter((d) => d.task_ids.length === 0);
  let resolved = open.length === 0 || restWritten.length === 0;
  if (!sendsPending && open.length === 1 && rest.length === 1) {
    open[0].task_ids = rest;
    open[0].finished = hasOutput(byTask.get(rest[0])!);
    resolved = true;
  } else if (!sendsPending && restWritten.length > 0 && open.length === restWritten.length) {
    for (const d of open) d.finished = true;
    resolved = true;
  }
  const unattributed = resolved ? 0 : restWritten.length;

  // What the written tasks trigger, as applying their writes would.
  const triggered: string[] = [];
  const add = (node: string) => {
    if (!triggered.includes(node)) triggered.push(node);
  };
  const joined = new Map<string, Set<string>>();
  for (const [, writes] of byTask) {
    if (!hasOutput(writes)) continue;
    for (const w of writes) {
      if (w.channel.startsWith(BRANCH_PREFIX)) add(w.channel.slice(BRANCH_PREFIX.length));
      else if (w.channel === TASKS_CHANNEL && isPlainObject(w.value) && typeof w.value.node === 'string') add(w.value.node);
      else if (parseJoin(w.channel) && typeof w.value === 'string') {
        const got = joined.get(w.channel) ?? new Set(joinSeen(opts.channelValues[w.channel]));
        got.add(w.value);
        joined.set(w.channel, got);
      }
    }
  }
  for (const [channel, got] of joined) {
    const join = parseJoin(channel)!;
    if (join.sources.every((s) => got.has(s))) add(join.node);
  }
  return { due, unattributed, triggered };
}
