/**
 * Deterministic pseudo-random numbers and payloads, so every run and every
 * side of a comparison stores exactly the same bytes, and a failing torture
 * or crash test can be replayed from its seed.
 */

/**
 * A seeded generator of floats in [0, 1) (mulberry32).
 *
 * Not cryptographic: it only has to be fast and give the same sequence for the
 * same seed on every machine.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'the',
  'agent',
  'reads',
  'file',
  'plan',
  'step',
  'result',
  'tool',
  'call',
  'returns',
  'data',
  'checks',
  'schema',
  'retry',
  'writes',
  'summary',
  'invoice',
  'customer',
  'order',
  'report',
  'draft',
  'review',
  'and',
  'then',
  'with',
  'from',
  'into',
  'table',
  'rows',
  'missing',
  'value',
  'fixed',
  'verified',
  'output',
  'next',
];

/**
 * Exactly `length` characters of word-like ASCII text drawn from `rng`.
 *
 * Only lowercase letters and spaces, so the JSON encoding of the text is the
 * text itself plus two quotes and its byte length equals its length.
 */
export function randomText(rng: () => number, length: number): string {
  if (length <= 0) return '';
  let out = '';
  while (out.length < length) {
    out += WORDS[Math.floor(rng() * WORDS.length)];
    out += ' ';
  }
  return out.slice(0, length);
}
