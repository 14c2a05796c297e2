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

/**
 * `redactSecrets` applied to every string inside a JSON-like value (keys
 * included), for structured data bound for an event or a log.
 *
 * Returns a copy; numbers, booleans and null pass through, a value with
 * `toJSON` (a Date) is taken as JSON would take it, and anything else that is
 * not plain data (a class instance) is recorded as its string form, scrubbed.
 */
export function redactSecretsIn(value: unknown, env: NodeJS.ProcessEnv = process.env, ancestors = new Set<object>()): unknown {
  if (typeof value === 'string') return redactSecrets(value, env);
  if (value === null || typeof value !== 'object')
    return typeof value === 'bigint' || typeof value === 'symbol' ? redactSecrets(String(value), env) : value;
  if (ancestors.has(value)) return '[circular]';
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function') return redactSecretsIn(toJson.call(value), env, ancestors);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return redactSecrets(String(value), env);
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => redactSecretsIn(v, env, ancestors));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactSecrets(k, env), redactSecretsIn(v, env, ancestors)]));
  } finally {
    ancestors.delete(value);
  }
}
