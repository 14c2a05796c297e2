/**
 * Conversion of the two source articles' checkpoint files into canonical
 * checkpoints, in memory. Pure: the files are never rewritten.
 *
 * (a) The first article's `<task_id>.json`: a step counter, an inline message
 *     history and a `results` map keyed by step name.
 * (b) The second article's `checkpoint.json`: phase, plan, artifacts, side
 *     effects and a resume hint, with no schema version.
 *
 * What the articles do not record is filled in plainly and marked, never
 * invented: an artifact without a size gets `size: 0` and `size_unknown: true`;
 * an artifact whose hash is not 64 hex digits gets an all-zero hash,
 * `sha256_unknown: true` and the original text in `legacy_sha256` (so verifying
 * it reports a mismatch rather than passing); a side effect without an id gets
 * `effect:<idempotency_key>` (or `effect-<n>` without a key), stable across reads.
 */
import { CURRENT_SCHEMA_VERSION, type CheckpointInput, type HistoryMessage, type StepStatus, type EffectStatus } from './schema.js';

export type LegacyFormat = 'article-task-json' | 'article-checkpoint-json';

export interface LegacyContext {
  /** The task id to use (the file stem or folder name). */
  taskId: string;
  /** The file, relative to the checkpoint directory root. */
  location: string;
  /** Used for timestamps the file does not carry (the file's mtime, ISO-8601). */
  fallbackTime: string;
}

export type LegacyConversion =
  { ok: true; format: LegacyFormat; checkpoint: CheckpointInput; messages: HistoryMessage[] } | { ok: false; message: string };

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : v == null ? fallback : String(v));
const nonEmpty = (v: unknown, fallback: string): string => (typeof v === 'string' && v.length > 0 ? v : fallback);
const count = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);

/**
 * Which article format a parsed JSON document is in, or null if neither.
 *
 * A document with `schema_version` is a Waystation checkpoint, never legacy.
 */
export function detectLegacyFormat(doc: unknown): LegacyFormat | null {
  if (!isObj(doc) || 'schema_version' in doc) return null;
  if (Array.isArray(doc.plan) || 'phase' in doc || 'side_effects' in doc || 'resume_hint' in doc) return 'article-checkpoint-json';
  if ('current_step' in doc && ('results' in doc || 'history' in doc || 'total_steps' in doc)) return 'article-task-json';
  return null;
}

/** Convert either article format; the format is detected from the document. */
export function convertLegacy(doc: unknown, ctx: LegacyContext): LegacyConversion {
  const format = detectLegacyFormat(doc);
  if (format === 'article-task-json') return convertArticleTaskJson(doc, ctx);
  if (format === 'article-checkpoint-json') return convertArticleCheckpointJson(doc, ctx);
  return { ok: false, message: 'neither a Waystation checkpoint (no schema_version) nor an article-format checkpoint' };
}

const importSource = (ctx: LegacyContext, format: LegacyFormat) => ({
  kind: 'import' as const,
  imported_from: { path: ctx.location, format },
});

const manualRecovery = () => ({ mode: 'manual' as const, pending_approval: null, decisions: [], auto_attempts: 0 });

/**
 * The first article's `<task_id>.json`.
 *
 * Steps are named from the `results` keys in order; steps past them (up to
 * `total_steps`) are named `step <n>`. Steps before `current_step` are done,
 * the rest pending. Results stay inline (`plan[i].result`); the history is
 * returned separately as `messages` (the checkpoint's history has no blob
 * head until the task is imported).
 */
export function convertArticleTaskJson(doc: unknown, ctx: LegacyContext): LegacyConversion {
  if (!isObj(doc)) return { ok: false, message: 'expected a JSON object' };
  const results = isObj(doc.results) ? doc.results : {};
  const names = Object.keys(results);
  const current = count(doc.current_step);
  const total = Math.max(count(doc.total_steps), names.length, current);
  const plan = Array.from({ length: total }, (_, i) => {
    const name = names[i] ?? `step ${i + 1}`;
    return {
      id: `step-${i + 1}`,
      name,
      status: (i < current ? 'done' : 'pending') as StepStatus,
      attempts: i < current ? 1 : 0,
      ...(name in results ? { result: results[name] } : {}),
    };
  });
  const messages: HistoryMessage[] = Array.isArray(doc.history)
    ? doc.history.map((m) =>
        isObj(m) ? { ...m, role: str(m.role, 'unknown'), content: str(m.content) } : { role: 'unknown', content: str(m) },
      )
    : [];
  const metrics = isObj(doc.metrics) ? doc.metrics : {};
  const created = nonEmpty(doc.created_at, ctx.fallbackTime);
  const updated = nonEmpty(doc.updated_at, created);
  const elapsedSeconds = typeof metrics.elapsed_seconds === 'number' && metrics.elapsed_seconds >= 0 ? metrics.elapsed_seconds : 0;
  const done = total > 0 && current >= total;
  const firstUser = messages.find((m) => m.role === 'user');
  const known = new Set(['task_id', 'current_step', 'total_steps', 'history', 'results', 'created_at', 'updated_at', 'metrics']);
  const checkpoint: CheckpointInput = {
    ...extras(doc, known),
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: ctx.taskId,
    task_name: nonEmpty(doc.task_name, nonEmpty(doc.task_id, ctx.taskId)),
    version: 1,
    // A task that stopped short of its last step, with no one holding it, was interrupted: recorded as
    // running, it is shown as interrupted (no lease), not as halted, which only a rejection produces.
    status: done ? 'done' : 'running',
    phase: done ? 'done' : (plan[current]?.name ?? ''),
    goal: firstUser?.content ?? '',
    plan,
    current_step: Math.min(current, total),
    total_steps: total,
    artifacts: [],
    side_effects: [],
    resume_hint: done ? '' : `continue from step ${current + 1}${plan[current] ? ` (${plan[current].name})` : ''}`,
    recovery: manualRecovery(),
    errors: [],
    run: {
      created_at: created,
      updated_at: updated,
      // The article records one token total, not the in/out split.
      tokens_in: 0,
      tokens_out: 0,
      ...(typeof metrics.total_tokens === 'number' ? { total_tokens: metrics.total_tokens } : {}),
      cost_usd: 0,
      elapsed_ms: elapsedSeconds * 1000,
      llm_calls: [],
    },
    source: importSource(ctx, 'article-task-json'),
    history: { count: messages.length, head: null },
  };
  return { ok: true, format: 'article-task-json', checkpoint, messages };
}

const stepStatuses: readonly string[] = ['pending', 'running', 'done', 'failed', 'skipped'];
const effectStatuses: readonly string[] = ['not_started', 'intent', 'done', 'failed', 'uncertain'];
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The second article's `checkpoint.json`.
 *
 * Unknown step statuses become `pending` and unknown effect statuses
 * `uncertain` (the resume will probe them), each keeping the original in
 * `legacy_status`.
 */
export function convertArticleCheckpointJson(doc: unknown, ctx: LegacyContext): LegacyConversion {
  if (!isObj(doc)) return { ok: false, message: 'expected a JSON object' };
  const rawPlan = Array.isArray(doc.plan) ? doc.plan : [];
  const plan = rawPlan.map((s, i) => {
    const step = isObj(s) ? s : {};
    const status = str(step.status);
    return {
      ...step,
      id: nonEmpty(step.id, `step-${i + 1}`),
      name: str(step.name, `step ${i + 1}`),
      status: (stepStatuses.includes(status) ? status : 'pending') as StepStatus,
      ...(stepStatuses.includes(status) ? {} : { legacy_status: step.status ?? null }),
    };
  });
  const artifacts = (Array.isArray(doc.artifacts) ? doc.artifacts : []).map((a, i) => {
    const art = isObj(a) ? a : {};
    const hash = str(art.sha256).toLowerCase();
    const size = typeof art.size === 'number' && Number.isInteger(art.size) && art.size >= 0 ? art.size : null;
    return {
      ...art,
      type: nonEmpty(art.type, 'file'),
      path: nonEmpty(art.path, `artifact-${i + 1}`),
      sha256: HEX64.test(hash) ? hash : '0'.repeat(64),
      ...(HEX64.test(hash) ? {} : { sha256_unknown: true, legacy_sha256: art.sha256 ?? null }),
      size: size ?? 0,
      ...(size === null ? { size_unknown: true } : {}),
      status: str(art.status, 'written'),
    };
  });
  const usedIds = new Set<string>();
  const sideEffects = (Array.isArray(doc.side_effects) ? doc.side_effects : []).map((e, i) => {
    const fx = isObj(e) ? e : {};
    const status = str(fx.status);
    const key = nonEmpty(fx.idempotency_key, `effect-${i + 1}`);
    let id = nonEmpty(fx.id, typeof fx.idempotency_key === 'string' && fx.idempotency_key ? `effect:${key}` : `effect-${i + 1}`);
    // Two effects sharing a key would otherwise share an id; the index keeps ids unique and stable.
    if (usedIds.has(id)) id = `${id}#${i + 1}`;
    usedIds.add(id);
    return {
      ...fx,
      id,
      type: nonEmpty(fx.type, 'unknown'),
      status: (effectStatuses.includes(status) ? status : 'uncertain') as EffectStatus,
      ...(effectStatuses.includes(status) ? {} : { legacy_status: fx.status ?? null }),
      idempotency_key: key,
      attempts: 0,
    };
  });
  const doneCount = plan.filter((s) => s.status === 'done' || s.status === 'skipped').length;
  // Failed when a step failed, done when all are; otherwise it stopped part-way (a step left running, or
  // steps left pending): recorded as running, shown as interrupted, since nothing holds it.
  const status = plan.some((s) => s.status === 'failed') ? 'failed' : plan.length > 0 && doneCount === plan.length ? 'done' : 'running';
  const updated = nonEmpty(doc.updated_at, ctx.fallbackTime);
  const known = new Set(['task_id', 'version', 'phase', 'goal', 'plan', 'artifacts', 'side_effects', 'resume_hint', 'updated_at']);
  const legacyVersion = typeof doc.version === 'number' && Number.isInteger(doc.version) && doc.version > 0 ? doc.version : 1;
  const checkpoint: CheckpointInput = {
    ...extras(doc, known),
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: ctx.taskId,
    task_name: nonEmpty(doc.task_name, nonEmpty(doc.task_id, ctx.taskId)),
    version: legacyVersion,
    status,
    phase: str(doc.phase),
    goal: str(doc.goal),
    plan,
    current_step: doneCount,
    total_steps: plan.length,
    artifacts,
    side_effects: sideEffects,
    resume_hint: str(doc.resume_hint),
    recovery: manualRecovery(),
    errors: [],
    run: { created_at: updated, updated_at: updated, tokens_in: 0, tokens_out: 0, cost_usd: 0, elapsed_ms: 0, llm_calls: [] },
    source: importSource(ctx, 'article-checkpoint-json'),
    history: { count: 0, head: null },
  };
  return { ok: true, format: 'article-checkpoint-json', checkpoint, messages: [] };
}

/** Top-level fields the article format does not define, kept so nothing the file held is lost. */
function extras(doc: Json, known: Set<string>): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(doc)) {
    if (known.has(k) || k === '__proto__') continue;
    out[k] = v;
  }
  return out;
}
