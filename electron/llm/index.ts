/** Language-model access for the runtime: one interface, an online and an offline implementation. */
export type { ChatMessage, Completion, CompletionOptions, LlmProvider } from './provider.js';
export { LlmCallError } from './provider.js';
export { OfflineProvider, OFFLINE_MODEL, offlineReply, offlineLatencyMs, approximateTokens } from './offline-provider.js';
export { providerFromEnv, redactSecrets, redactSecretsIn, DEFAULT_OPENAI_MODEL } from './provider-from-env.js';
export { estimateCostUsd } from './cost.js';
