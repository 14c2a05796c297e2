/**
 * Choose the language model from the environment.
 *
 * `OPENAI_API_KEY` set: the OpenAI-compatible provider (`OPENAI_BASE_URL`,
 * `OPENAI_MODEL`, plus `WAYSTATION_LLM_TIMEOUT_MS`, `WAYSTATION_LLM_MAX_RETRIES`,
 * `WAYSTATION_LLM_BACKOFF_MS`). Not set: the deterministic offline model, so
 * demos and tests run without a network.
 */
import type { LlmProvider } from './provider.js';
import { OfflineProvider, offlineLatencyMs } from './offline-provider.js';

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

function intFromEnv(raw: string | undefined, fallback: number): number {
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
}

/** The provider the environment asks for. The OpenAI client is loaded only when a key is set. */
export async function providerFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<LlmProvider> {
  const apiKey = env.OPENAI_API_KEY?.trim();
  if (!apiKey) return new OfflineProvider(offlineLatencyMs(env));
  // Loaded lazily: the offline path, which every test worker takes, skips the SDK's start-up cost.
  const { OpenAiProvider } = await import('./openai-provider.js');
  return new OpenAiProvider({
    apiKey,
    baseURL: env.OPENAI_BASE_URL?.trim() || undefined,
    model: env.OPENAI_MODEL?.trim() || DEFAULT_OPENAI_MODEL,
    timeoutMs: intFromEnv(env.WAYSTATION_LLM_TIMEOUT_MS, 60_000),
    maxRetries: intFromEnv(env.WAYSTATION_LLM_MAX_RETRIES, 3),
    backoffMs: intFromEnv(env.WAYSTATION_LLM_BACKOFF_MS, 500),
    maxBackoffMs: 30_000,
  });
}

/**
 * Remove secret values from text bound for a checkpoint, an event or a log.
 *
 * Error messages from servers and SDKs can echo request details; scrubbing
 * every string the runtime records keeps the key out even when they do.
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let out = text;
  for (const name of ['OPENAI_API_KEY']) {
    const secret = env[name]?.trim();
    if (secret && secret.length >= 6) out = out.split(secret).join('[redacted]');
  }
  return out.replace(/\bBearer\s+[A-Za-z0-9._-]{8,}/g, 'Bearer [redacted]');
}
