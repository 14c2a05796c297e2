/**
 * Validating a checkpoint by what changed since a checkpoint already known to
 * be valid, so that a save costs the size of its change rather than the size
 * of the plan.
 *
 * The schema is compositional (objects of fields, arrays of elements, no
 * cross-field rules), so a checkpoint whose changed parts are valid, and whose
 * other parts equal a valid checkpoint's, is valid. Each change is checked at
 * its smallest unit: a plan step, an effect, an artifact, a recorded error, an
 * llm call, a field of `run`, or a top-level field.
 */
import { z } from 'zod';
import { Artifact, Checkpoint, LlmCall, PlanStep, RecordedError, RunMetadata, SideEffect } from '../../shared/checkpoint/schema.js';
import type { DiffOp, DiffPath } from '../../shared/diff/json-diff.js';

const elementUnits: Record<string, z.ZodType> = { plan: PlanStep, side_effects: SideEffect, artifacts: Artifact, errors: RecordedError };
const topShape = Checkpoint.shape as Record<string, z.ZodType>;
const runShape = RunMetadata.shape as Record<string, z.ZodType>;

interface Unit {
  path: DiffPath;
  schema: z.ZodType;
}

/** The smallest independently valid part of the checkpoint that contains `path`. */
function unitOf(path: DiffPath): Unit | null {
  const [k0, k1, k2] = path;
  if (path.length === 0) return null;
  if (typeof k0 === 'string' && k0 in elementUnits && typeof k1 === 'number') return { path: [k0, k1], schema: elementUnits[k0] };
  if (k0 === 'run' && k1 === 'llm_calls' && typeof k2 === 'number') return { path: ['run', 'llm_calls', k2], schema: LlmCall };
  if (k0 === 'run' && typeof k1 === 'string') return { path: ['run', k1], schema: runShape[k1] ?? z.unknown() };
  return { path: [k0], schema: (typeof k0 === 'string' ? topShape[k0] : undefined) ?? z.unknown() };
}

export type IncrementalResult =
  | { ok: true }
  /** A change did not validate: `issues` as zod reports them, paths from the checkpoint root. */
  | { ok: false; issues: z.core.$ZodIssue[] }
  /** A change validates only with defaults filled in (or a value normalised): validate the whole instead. */
  | { ok: false; issues: null };

/**
 * Check the parts of `next` that `ops` (the diff from a valid checkpoint to
 * `next`) touch.
 */
export function validateChanges(next: unknown, ops: readonly DiffOp[]): IncrementalResult {
  const seen = new Set<string>();
  const issues: z.core.$ZodIssue[] = [];
  for (const op of ops) {
    const unit = unitOf(op.path);
    if (!unit) return { ok: false, issues: null };
    // Removing a whole array element leaves nothing of it to check.
    if (op.op === 'remove' && unit.path.length === op.path.length && typeof unit.path[unit.path.length - 1] === 'number') continue;
    const key = JSON.stringify(unit.path);
    if (seen.has(key)) continue;
    seen.add(key);
    const value = valueAt(next, unit.path);
    const parsed = unit.schema.safeParse(value, { reportInput: true });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) issues.push({ ...issue, path: [...unit.path, ...issue.path] });
      continue;
    }
    if (!jsonEqual(value, parsed.data)) return { ok: false, issues: null };
  }
  return issues.length ? { ok: false, issues } : { ok: true };
}

function valueAt(doc: unknown, path: DiffPath): unknown {
  let cur = doc;
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** Deep equality with JSON's meaning: key order ignored, undefined members absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!Object.prototype.hasOwnProperty.call(bo, k) || !jsonEqual(ao[k], bo[k])) return false;
  return true;
}
