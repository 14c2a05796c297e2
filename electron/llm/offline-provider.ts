/**
 * A deterministic stand-in for a language model, used when no API key is set.
 *
 * The same messages always give the same reply, so a task resumed after a
 * crash produces exactly what an uninterrupted run would have, and the demos
 * run anywhere. A request that carries a document (the Markdown summariser
 * sends the file between `<document name="...">` and `</document>`) gets a
 * real extractive summary of it: its title and key sentences, chosen by the
 * rule in extractive-summary.ts. Anything else gets a short reply built from
 * the prompt, which is all a stand-in can honestly do.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { carriedDocument } from './document-block.js';
import { formatSummary, summarizeMarkdown } from './extractive-summary.js';
import type { ChatMessage, Completion, CompletionOptions, LlmProvider } from './provider.js';

export const OFFLINE_MODEL = 'waystation-offline';
const DEFAULT_LATENCY_MS = 150;

/** Rough token count: about four characters a token, as for English text with GPT tokenizers. */
export function approximateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}

/** Latency from `WAYSTATION_OFFLINE_LATENCY_MS`, or the default when unset or not a number. */
export function offlineLatencyMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.WAYSTATION_OFFLINE_LATENCY_MS;
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_LATENCY_MS;
}

const OPENERS = ['In short', 'Put simply', 'To sum up', 'Overall', 'In brief'];
const ANGLES = [
  'the main risk is unclear inputs, so validate them first',
  'edge cases deserve explicit handling',
  'the smallest working version comes first, then tests',
  'each part should be checkable on its own',
  'naming the failure modes early keeps later steps honest',
];

function firstSentence(text: string): string {
  const flat = text.replace(/^#.*$/gm, '').replace(/\s+/g, ' ').trim();
  const m = flat.match(/^(.{1,200}?[.!?。！？])(\s|$)/);
  return (m ? m[1] : flat.slice(0, 160)).trim();
}

/** The deterministic reply to a conversation. Exported for tests that need the expected text. */
export function offlineReply(messages: ChatMessage[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const doc = carriedDocument(lastUser);
  if (doc) return formatSummary(summarizeMarkdown(doc.text, doc.name ?? 'Untitled'));
  return promptReply(messages, lastUser);
}

/** The reply to a conversation without a document: its request, the shape of any text after it, and a seeded remark. */
function promptReply(messages: ChatMessage[], lastUser: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(messages.map((m) => [m.role, m.content])))
    .digest();
  const [head, ...rest] = lastUser.split('\n');
  const body = rest.join('\n');
  const headings = [...body.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => m[1].trim()).slice(0, 5);
  const lines = [`${OPENERS[digest[0] % OPENERS.length]}: ${head.trim().slice(0, 120)}`];
  if (headings.length > 0) lines.push(`Sections: ${headings.join('; ')}.`);
  const opening = firstSentence(body);
  if (opening) lines.push(`It opens with: ${opening}`);
  const words = body.split(/\s+/).filter(Boolean).length;
  if (words > 0) lines.push(`Length: ${words} words.`);
  lines.push(`Note: ${ANGLES[digest[1] % ANGLES.length]} (ref ${digest.subarray(0, 4).toString('hex')}).`);
  return lines.join('\n');
}

/** The offline provider: deterministic replies, realistic token counts, configurable latency. */
export class OfflineProvider implements LlmProvider {
  readonly kind = 'offline';
  readonly model = OFFLINE_MODEL;
  constructor(private readonly latencyMs: number = offlineLatencyMs()) {}

  async complete(messages: ChatMessage[], opts: CompletionOptions = {}): Promise<Completion> {
    const started = Date.now();
    if (this.latencyMs > 0) await sleep(this.latencyMs, undefined, { signal: opts.signal });
    const text = offlineReply(messages);
    return {
      text,
      model: this.model,
      tokens_in: messages.reduce((n, m) => n + approximateTokens(m.content) + 4, 0),
      tokens_out: approximateTokens(text),
      latency_ms: Date.now() - started,
      retries: 0,
      retry_reasons: [],
    };
  }
}
