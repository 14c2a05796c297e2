/**
 * One LangGraph checkpoint as a Waystation checkpoint, in memory.
 *
 * A thread (with its namespace) is a task; its checkpoints, oldest first, are
 * versions 1, 2, 3, ... The plan is the graph's nodes this checkpoint has
 * seen run (done) followed by the nodes due next (pending). The status says
 * whether the thread waits for a human (an `interrupt()`), failed (an
 * `__error__` write), is done, or has work due (running: an earlier version
 * was running at that point; on the newest, nothing is known to drive it, so
 * it shows as interrupted). The newest version's pending writes count as
 * LangGraph counts them on resume (due-nodes.ts): a node whose writes are
 * saved is done, and invoking runs what they trigger. Everything LangGraph
 * recorded stays under `langgraph`: the checkpoint id, its parent, the
 * metadata, every channel's value, the pending writes and the interrupts, so
 * the inspector's JSON and the diff show them. See docs/LANGGRAPH.md for the
 * whole table.
 */
import { CURRENT_SCHEMA_VERSION, Checkpoint, type HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { problem, type Problem } from '../../../shared/checkpoint/problem.js';
import type { CheckpointLink, CheckpointRef, CheckpointRow, StoredValue } from './checkpoint-rows.js';
import { timeOf, timeOfCheckpointId } from './checkpoint-time.js';
import { isPlainObject, isUndecodable, undecodable } from './inert-value.js';
import { reviveEnvelopes } from './json-serde.js';
import { isMessageList, toHistoryMessage } from './langchain-messages.js';
import { decodeTyped, type Decoded } from './typed-serde.js';
import { dueNodes, pendingWork, versionNumber, type DecodedWrite } from './due-nodes.js';
import { progressOf, shortJson, type Interrupt } from './thread-progress.js';
import { ServiceError } from '../../../shared/api/error-codes.js';

/** The channel LangGraph's message-state graphs keep their conversation in. */
export const MESSAGES_CHANNEL = 'messages';
const INTERRUPT = '__interrupt__';

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

// Kept here for the modules that import it from the mapping.
export { versionNumber };

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
  const work = pendingWork({
    checkpointId: row.checkpoint_id,
    ns: thread.checkpoint_ns,
    step: typeof meta.step === 'number' ? meta.step : null,
    due: dueNodes(channelValues, versions, seen),
    writes,
    channelValues,
  });
  const latest = thread.links.length > 0 && thread.links[thread.links.length - 1].checkpoint_id === row.checkpoint_id;
  const progress = progressOf({ threadId: thread.thread_id, latest, seen, work, writes, interrupts });

  const rawMessages = channelValues[MESSAGES_CHANNEL];
  const messages = isMessageList(rawMessages) ? rawMessages.map(toHistoryMessage) : [];

  const version = thread.links.findIndex((l) => l.checkpoint_id === row.checkpoint_id) + 1;
  const parentVersion = row.parent_checkpoint_id ? thread.links.findIndex((l) => l.checkpoint_id === row.parent_checkpoint_id) + 1 : 0;
  const ts = typeof lg.ts === 'string' ? lg.ts : null;
  // The checkpoint's own time first: the last checkpoint of a run keeps the id (and so the time) of the one before.
  const updatedAt = timeOf(ts) ?? timeOfCheckpointId(row.checkpoint_id) ?? '1970-01-01T00:00:00.000Z';
  const first = thread.links[0];
  const createdAt = (first && timeOfCheckpointId(first.checkpoint_id)) ?? updatedAt;
  const firstUser = messages.find((m) => m.role === 'user');
  const { tokensIn, tokensOut } = spendOf(messages);
  const { [MESSAGES_CHANNEL]: _messages, ...otherChannels } = channelValues;
  const checkpoint = Checkpoint.parse({
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: thread.taskId,
    task_name: thread.checkpoint_ns ? `${thread.thread_id} (${thread.checkpoint_ns})` : thread.thread_id,
    version: Math.max(version, 1),
    status: progress.status,
    phase: progress.phase,
    goal: firstUser ? shortJson(firstUser.content, 200) : '',
    plan: progress.plan,
    current_step: progress.current_step,
    total_steps: progress.plan.length,
    artifacts: [],
    side_effects: [],
    resume_hint: progress.resume_hint,
    recovery: { mode: 'manual', pending_approval: null, decisions: [], auto_attempts: 0 },
    errors: progress.errors.map((e) => ({ at: updatedAt, ...e })),
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
      next: progress.next,
      ...(progress.finished.length ? { finished: progress.finished } : {}),
      interrupts: interrupts.map((i) => ({ id: i.id, value: i.value, task_id: i.task_id })),
      ...(progress.waiting ? { waiting_for_human: interrupts.map((i) => i.value) } : {}),
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
