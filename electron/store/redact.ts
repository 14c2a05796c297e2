/**
 * Secrets never reach a checkpoint: every string a store writes (object keys
 * and values, in the checkpoint, step results, messages, events, and what a
 * person typed: reasons, authors, edited values) is scrubbed of the API keys
 * in the environment, in the store's write path, so no writer can bypass it.
 *
 * The runtime scrubs what it records too; this is the floor under it, for a
 * key that arrives by a way no one thought of (a model's reply echoing it,
 * the key itself as an object key, a person typing it).
 */

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';
/** Environment variables whose values are secrets. */
const SECRET_NAMES = /(^|_)(API_KEY|TOKEN|SECRET|PASSWORD)$/;
/** Shorter values are not treated as secrets: they would match ordinary text. */
const MIN_SECRET_LENGTH = 8;

// Whether a variable's name marks a secret, by name: the names rarely change, and testing each again on every save
// cost more than the save's own scrubbing.
const secretName = new Map<string, boolean>();
// The last answer, returned again while the secret values are the same (no sort, no new array).
let lastValues = '';
let lastSecrets: readonly string[] = [];

/**
 * The secret values of an environment: OPENAI_API_KEY and every *_API_KEY, *_TOKEN, *_SECRET, *_PASSWORD.
 *
 * Read afresh on every call (a key set a moment ago is scrubbed from the next save), but only the names are
 * enumerated, and only a secret's value is read: `process.env` makes a native call per value it hands out,
 * and enumerating its entries on every save and event was a tenth of a runtime save.
 */
export function secretsOf(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  let values = '';
  const found: string[] = [];
  for (const name of Object.keys(env)) {
    let isSecret = secretName.get(name);
    if (isSecret === undefined) {
      isSecret = SECRET_NAMES.test(name);
      if (secretName.size > 10_000) secretName.clear();
      secretName.set(name, isSecret);
    }
    if (!isSecret) continue;
    const v = env[name]?.trim();
    if (v && v.length >= MIN_SECRET_LENGTH) {
      found.push(v);
      values += v + '\u0000';
    }
  }
  if (values === lastValues) return lastSecrets;
  // Longest first, so a secret that contains another is replaced whole.
  const secrets = [...new Set(found)].sort((a, b) => b.length - a.length);
  lastValues = values;
  lastSecrets = secrets;
  return secrets;
}

/** A string with every secret replaced. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

// Objects already found free of the secrets: checkpoints are frozen and reuse what did not change, so a save
// walks only what is new. Reset when the secrets change.
let cleanFor = '';
let clean = new WeakSet<object>();

/**
 * A JSON value with every secret replaced in its strings and keys: the value
 * itself when it holds none, otherwise a copy of just the parts that do.
 */
export function redactJson<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const signature = secrets.join('\u0000');
  if (signature !== cleanFor) {
    cleanFor = signature;
    clean = new WeakSet();
  }
  return walk(value, secrets) as T;
}

function walk(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (clean.has(value)) return value;
  let changed = false;
  let out: unknown;
  if (Array.isArray(value)) {
    const arr = value.map((v) => {
      const w = walk(v, secrets);
      if (w !== v) changed = true;
      return w;
    });
    out = changed ? arr : value;
  } else {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => {
      const rk = redactText(k, secrets);
      const w = walk(v, secrets);
      if (rk !== k || w !== v) changed = true;
      return [rk, w] as const;
    });
    out = changed ? Object.fromEntries(entries) : value;
  }
  if (!changed) clean.add(value);
  return out;
}

/** Whether a text holds a secret (a task id that does cannot be used: it names a folder). */
export function holdsSecret(text: string, secrets: readonly string[]): boolean {
  return secrets.some((s) => text.includes(s));
}

/**
 * A save request with every secret of the environment scrubbed from what it
 * writes (the checkpoint, the step results, the messages): what each store's
 * writer saves, whoever built the request.
 */
export function redactSaveRequest<R extends { checkpoint: unknown; results?: unknown; appendHistory?: unknown }>(request: R): R {
  const secrets = secretsOf();
  return {
    ...request,
    checkpoint: redactJson(request.checkpoint, secrets),
    ...(request.results ? { results: redactJson(request.results, secrets) } : {}),
    ...(request.appendHistory ? { appendHistory: redactJson(request.appendHistory, secrets) } : {}),
  };
}
