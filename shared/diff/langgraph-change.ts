/**
 * What changed between two versions of a LangGraph thread, in words: the
 * messages added or dropped, the channels whose values changed, the nodes
 * due next, and the interrupts, read from the `langgraph` part of the two
 * checkpoints (see electron/sources/langgraph/thread-mapping.ts).
 */
import type { Checkpoint, HistoryMessage } from '../checkpoint/schema.js';
import { canonicalJson } from '../checkpoint/canonical-json.js';

/** The LangGraph fields of a mapped checkpoint, as far as a comparison reads them. */
export interface LangGraphPart {
  checkpoint_id: string;
  next: string[];
  channels: Record<string, unknown>;
  waiting_for_human?: unknown[];
}

export interface LangGraphChange {
  from_checkpoint: string;
  to_checkpoint: string;
  /** Messages in `to` after those the two share from the start. */
  messages_added: HistoryMessage[];
  /** Messages of `from` that `to` no longer has at their place (a fork or an edit rewrote the list). */
  messages_removed: HistoryMessage[];
  channels_added: string[];
  channels_removed: string[];
  channels_changed: string[];
  next: { from: string[]; to: string[] } | null;
  interrupt: { from: unknown[]; to: unknown[] } | null;
}

/** The LangGraph part of a checkpoint, or null for a native one. */
export function langGraphPartOf(cp: Checkpoint): LangGraphPart | null {
  const lg = (cp as { langgraph?: unknown }).langgraph;
  if (typeof lg !== 'object' || lg === null) return null;
  const part = lg as Partial<LangGraphPart>;
  return {
    checkpoint_id: String(part.checkpoint_id ?? ''),
    next: Array.isArray(part.next) ? part.next.map(String) : [],
    channels: typeof part.channels === 'object' && part.channels !== null ? part.channels : {},
    ...(Array.isArray(part.waiting_for_human) ? { waiting_for_human: part.waiting_for_human } : {}),
  };
}

const sameMessage = (a: HistoryMessage, b: HistoryMessage) =>
  (a.id !== undefined && a.id === b.id) || (a.role === b.role && a.content === b.content);

/** Compare two versions of a thread, with the messages of each. */
export function summarizeLangGraphChange(
  from: LangGraphPart,
  to: LangGraphPart,
  fromMessages: readonly HistoryMessage[],
  toMessages: readonly HistoryMessage[],
): LangGraphChange {
  let shared = 0;
  while (shared < fromMessages.length && shared < toMessages.length && sameMessage(fromMessages[shared], toMessages[shared])) shared++;
  const channels = new Set([...Object.keys(from.channels), ...Object.keys(to.channels)]);
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const name of [...channels].sort()) {
    const inFrom = name in from.channels;
    const inTo = name in to.channels;
    if (!inFrom) added.push(name);
    else if (!inTo) removed.push(name);
    else if (canonicalJson(from.channels[name]) !== canonicalJson(to.channels[name])) changed.push(name);
  }
  const sameNext = from.next.join('\0') === to.next.join('\0');
  const fromWait = from.waiting_for_human ?? [];
  const toWait = to.waiting_for_human ?? [];
  return {
    from_checkpoint: from.checkpoint_id,
    to_checkpoint: to.checkpoint_id,
    messages_added: toMessages.slice(shared),
    messages_removed: fromMessages.slice(shared),
    channels_added: added,
    channels_removed: removed,
    channels_changed: changed,
    next: sameNext ? null : { from: from.next, to: to.next },
    interrupt: canonicalJson(fromWait) === canonicalJson(toWait) ? null : { from: fromWait, to: toWait },
  };
}
