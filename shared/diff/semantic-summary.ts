/**
 * What changed between two versions of a task, said the way a human reviews a
 * checkpoint: phase and status moves, plan steps finishing, ledger entries
 * appearing, artifacts rewritten, spend. The structured diff underneath says
 * exactly which fields changed; this summary says what that means.
 */
import { z } from 'zod';
import { computeDiff } from './json-diff.js';
import { EffectStatus, RecordedError, StepStatus, TaskStatus, VersionSource, type Checkpoint } from '../checkpoint/schema.js';

const Move = <T extends z.ZodType>(t: T) => z.object({ from: t, to: t });

export const StepTransition = z.object({ id: z.string(), name: z.string(), from: StepStatus, to: StepStatus });
export const StepRef = z.object({ id: z.string(), name: z.string(), status: StepStatus });
export const EffectRef = z.object({ id: z.string(), type: z.string(), key: z.string(), status: EffectStatus });
export const EffectChange = z.object({
  id: z.string(),
  type: z.string(),
  key: z.string(),
  from: EffectStatus,
  to: EffectStatus,
  /** Top-level fields of the entry that changed (status, outcome, attempts, reconciliation, ...). */
  fields: z.array(z.string()),
});
export const ArtifactRef = z.object({ path: z.string(), type: z.string(), sha256: z.string(), size: z.number(), status: z.string() });
export const ArtifactChange = z.object({
  path: z.string(),
  sha256: Move(z.string()),
  size: Move(z.number()),
  status: Move(z.string()),
});

export const ChangeSummary = z.object({
  task_id: z.string(),
  from_version: z.number(),
  to_version: z.number(),
  phase: Move(z.string()).nullable(),
  status: Move(TaskStatus).nullable(),
  current_step: Move(z.number()).nullable(),
  step_transitions: z.array(StepTransition),
  steps_added: z.array(StepRef),
  steps_removed: z.array(StepRef),
  /** Steps whose stored result changed (a new result_ref or inline result): reruns and human edits. */
  results_changed: z.array(z.object({ id: z.string(), name: z.string() })),
  effects_added: z.array(EffectRef),
  effects_changed: z.array(EffectChange),
  effects_removed: z.array(EffectRef),
  artifacts_added: z.array(ArtifactRef),
  artifacts_changed: z.array(ArtifactChange),
  artifacts_removed: z.array(ArtifactRef),
  /** b minus a; negative when going back in history. */
  spend: z.object({ tokens_in: z.number(), tokens_out: z.number(), cost_usd: z.number(), elapsed_ms: z.number() }),
  /** Who or what wrote the later version. */
  source: VersionSource,
  approval: z
    .object({ change: z.enum(['appeared', 'cleared', 'replaced']), from: z.string().nullable(), to: z.string().nullable() })
    .nullable(),
  errors_added: z.array(RecordedError),
  resume_hint: Move(z.string()).nullable(),
});
export type ChangeSummary = z.infer<typeof ChangeSummary>;

function move<T>(from: T, to: T): { from: T; to: T } | null {
  return from === to ? null : { from, to };
}

function byKey<T>(items: readonly T[], key: (t: T) => string): Map<string, T> {
  return new Map(items.map((t) => [key(t), t]));
}

/** Structural equality of JSON values, key order ignored. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!sameJson(ao[k], bo[k])) return false;
  return true;
}

/** Errors are an append-only log; an entry counts as new when no identical entry was in a. */
function addedErrors(a: Checkpoint['errors'], b: Checkpoint['errors']): Checkpoint['errors'] {
  const pool = [...(a ?? [])];
  const out: Checkpoint['errors'] = [];
  for (const e of b ?? []) {
    const i = pool.findIndex((p) => sameJson(p, e));
    if (i >= 0) pool.splice(i, 1);
    else out.push(e);
  }
  return out;
}

/**
 * Summarize what changed from checkpoint `a` to checkpoint `b`.
 *
 * Steps and side effects are matched by id, artifacts by path, so reordering
 * alone reports nothing. Works in either direction (b older than a) and across
 * tasks, though only versions of one task make sense to a reader.
 */
export function summarizeChange(a: Checkpoint, b: Checkpoint): ChangeSummary {
  const aSteps = byKey(a.plan ?? [], (s) => s.id);
  const bSteps = byKey(b.plan ?? [], (s) => s.id);
  const step_transitions: ChangeSummary['step_transitions'] = [];
  const results_changed: ChangeSummary['results_changed'] = [];
  for (const s of b.plan ?? []) {
    const before = aSteps.get(s.id);
    if (!before) continue;
    if (before.status !== s.status) step_transitions.push({ id: s.id, name: s.name, from: before.status, to: s.status });
    if ((before.result_ref ?? null) !== (s.result_ref ?? null) || !sameJson(before.result, s.result)) {
      results_changed.push({ id: s.id, name: s.name });
    }
  }
  const stepRef = (s: Checkpoint['plan'][number]) => ({ id: s.id, name: s.name, status: s.status });

  const aFx = byKey(a.side_effects ?? [], (e) => e.id);
  const bFx = byKey(b.side_effects ?? [], (e) => e.id);
  const fxRef = (e: Checkpoint['side_effects'][number]) => ({ id: e.id, type: e.type, key: e.idempotency_key, status: e.status });
  const effects_changed: ChangeSummary['effects_changed'] = [];
  for (const e of b.side_effects ?? []) {
    const before = aFx.get(e.id);
    if (!before) continue;
    const keys = new Set([...Object.keys(before), ...Object.keys(e)]);
    const fields = [...keys].filter((k) => !sameJson((before as Record<string, unknown>)[k], (e as Record<string, unknown>)[k])).sort();
    if (fields.length > 0) {
      effects_changed.push({ id: e.id, type: e.type, key: e.idempotency_key, from: before.status, to: e.status, fields });
    }
  }

  const aArt = byKey(a.artifacts ?? [], (x) => x.path);
  const bArt = byKey(b.artifacts ?? [], (x) => x.path);
  const artRef = (x: Checkpoint['artifacts'][number]) => ({ path: x.path, type: x.type, sha256: x.sha256, size: x.size, status: x.status });
  const artifacts_changed: ChangeSummary['artifacts_changed'] = [];
  for (const x of bArt.values()) {
    const before = aArt.get(x.path);
    if (!before) continue;
    if (before.sha256 !== x.sha256 || before.size !== x.size || before.status !== x.status) {
      artifacts_changed.push({
        path: x.path,
        sha256: { from: before.sha256, to: x.sha256 },
        size: { from: before.size, to: x.size },
        status: { from: before.status, to: x.status },
      });
    }
  }

  const aPending = a.recovery?.pending_approval?.id ?? null;
  const bPending = b.recovery?.pending_approval?.id ?? null;
  const approval: ChangeSummary['approval'] =
    aPending === bPending
      ? null
      : { change: aPending === null ? 'appeared' : bPending === null ? 'cleared' : 'replaced', from: aPending, to: bPending };

  const num = (v: number | undefined) => v ?? 0;
  return {
    task_id: b.task_id,
    from_version: a.version,
    to_version: b.version,
    phase: move(a.phase, b.phase),
    status: move(a.status, b.status),
    current_step: move(a.current_step, b.current_step),
    step_transitions,
    steps_added: (b.plan ?? []).filter((s) => !aSteps.has(s.id)).map(stepRef),
    steps_removed: (a.plan ?? []).filter((s) => !bSteps.has(s.id)).map(stepRef),
    results_changed,
    effects_added: (b.side_effects ?? []).filter((e) => !aFx.has(e.id)).map(fxRef),
    effects_changed,
    effects_removed: (a.side_effects ?? []).filter((e) => !bFx.has(e.id)).map(fxRef),
    artifacts_added: [...bArt.values()].filter((x) => !aArt.has(x.path)).map(artRef),
    artifacts_changed,
    artifacts_removed: [...aArt.values()].filter((x) => !bArt.has(x.path)).map(artRef),
    spend: {
      tokens_in: num(b.run?.tokens_in) - num(a.run?.tokens_in),
      tokens_out: num(b.run?.tokens_out) - num(a.run?.tokens_out),
      // Rounded to a micro-dollar so float noise (0.1 + 0.2) does not show as a change.
      cost_usd: Math.round((num(b.run?.cost_usd) - num(a.run?.cost_usd)) * 1e6) / 1e6,
      elapsed_ms: num(b.run?.elapsed_ms) - num(a.run?.elapsed_ms),
    },
    source: b.source,
    approval,
    errors_added: addedErrors(a.errors, b.errors),
    resume_hint: move(a.resume_hint ?? '', b.resume_hint ?? ''),
  };
}

/** True when the summary records no change a reader would care about (the structured diff may still hold bookkeeping changes). */
export function isEmptySummary(s: ChangeSummary): boolean {
  const lists = [
    s.step_transitions,
    s.steps_added,
    s.steps_removed,
    s.results_changed,
    s.effects_added,
    s.effects_changed,
    s.effects_removed,
    s.artifacts_added,
    s.artifacts_changed,
    s.artifacts_removed,
    s.errors_added,
  ];
  return (
    s.phase === null &&
    s.status === null &&
    s.current_step === null &&
    s.approval === null &&
    s.resume_hint === null &&
    lists.every((l) => l.length === 0) &&
    Object.values(s.spend).every((v) => v === 0)
  );
}

export const StructuredDiffEntry = z.object({
  op: z.enum(['add', 'remove', 'replace']),
  /** A JSON Pointer (RFC 6901): `/plan/2/status`; the empty string is the whole document. */
  path: z.string(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});
export type StructuredDiffEntry = z.infer<typeof StructuredDiffEntry>;

/** Render a path of keys and indices as a JSON Pointer, escaping `~` and `/` inside keys. */
export function toJsonPointer(path: readonly (string | number)[]): string {
  return path.map((seg) => '/' + String(seg).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/**
 * The field-level diff from `a` to `b`, with JSON Pointer paths and before/after values.
 *
 * The ops are exactly those of `computeDiff` (so applying them with `applyDiff`
 * turns a into b); only the presentation changes.
 */
export function structuredDiff(a: unknown, b: unknown): StructuredDiffEntry[] {
  return computeDiff(a, b).map((op) => {
    const change: StructuredDiffEntry = { op: op.op, path: toJsonPointer(op.path) };
    if (op.op !== 'add') change.before = op.old;
    if (op.op !== 'remove') change.after = op.value;
    return change;
  });
}
