/**
 * One LangGraph checkpoint as a Waystation checkpoint, in memory.
 *
 * A thread (with its namespace) is a task; its checkpoints, oldest first, are
 * versions 1, 2, 3, ... The plan is the graph's nodes this checkpoint has
 * seen run (done) followed by the nodes due next (pending); the status says
 * whether the thread waits for a human (an `interrupt()`), failed (an
 * `__error__` write), has nodes left to run (halted: invoking the graph on
 * the thread carries on) or is done. Everything LangGraph recorded stays
 * under `langgraph`: the checkpoint id, its parent, the metadata, every
 * channel's value, the pending writes and the interrupts, so the inspector's
 * JSON and the diff show them. See docs/LANGGRAPH.md for the whole table.
 */
import {
  CURRENT_SCHEMA_VERSION,
  Checkpoint,
  type HistoryMessage,
  type PlanStep,
  type TaskStatus,
} from '../../../shared/checkpoint/schema.js';
import { problem, type Problem } from '../../../shared/checkpoint/problem.js';
import type { CheckpointLink, CheckpointRef, CheckpointRow, StoredValue } from './checkpoint-rows.js';
import { timeOf, timeOfCheckpointId } from './checkpoint-time.js';
import { isPlainObject, isUndecodable, undecodable } from './inert-value.js';
import { reviveEnvelopes } from './json-serde.js';
import { isMessageList, toHistoryMessage } from './langchain-messages.js';
import { decodeTyped, type Decoded } from './typed-serde.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** The channel LangGraph's message-state graphs keep their conversation in. */
export const MESSAGES_CHANNEL = 'messages';
const BRANCH_PREFIX = 'branch:to:';
const INTERRUPT = '__interrupt__';
const RESUME = '__resume__';
const ERROR = '__error__';
/** Channels of LangGraph's own bookkeeping, never a node. */
const INTERNAL_NODES = new Set(['__input__', '__start__', INTERRUPT, '__end__']);

/** The thread a checkpoint belongs to, as far as the mapping needs it. */
export interface ThreadContext {
  taskId: string;
  thread_id: string;
  checkpoint_ns: string;
  /** Every checkpoint of the thread, oldest first: position + 1 is the version number. */
  links: readonly CheckpointRef[];
}

export interface MappedVersion {
  checkpoint: Checkpoint;
  messages: HistoryMessage[];
  /** What could not be decoded; the rest of the version is shown. */
  problems: Problem[];
}

/** Where a problem with a checkpoint is reported: the thread and the checkpoint id. */
export const problemFile = (thread: Pick<ThreadContext, 'thread_id' | 'checkpoint_ns'>, checkpointId: string) =>
  `${thread.thread_id}${thread.checkpoint_ns ? `[${thread.checkpoint_ns}]` : ''}@${checkpointId}`;

/** Decode a stored value; JSONB arrives parsed and only needs its envelopes revived. */
export function decodeStored(value: StoredValue): Decoded {
  if (value.type === 'jsonb') {
    try {
      return { ok: true, value: reviveEnvelopes((value as { json: unknown }).json) };
    } catch (err) {
      return { ok: false, kind: 'invalid', reason: `the JSONB value cannot be read: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  const v = value as { type: string | null; data: Uint8Array | string | null };
  return decodeTyped(v.type, v.data);
}

/** Raised when a checkpoint's own state cannot be decoded (encrypted, truncated, unknown serde): the version is listed, not shown. */
export class UndecodableCheckpoint extends ServiceError {
  readonly code = 'unreadable' as const;
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

/** The metadata of a link, decoded; an empty object when it cannot be. */
export function metadataOf(link: CheckpointLink): Record<string, unknown> {
  const d = decodeStored(link.metadata);
  return d.ok && isPlainObject(d.value) ? d.value : {};
}

/** A channel version's number: JavaScript counts with integers, Python with `"<n>.<random>"` strings. */
export function versionNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number.parseInt(v.split('.')[0], 10) || 0;
  return 0;
}

/**
 * The nodes due to run next: each `branch:to:<node>` channel that holds a
 * value at a version its node has not seen. (Once the run moves on, LangGraph
 * drops the consumed value from `channel_values`.)
 */
export function nextNodes(
  channelValues: Record<string, unknown>,
  versions: Record<string, unknown>,
  seen: Record<string, unknown>,
): string[] {
  const next: string[] = [];
  for (const channel of Object.keys(channelValues)) {
    if (!channel.startsWith(BRANCH_PREFIX)) continue;
    const node = channel.slice(BRANCH_PREFIX.length);
    const seenByNode = isPlainObject(seen[node]) ? (seen[node] as Record<string, unknown>) : {};
    if (seenByNode[channel] === undefined || versionNumber(versions[channel]) > versionNumber(seenByNode[channel])) next.push(node);
  }
  return next;
}

interface DecodedWrite {
  task_id: string;
  channel: string;
  value: unknown;
}

interface Interrupt {
  id: string | null;
  value: unknown;
  task_id: string;
}

/** The interrupts of `__interrupt__` writes: JavaScript writes `{id, value}`, Python an Interrupt dataclass of the same fields. */
function interruptsOf(writes: readonly DecodedWrite[]): Interrupt[] {
  const out: Interrupt[] = [];
  for (const w of writes) {
    if (w.channel !== INTERRUPT) continue;
    for (const item of Array.isArray(w.value) ? w.value : [w.value]) {
      const obj: Record<string, unknown> = isPlainObject(item) ? item : { value: item };
      out.push({ id: typeof obj.id === 'string' ? obj.id : null, value: 'value' in obj ? obj.value : item, task_id: w.task_id });
    }
  }
  return out;
}

const errorText = (v: unknown): string =>
  typeof v === 'string' ? v : isPlainObject(v) && typeof v.message === 'string' ? v.message : JSON.stringify(v);

const shortJson = (v: unknown, max = 300): string => {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

/** The version's source in Waystation's terms: an `update` (updateState) is a human edit; input, loop and fork are the runtime's. */
function sourceOf(meta: Record<string, unknown>) {
  const lgSource = typeof meta.source === 'string' ? meta.source : 'unknown';
  const step = typeof meta.step === 'number' ? meta.step : null;
  return {
    kind: lgSource === 'update' ? ('human-edit' as const) : ('runtime' as const),
    actor: 'langgraph',
    note: `${lgSource}${step === null ? '' : `, step ${step}`}`,
  };
}

/** Tokens and the model, from the usage LangChain records on AI messages. */
function spendOf(messages: readonly HistoryMessage[]) {
  let tokensIn = 0;
  let tokensOut = 0;
  for (const m of messages) {
    const u = m.usage;
    if (!isPlainObject(u)) continue;
    if (typeof u.input_tokens === 'number' && u.input_tokens >= 0) tokensIn += Math.trunc(u.input_tokens);
    if (typeof u.output_tokens === 'number' && u.output_tokens >= 0) tokensOut += Math.trunc(u.output_tokens);
  }
  return { tokensIn, tokensOut };
}

/**
 * Map one checkpoint row of a thread; throws UndecodableCheckpoint when the
 * checkpoint's state itself cannot be decoded.
 */
export function mapCheckpoint(thread: ThreadContext, row: CheckpointRow): MappedVersion {
  const file = problemFile(thread, row.checkpoint_id);
  const problems: Problem[] = [];
  const decoded = decodeStored(row.checkpoint);
  if (!decoded.ok)
    throw new UndecodableCheckpoint(
      problem(file, decoded.kind === 'truncated' ? 'truncated' : 'unreadable', `checkpoint ${row.checkpoint_id}: ${decoded.reason}`),
    );
  if (!isPlainObject(decoded.value)) {
    throw new UndecodableCheckpoint(problem(file, 'schema', `checkpoint ${row.checkpoint_id} is not a LangGraph checkpoint object`));
  }
  const lg = decoded.value;
  const channelValues: Record<string, unknown> = isPlainObject(lg.channel_values) ? { ...lg.channel_values } : {};
  for (const [channel, blob] of Object.entries(row.blobs ?? {})) {
    const d = decodeStored(blob);
    if (d.ok) channelValues[channel] = d.value;
    else {
      channelValues[channel] = undecodable(d.reason);
      problems.push(problem(file, d.kind === 'truncated' ? 'truncated' : 'unreadable', `channel ${channel}: ${d.reason}`));
    }
  }
  for (const [channel, value] of Object.entries(channelValues)) {
    if (isUndecodable(value) && !(row.blobs && channel in row.blobs))
      problems.push(problem(file, 'unreadable', `channel ${channel}: ${value.$undecodable}`));
  }
  const versions = isPlainObject(lg.channel_versions) ? lg.channel_versions : {};
  const seen = isPlainObject(lg.versions_seen) ? lg.versions_seen : {};
  const metaDecoded = decodeStored(row.metadata);
  const meta = metaDecoded.ok && isPlainObject(metaDecoded.value) ? metaDecoded.value : {};
  if (!metaDecoded.ok) problems.push(problem(file, 'unreadable', `metadata: ${metaDecoded.reason}`));

  const writes: DecodedWrite[] = row.writes.map((w) => {
    const d = decodeStored(w.value);
    if (!d.ok)
      problems.push(problem(file, d.kind === 'truncated' ? 'truncated' : 'unreadable', `pending write to ${w.channel}: ${d.reason}`));
    return { task_id: w.task_id, channel: w.channel, value: d.ok ? d.value : undecodable(d.reason) };
  });
  const interrupts = interruptsOf(writes);
  const resumed = writes.some((w) => w.channel === RESUME);
  const errors = writes.filter((w) => w.channel === ERROR);
  const next = nextNodes(channelValues, versions, seen);

  const rawMessages = channelValues[MESSAGES_CHANNEL];
  const messages = isMessageList(rawMessages) ? rawMessages.map(toHistoryMessage) : [];

  const waiting = interrupts.length > 0 && !resumed;
  const failed = errors.length > 0;
  const status: TaskStatus = waiting ? 'waiting_human' : failed ? 'failed' : next.length > 0 ? 'halted' : 'done';
  const ran = Object.keys(seen).filter((node) => !INTERNAL_NODES.has(node) && !next.includes(node));
  const failedNode = failed && next.length === 1 ? next[0] : null;
  const plan: PlanStep[] = [
    ...ran.map((node) => ({ id: node, name: node, status: 'done' as const, attempts: 1 })),
    ...next.map((node) => ({
      id: node,
      name: node,
      status: node === failedNode ? ('failed' as const) : ('pending' as const),
      attempts: node === failedNode ? 1 : 0,
      ...(node === failedNode ? { error: { message: errorText(errors[0].value), kind: 'langgraph-error' } } : {}),
    })),
  ];
  const version = thread.links.findIndex((l) => l.checkpoint_id === row.checkpoint_id) + 1;
  const parentVersion = row.parent_checkpoint_id ? thread.links.findIndex((l) => l.checkpoint_id === row.parent_checkpoint_id) + 1 : 0;
  const ts = typeof lg.ts === 'string' ? lg.ts : null;
  // The checkpoint's own time first: the last checkpoint of a run keeps the id (and so the time) of the one before.
  const updatedAt = timeOf(ts) ?? timeOfCheckpointId(row.checkpoint_id) ?? '1970-01-01T00:00:00.000Z';
  const first = thread.links[0];
  const createdAt = (first && timeOfCheckpointId(first.checkpoint_id)) ?? updatedAt;
  const firstUser = messages.find((m) => m.role === 'user');
  const { tokensIn, tokensOut } = spendOf(messages);
  const interruptText = interrupts.map((i) => shortJson(i.value)).join('; ');
  const phase = waiting
    ? `waiting for a human${next.length ? ` in ${next.join(', ')}` : ''}`
    : failed
      ? `failed${failedNode ? ` in ${failedNode}` : ''}`
      : next.length
        ? `next: ${next.join(', ')}`
        : 'done';
  const resumeHint = waiting
    ? `LangGraph waits for a human: ${interruptText}. Resume by invoking the graph on thread "${thread.thread_id}" with a Command whose resume is the answer.`
    : next.length
      ? `Invoking the graph on thread "${thread.thread_id}" with no new input runs ${next.join(', ')}.`
      : '';
  const { [MESSAGES_CHANNEL]: _messages, ...otherChannels } = channelValues;
  const checkpoint = Checkpoint.parse({
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: thread.taskId,
    task_name: thread.checkpoint_ns ? `${thread.thread_id} (${thread.checkpoint_ns})` : thread.thread_id,
    version: Math.max(version, 1),
    status,
    phase,
    goal: firstUser ? shortJson(firstUser.content, 200) : '',
    plan,
    current_step: ran.length,
    total_steps: plan.length,
    artifacts: [],
    side_effects: [],
    resume_hint: resumeHint,
    recovery: { mode: 'manual', pending_approval: null, decisions: [], auto_attempts: 0 },
    errors: errors.map((e) => ({ at: updatedAt, step_id: failedNode, what: errorText(e.value) })),
    run: {
      created_at: createdAt,
      updated_at: updatedAt,
      tokens_in: tokensIn,
      tokens_out: tokensOut,
      cost_usd: 0,
      elapsed_ms: 0,
      llm_calls: [],
    },
    source: sourceOf(meta),
    history: { count: messages.length, head: null },
    agent: null,
    langgraph: {
      thread_id: thread.thread_id,
      checkpoint_ns: thread.checkpoint_ns,
      checkpoint_id: row.checkpoint_id,
      parent_checkpoint_id: row.parent_checkpoint_id,
      parent_version: parentVersion || null,
      ts,
      metadata: meta,
      next,
      interrupts: interrupts.map((i) => ({ id: i.id, value: i.value, task_id: i.task_id })),
      ...(waiting ? { waiting_for_human: interrupts.map((i) => i.value) } : {}),
      pending_writes: writes,
      messages: messages.length,
      // The conversation is the Messages tab; a `messages` channel that holds something else stays a channel.
      channels: isMessageList(rawMessages) || (Array.isArray(rawMessages) && rawMessages.length === 0) ? otherChannels : channelValues,
      channel_versions: versions,
      versions_seen: seen,
    },
  });
  return { checkpoint, messages, problems };
}
