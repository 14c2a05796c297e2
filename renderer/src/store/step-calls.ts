/**
 * The model calls of one step, as a person reviewing it wants them: what was
 * asked, what came back, tokens, latency, retries and errors. The run's call
 * log (`run.llm_calls`) has the figures; the recorded messages have the text,
 * each tagged with its step and call key. A failed call has figures and no
 * reply; a reply reused from the checkpoint has text and no new call.
 */
import type { Checkpoint, HistoryMessage } from '../../../shared/checkpoint/schema.js';

export interface StepModelCall {
  /** 1-based, in the order the calls were made. */
  index: number;
  model: string | null;
  prompt: string | null;
  response: string | null;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number | null;
  retries: number;
  retry_reasons: string[];
  cost_usd: number | null;
  error: string | null;
}

type Tagged = HistoryMessage & { step_id?: unknown; call_key?: unknown; model?: unknown };

/** The step's model calls: the call log's entries for it, each with the prompt and reply the history recorded for it. */
export function stepModelCalls(cp: Checkpoint, messages: readonly HistoryMessage[], stepId: string): StepModelCall[] {
  const log = (cp.run.llm_calls ?? []).filter((c) => c.step_id === stepId);
  // Prompt and reply pairs, in order, by call key.
  const pairs: { prompt: string | null; response: string; model: string | null }[] = [];
  let prompt: string | null = null;
  for (const m of messages as Tagged[]) {
    if (m.step_id !== stepId) continue;
    if (m.role === 'user') prompt = m.content;
    else if (m.role === 'assistant') {
      pairs.push({ prompt, response: m.content, model: typeof m.model === 'string' ? m.model : null });
      prompt = null;
    }
  }
  const calls: StepModelCall[] = [];
  let reply = 0;
  for (const c of log) {
    const extra = c as typeof c & { error?: unknown; cost_usd?: unknown };
    const error = typeof extra.error === 'string' ? extra.error : null;
    // A failed call recorded no reply: the next reply belongs to the next call that succeeded.
    const pair = error ? null : (pairs[reply++] ?? null);
    calls.push({
      index: calls.length + 1,
      model: c.model ?? pair?.model ?? null,
      prompt: pair?.prompt ?? null,
      response: pair?.response ?? null,
      tokens_in: c.tokens_in,
      tokens_out: c.tokens_out,
      latency_ms: c.latency_ms,
      retries: c.retries ?? 0,
      retry_reasons: c.retry_reasons ?? [],
      cost_usd: typeof extra.cost_usd === 'number' ? extra.cost_usd : null,
      error,
    });
  }
  // Replies the history holds beyond the log (reused from the checkpoint, or written by another tool) still show.
  for (const pair of pairs.slice(reply)) {
    calls.push({
      index: calls.length + 1,
      model: pair.model,
      prompt: pair.prompt,
      response: pair.response,
      tokens_in: 0,
      tokens_out: 0,
      latency_ms: null,
      retries: 0,
      retry_reasons: [],
      cost_usd: null,
      error: null,
    });
  }
  return calls;
}
