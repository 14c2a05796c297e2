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
import { applyDiff, type DiffOp, type DiffPath } from '../../shared/diff/json-diff.js';
import { safeParseReporting } from './checkpoint-check.js';
import type { AppliedDelta } from './version-file.js';

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

/**
 * A change at the granularity of a unit: the unit's new value, as the schema
 * parses it (defaults filled in, values normalised), or its removal.
 */
export interface UnitChange {
  op: 'add' | 'remove' | 'replace';
  path: DiffPath;
  /** The parsed unit (absent for a removal). */
  value?: unknown;
}

export type IncrementalResult =
  /** Every change is valid; `changes`, applied in order to the valid checkpoint, give the parsed `next`. */
  | { ok: true; changes: UnitChange[] }
  /** A change did not validate: `issues` as zod reports them, paths from the checkpoint root. */
  | { ok: false; issues: z.core.$ZodIssue[] }
  /** The change is not confined to units (the root itself was replaced): validate the whole instead. */
  | { ok: false; issues: null };

/**
 * Check the parts of `next` that `ops` (the diff from a valid checkpoint to
 * `next`) touch, and return them as the schema parses them.
 *
 * Each changed unit is parsed once; the unit changes keep the order of `ops`
 * (array growth and shrinkage included), so applying them to the valid
 * checkpoint gives what parsing the whole of `next` would, at the cost of the
 * change.
 */
export function validateChanges(next: unknown, ops: readonly DiffOp[]): IncrementalResult {
  const seen = new Set<string>();
  const issues: z.core.$ZodIssue[] = [];
  const changes: UnitChange[] = [];
  for (const op of ops) {
    const unit = unitOf(op.path);
    if (!unit) return { ok: false, issues: null };
    const wholeElement = unit.path.length === op.path.length && typeof unit.path[unit.path.length - 1] === 'number';
    // Removing a whole array element leaves nothing of it to check.
    if (op.op === 'remove' && wholeElement) {
      changes.push({ op: 'remove', path: unit.path });
      continue;
    }
    const key = JSON.stringify(unit.path);
    if (seen.has(key)) continue;
    seen.add(key);
    const value = valueAt(next, unit.path);
    const parsed = safeParseReporting(unit.schema, value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) issues.push({ ...issue, path: [...unit.path, ...issue.path] });
      continue;
    }
    // An element added or replaced whole keeps its op (an add grows the array); a unit changed inside
    // exists on both sides, and a field that parses to nothing is gone.
    const kind = wholeElement && op.op !== 'remove' ? op.op : parsed.data === undefined ? 'remove' : 'replace';
    changes.push(kind === 'remove' ? { op: kind, path: unit.path } : { op: kind, path: unit.path, value: parsed.data });
  }
  return issues.length ? { ok: false, issues } : { ok: true, changes };
}

function valueAt(doc: unknown, path: DiffPath): unknown {
  let cur = doc;
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/**
 * The checkpoint that `deltas` (each from the version before it, oldest first, with the document it made) make of
 * `base`, a checkpoint validated whole: each delta's changed units are checked and parsed, and put into the
 * previous result, so the rest stays `base`'s own objects. What a version file's deltas give a reader that holds
 * the version they start from. Null when a change is not confined to units or a unit does not validate: the
 * caller then checks the rebuilt document whole, which reports the problem as any read would.
 */
export function checkDeltas(base: Checkpoint, deltas: readonly AppliedDelta[]): Checkpoint | null {
  let checked: unknown = base;
  try {
    for (const delta of deltas) {
      const check = validateChanges(delta.doc, delta.ops);
      if (!check.ok) return null;
      // With the lineage of the arrays it copies: the reader freezes what this makes (freezeSince).
      checked = applyDiff(checked, check.changes as DiffOp[], true);
    }
  } catch {
    // A delta that does not fit: the whole read reports it.
    return null;
  }
  return checked as Checkpoint;
}
