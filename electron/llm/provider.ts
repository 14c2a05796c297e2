/**
 * The one interface every language model sits behind.
 *
 * The runtime records what each call cost (tokens, latency, retries) in the
 * checkpoint, so a provider reports those facts instead of hiding them.
 */
import { ServiceError } from '../../shared/api/error-codes.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionOptions {
  /** Overrides the provider's default model for this call. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface Completion {
  text: string;
  model: string;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
  /** Attempts beyond the first. */
  retries: number;
  /** Why each retry happened, in order: "429 rate limited", "500 server error", ... */
  retry_reasons: string[];
}

export interface LlmProvider {
  /** A label for the checkpoint (`offline`, `openai-compatible`); never a URL with credentials. */
  readonly kind: string;
  readonly model: string;
  complete(messages: ChatMessage[], opts?: CompletionOptions): Promise<Completion>;
}

/**
 * A call that failed for good, after its retries.
 *
 * Carries the retries so the failed attempt is still recorded in the checkpoint.
 */
export class LlmCallError extends ServiceError {
  readonly code = 'llm';
  constructor(
    message: string,
    readonly model: string,
    readonly retries: number,
    readonly retry_reasons: string[],
    readonly latency_ms: number,
  ) {
    super(message);
  }
}
