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
import { placesSince } from '../../shared/diff/array-lineage.js';

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
 * and enumerating its entries on every save and event was a tenth of a runtime save. The names come from
 * Object.getOwnPropertyNames, not Object.keys: on `process.env` Object.keys asks the environment once more
 * per name whether it is enumerable (every variable is), which made it cost twice as much (39 against
 * 20 µs per call with the 69 variables `npm exec` sets). The same array is returned while the secret values stay
 * the same, so a caller may compare it by identity.
 */
export function secretsOf(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  let values = '';
  const found: string[] = [];
  for (const name of Object.getOwnPropertyNames(env)) {
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
 *
 * `scrubbed` is a value at the same place already free of these secrets (the
 * checkpoint a writer built from its last save, scrubbed with the same
 * secrets): a part of `value` that is the very object `scrubbed` holds at the
 * same place is not walked. A save passes the version before it back with a
 * few parts replaced, so this costs a pointer comparison per member of the
 * containers that changed.
 */
export function redactJson<T>(value: T, secrets: readonly string[], scrubbed?: unknown): T {
  if (secrets.length === 0) return value;
  const signature = secrets.join('\u0000');
  if (signature !== cleanFor) {
    cleanFor = signature;
    clean = new WeakSet();
  }
  return walk(value, secrets, scrubbed) as T;
}

function walk(value: unknown, secrets: readonly string[], twin: unknown): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (value === null || typeof value !== 'object' || value === twin) return value;
  if (clean.has(value)) return value;
  const pair = twin !== null && typeof twin === 'object' && Array.isArray(twin) === Array.isArray(value) ? twin : null;
  let changed = false;
  let out: unknown;
  const places = Array.isArray(value) && Array.isArray(pair) ? placesSince(value, pair) : null;
  if (places !== null) {
    // A copy of the twin that recorded its changes (array-lineage.ts): only those places and its tail are new.
    const list = value as readonly unknown[];
    const twins = pair as readonly unknown[];
    let arr: unknown[] | null = null;
    const visit = (i: number) => {
      const w = walk(list[i], secrets, twins[i]);
      if (w !== list[i]) (arr ??= [...list])[i] = w;
    };
    for (const i of places) visit(i);
    changed = arr !== null;
    out = arr ?? value;
  } else if (Array.isArray(value)) {
    const twins = pair as readonly unknown[] | null;
    let arr: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      // The common case beside a twin, an unchanged member, without a call.
      const w = twins !== null && v === twins[i] && typeof v === 'object' ? v : walk(v, secrets, twins?.[i]);
      if (w !== v) {
        arr ??= value.slice(0, i);
        changed = true;
      }
      arr?.push(w);
    }
    out = arr ?? value;
  } else {
    const twins = pair as Record<string, unknown> | null;
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => {
      const rk = redactText(k, secrets);
      // Own members only: a key such as "__proto__" must not find the prototype's.
      const w = walk(v, secrets, twins && Object.hasOwn(twins, k) ? twins[k] : undefined);
      if (rk !== k || w !== v) changed = true;
      return [rk, w] as const;
    });
    out = changed ? Object.fromEntries(entries) : value;
  }
  // Walked beside a twin, a value is not remembered: the next save is compared with the checkpoint built from
  // this one, which holds copies of the parts that changed, not these objects.
  if (!changed && pair === null) clean.add(value);
  return out;
}

/** Whether a text holds a secret (a task id that does cannot be used: it names a folder). */
export function holdsSecret(text: string, secrets: readonly string[]): boolean {
  return secrets.some((s) => text.includes(s));
}

/**
 * A save request with every secret of the environment scrubbed from what it
 * writes (the checkpoint, the step results, the messages): what each store's
 * writer saves, whoever built the request. `scrubbed`: a checkpoint already
 * free of `secrets`, as for redactJson.
 */
export function redactSaveRequest<R extends { checkpoint: unknown; results?: unknown; appendHistory?: unknown }>(
  request: R,
  secrets: readonly string[] = secretsOf(),
  scrubbed?: unknown,
): R {
  if (secrets.length === 0) return request;
  return {
    ...request,
    checkpoint: redactJson(request.checkpoint, secrets, scrubbed),
    ...(request.results ? { results: redactJson(request.results, secrets) } : {}),
    ...(request.appendHistory ? { appendHistory: redactJson(request.appendHistory, secrets) } : {}),
  };
}
