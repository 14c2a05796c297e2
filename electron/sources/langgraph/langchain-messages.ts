/**
 * LangChain messages, as decoded from a checkpoint, rendered as the
 * messages of a conversation: a role, the text, and the tool calls and tool
 * results spelled out, instead of constructor envelopes.
 *
 * A message may come as a JavaScript constructor envelope
 * (`langchain_core.messages.AIMessage` with its kwargs), a Python Pydantic
 * dump (`langchain_core.messages.ai.AIMessage`, with `type: "ai"`), or a
 * plain dict (`{"role": "user", "content": ...}` or `{"type": "human", ...}`):
 * all three read the same.
 */
import type { HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { isPlainObject, shortTypeName, typeOf } from './inert-value.js';

const ROLE_OF_CLASS: Record<string, string> = {
  HumanMessage: 'user',
  AIMessage: 'assistant',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  FunctionMessage: 'function',
  RemoveMessage: 'remove',
};

const ROLE_OF_TYPE: Record<string, string> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  tool: 'tool',
  function: 'function',
  remove: 'remove',
};

/** The message class a value is, by label or by its `type` field; null when it is no message. */
export function messageClassOf(value: unknown): string | null {
  const label = typeOf(value);
  if (label) {
    const name = shortTypeName(label).replace(/Chunk$/, '');
    return name in ROLE_OF_CLASS || name === 'ChatMessage' ? name : null;
  }
  if (!isPlainObject(value) || !('content' in value)) return null;
  if (typeof value.role === 'string') return 'ChatMessage';
  const t = typeof value.type === 'string' ? value.type.replace(/Chunk$/i, '').toLowerCase() : '';
  const byType = Object.entries(ROLE_OF_CLASS).find(([, role]) => ROLE_OF_TYPE[t] === role);
  return byType ? byType[0] : null;
}

/** Whether a channel value is a list of messages (the `messages` channel, or one like it). */
export function isMessageList(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length > 0 && value.every((m) => messageClassOf(m) !== null);
}

/** Text of a message's content: a string, or the text parts of a list, with other parts named. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((part) => {
      if (typeof part === 'string') return part;
      if (isPlainObject(part) && typeof part.text === 'string') return part.text;
      return isPlainObject(part) && typeof part.type === 'string' ? `[${part.type}]` : JSON.stringify(part);
    })
    .join('\n');
}

interface ToolCall {
  id?: string;
  name: string;
  args: unknown;
}

function toolCallsOf(msg: Record<string, unknown>): ToolCall[] {
  const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
  return calls.filter(isPlainObject).map((c) => ({
    ...(typeof c.id === 'string' ? { id: c.id } : {}),
    name: typeof c.name === 'string' ? c.name : '(unnamed tool)',
    args: c.args ?? {},
  }));
}

/** One message as the Messages tab shows it; the LangChain fields worth keeping ride along. */
export function toHistoryMessage(value: unknown): HistoryMessage {
  const cls = messageClassOf(value);
  if (!cls || !isPlainObject(value)) return { role: 'unknown', content: typeof value === 'string' ? value : JSON.stringify(value) };
  const role = cls === 'ChatMessage' ? String(value.role ?? 'unknown') : ROLE_OF_CLASS[cls];
  const text = contentText(value.content);
  const calls = toolCallsOf(value);
  const lines = [text];
  for (const c of calls) lines.push(`→ calls ${c.name}(${JSON.stringify(c.args)})${c.id ? ` [${c.id}]` : ''}`);
  let content = lines.filter((l, i) => i > 0 || l.length > 0).join('\n');
  if (cls === 'ToolMessage') {
    const who = typeof value.name === 'string' ? value.name : 'tool';
    const call = typeof value.tool_call_id === 'string' ? ` [${value.tool_call_id}]` : '';
    content = `${who} returned${call}:\n${text}`;
  }
  if (cls === 'RemoveMessage') content = `removes message ${String(value.id ?? '')}`;
  return {
    role,
    content,
    langchain_class: cls,
    ...(typeof value.id === 'string' ? { id: value.id } : {}),
    ...(typeof value.name === 'string' ? { name: value.name } : {}),
    ...(calls.length ? { tool_calls: calls } : {}),
    ...(typeof value.tool_call_id === 'string' ? { tool_call_id: value.tool_call_id } : {}),
    ...(isPlainObject(value.usage_metadata) ? { usage: value.usage_metadata } : {}),
  };
}
