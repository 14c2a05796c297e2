/**
 * An OpenAI-compatible provider over the official `openai` client.
 *
 * The client's own retries are turned off: this provider retries 429s, 5xx,
 * dropped connections, timeouts and malformed replies itself, with
 * exponential backoff, so that every retry and its reason can be recorded in
 * the checkpoint. The API key is handed to the client and nowhere else.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatMessage, Completion, CompletionOptions, LlmProvider } from './provider.js';
import { LlmCallError } from './provider.js';
import { messageOf } from '../../shared/api/error-codes.js';

export interface OpenAiProviderConfig {
  apiKey: string;
  baseURL?: string;
  model: string;
  /** Per-attempt timeout. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff; doubles on each retry. */
  backoffMs: number;
  /** Upper bound on any single wait, including a server's Retry-After. */
  maxBackoffMs: number;
}

/** Why an attempt failed, and whether trying again could help. */
interface AttemptFailure {
  retryable: boolean;
  reason: string;
  retryAfterMs: number | null;
  message: string;
}

function retryAfter(headers: Headers | undefined): number | null {
  if (!headers) return null;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const s = Number(headers.get('retry-after'));
  return Number.isFinite(s) && s > 0 ? s * 1000 : null;
}

function classify(err: unknown): AttemptFailure {
  if (err instanceof APIConnectionError) {
    const timeout = err.constructor.name === 'APIConnectionTimeoutError' || /timed? ?out/i.test(err.message);
    return { retryable: true, reason: timeout ? 'timeout' : 'connection error', retryAfterMs: null, message: err.message };
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    if (status === 429) return { retryable: true, reason: '429 rate limited', retryAfterMs: retryAfter(err.headers), message: err.message };
    if (status >= 500)
      return { retryable: true, reason: `${status} server error`, retryAfterMs: retryAfter(err.headers), message: err.message };
    return { retryable: false, reason: `${status} refused`, retryAfterMs: null, message: err.message };
  }
  if (err instanceof MalformedReplyError || err instanceof SyntaxError) {
    return { retryable: true, reason: 'malformed reply', retryAfterMs: null, message: err.message };
  }
  return { retryable: false, reason: 'error', retryAfterMs: null, message: messageOf(err) };
}

class MalformedReplyError extends Error {}

function nonNegativeInt(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/** The provider for any server that speaks the OpenAI chat-completions API. */
export class OpenAiProvider implements LlmProvider {
  readonly kind = 'openai-compatible';
  readonly model: string;
  private readonly client: OpenAI;

  constructor(private readonly config: OpenAiProviderConfig) {
    this.model = config.model;
    this.client = new OpenAI({
      apiKey: config.apiKey,
      baseURL: config.baseURL,
      timeout: config.timeoutMs,
      maxRetries: 0,
    });
  }

  async complete(messages: ChatMessage[], opts: CompletionOptions = {}): Promise<Completion> {
    const model = opts.model ?? this.model;
    const started = Date.now();
    const reasons: string[] = [];
    for (let attempt = 0; ; attempt++) {
      try {
        const reply = await this.client.chat.completions.create(
          {
            model,
            messages,
            ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
            ...(opts.maxTokens !== undefined ? { max_tokens: opts.maxTokens } : {}),
          },
          { signal: opts.signal },
        );
        // A gateway can answer 200 with HTML or a half-formed object; that is a failed attempt, not a reply.
        const r = reply as unknown as Record<string, unknown> | string;
        if (typeof r !== 'object' || r === null || !Array.isArray(r.choices) || r.choices.length === 0) {
          throw new MalformedReplyError(`the reply from ${this.config.baseURL ?? 'the API'} has no choices`);
        }
        const content = (r.choices[0] as { message?: { content?: unknown } })?.message?.content;
        if (typeof content !== 'string') throw new MalformedReplyError('the reply has no message content');
        const usage = (r.usage ?? {}) as Record<string, unknown>;
        return {
          text: content,
          model: typeof r.model === 'string' && r.model ? r.model : model,
          tokens_in: nonNegativeInt(usage.prompt_tokens) ?? 0,
          tokens_out: nonNegativeInt(usage.completion_tokens) ?? 0,
          latency_ms: Date.now() - started,
          retries: attempt,
          retry_reasons: reasons,
        };
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        const failure = classify(err);
        if (!failure.retryable || attempt >= this.config.maxRetries) {
          const tail = failure.retryable ? ` (gave up after ${attempt + 1} attempts)` : '';
          throw new LlmCallError(`${failure.reason}: ${failure.message}${tail}`, model, attempt, reasons, Date.now() - started);
        }
        const wait = Math.min(this.config.maxBackoffMs, failure.retryAfterMs ?? this.config.backoffMs * 2 ** attempt);
        reasons.push(`${failure.reason} (attempt ${attempt + 1}, waited ${Math.round(wait)} ms)`);
        await sleep(wait, undefined, { signal: opts.signal });
      }
    }
  }
}
