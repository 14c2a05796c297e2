/**
 * The synthetic agent every store benchmark replays: one message of exactly
 * 1 KiB appended to the history and one step result per step, generated from
 * a seed so that every run, and every store in a comparison, receives the
 * same bytes.
 *
 * Each item is derived from (seed, index) alone, so a benchmark can build the
 * state at step 9,900 without generating the 9,899 steps before it.
 */
import type { HistoryMessage } from '../../shared/checkpoint/schema.js';
import { randomText, seededRandom } from './seeded-random.js';

/** Bytes of one message as canonical JSON (`{"role":...,"content":...}`). */
export const MESSAGE_BYTES = 1024;

/** The result a step stores: small and structured, like a tool's parsed output. */
export interface StepResult {
  step: number;
  ok: boolean;
  summary: string;
  tokens_in: number;
  tokens_out: number;
}

const ROLES = ['assistant', 'tool'] as const;

/**
 * Message `index` of the conversation: 0 is the user's request, then one per step.
 *
 * Its JSON encoding is exactly MESSAGE_BYTES bytes (ASCII, nothing to escape),
 * which lets a benchmark compute the size of any prefix of the history exactly.
 */
export function workloadMessage(seed: number, index: number): HistoryMessage {
  const role = index === 0 ? 'user' : ROLES[index % ROLES.length];
  const envelope = JSON.stringify({ role, content: '' }).length;
  return { role, content: randomText(itemRandom(seed, 'message', index), MESSAGE_BYTES - envelope) };
}

/** The result of step `step` (1-based). */
export function workloadResult(seed: number, step: number): StepResult {
  const rng = itemRandom(seed, 'result', step);
  return {
    step,
    ok: true,
    summary: randomText(rng, 160),
    tokens_in: 200 + Math.floor(rng() * 800),
    tokens_out: 50 + Math.floor(rng() * 300),
  };
}

/** The plan id of step `step` (1-based); fixed width so ids sort like steps. */
export function workloadStepId(step: number): string {
  return `step-${String(step).padStart(6, '0')}`;
}

/** A deterministic timestamp for step `step`: one second apart from a fixed epoch. */
export function workloadTimestamp(step: number): string {
  return new Date(Date.UTC(2025, 0, 1) + step * 1000).toISOString();
}

// One independent stream per item, so items can be generated in any order.
function itemRandom(seed: number, kind: 'message' | 'result', index: number): () => number {
  const salt = kind === 'message' ? 0x9e3779b1 : 0x85ebca6b;
  return seededRandom(Math.imul(seed ^ salt, 0x27d4eb2d) ^ Math.imul(index + 1, 0x165667b1));
}
