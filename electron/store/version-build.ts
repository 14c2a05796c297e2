/**
 * Building the next version of a task from a save request, the same for
 * every store: results become blobs, appended messages a history chunk, and
 * the new checkpoint is validated (only what changed, when the base is one
 * this writer validated) and sealed, sharing every unchanged part with the
 * base. The delta from the base is what the store keeps of the version, so
 * history costs what changed, not a full state per version.
 */
import { z } from 'zod';
import { Checkpoint, CURRENT_SCHEMA_VERSION, HistoryMessage } from '../../shared/checkpoint/schema.js';
import { problem } from '../../shared/checkpoint/problem.js';
import { applyDiff, computeDiff, type DiffOp } from '../../shared/diff/json-diff.js';
import { copiedFrom, noteLineage } from '../../shared/diff/array-lineage.js';
import { copyArray } from '../../shared/diff/frozen-arrays.js';
import { validateChanges } from './incremental-validate.js';
import { sealJson, toPlainJson } from './frozen-json.js';
import { encodeBlob, type EncodedBlob } from './blob-store.js';
import { formatIssues, safeParseReporting } from './checkpoint-check.js';
import { StoreWriteError, type SaveRequest } from './store-types.js';

type Json = Record<string, unknown>;

const Messages = z.array(HistoryMessage);

/** What a version is built on. */
export interface BuildBase {
  taskId: string;
  /** The previous version's checkpoint (null for version 1). */
  base: Json | null;
  /** The base is one this writer validated (sealed): only what changed need be validated again. */
  trusted: boolean;
  /** Where the version will be, for the problem a refusal carries. */
  file: string;
}

export interface BuiltVersion {
  /** The new checkpoint, sealed (deeply frozen). */
  normalized: Json;
  /** Blobs the version introduces, each once. */
  blobs: EncodedBlob[];
  /** The delta from the base; null when there is no base. */
  ops: DiffOp[] | null;
}

/** A full snapshot is written once the deltas since the last one reach this many snapshots' bytes. */
export const KEYFRAME_DELTA_RATIO = 2;

/**
 * Assemble and validate version `next`; a writer bug throws StoreWriteError
 * here, before anything is written.
 */
export function buildVersion(request: SaveRequest, next: number, at: BuildBase): BuiltVersion {
  const refuse = (message: string) =>
    new StoreWriteError(at.taskId, [problem(at.file, 'schema', `refusing to save version ${next}: ${message}; nothing was written`)]);
  const input: Json = { ...(request.checkpoint as Json), version: next };
  if (input.task_id !== at.taskId) throw refuse(`task_id is ${JSON.stringify(input.task_id)}, not ${JSON.stringify(at.taskId)}`);
  if (input.schema_version !== CURRENT_SCHEMA_VERSION)
    throw refuse(`schema_version must be ${CURRENT_SCHEMA_VERSION}, got ${JSON.stringify(input.schema_version)}`);

  const blobs: EncodedBlob[] = [];
  const results = request.results ? Object.entries(request.results) : [];
  if (results.length > 0) {
    if (!Array.isArray(input.plan)) throw refuse('results were given but the checkpoint has no plan');
    const given = input.plan as Json[];
    const plan = copyArray(given);
    const written: number[] = [];
    for (const [stepId, value] of results) {
      const i = stepIndex(plan, stepId, request.checkpoint);
      if (i < 0) throw refuse(`a result was given for step ${JSON.stringify(stepId)}, which is not in the plan`);
      const blob = encodeBlob(value === undefined ? null : value, next);
      blobs.push(blob);
      plan[i] = { ...plan[i], result_ref: blob.ref };
      written.push(i);
    }
    // Recorded as a copy of the plan given (array-lineage.ts): the diff below then looks at these steps only.
    noteLineage(plan, given, written);
    input.plan = Object.freeze(plan);
  }

  const baseHistory = (at.base?.history ?? { count: 0, head: null }) as { count: number; head: string | null };
  if (request.appendHistory && request.appendHistory.length > 0) {
    const messages = safeParseReporting(Messages, request.appendHistory);
    if (!messages.success) throw refuse(`appendHistory: ${formatIssues(messages.error.issues, request.appendHistory)}`);
    const chunk = encodeBlob({ prev: baseHistory.head ?? null, messages: messages.data }, next);
    blobs.push(chunk);
    input.history = { count: (baseHistory.count ?? 0) + messages.data.length, head: chunk.ref };
  } else if (input.history === undefined) {
    // A trusted base is frozen, so sharing its history is safe, and it diffs as unchanged; one read from storage is copied.
    input.history = at.trusted ? baseHistory : { ...baseHistory };
  }

  if (at.base !== null && at.trusted) {
    // Fast path: parse only the units that changed since the last (validated) version, and put the parsed
    // units into the base. Everything else stays the base's own sealed objects.
    const check = validateChanges(input, computeDiff(at.base, input));
    if (check.ok) {
      const changes = check.changes.map((c) => (c.op === 'remove' ? c : { ...c, value: toPlainJson(c.value) }));
      // Sealed at once, so the lineage applyDiff records for its copies holds (array-lineage.ts).
      const normalized = sealJson(applyDiff(at.base, changes, true) as Json, at.base);
      return { normalized, blobs: dedupeBlobs(blobs), ops: computeDiff(at.base, normalized) };
    }
    if (check.issues) throw refuse(formatIssues(check.issues, input));
  }

  const parsed = safeParseReporting(Checkpoint, input);
  if (!parsed.success) throw refuse(formatIssues(parsed.error.issues, input));
  // The base for the next save is exactly what the stored bytes say: JSON, frozen.
  const normalized = sealJson(toPlainJson(parsed.data) as unknown as Json);
  return { normalized, blobs: dedupeBlobs(blobs), ops: at.base === null ? null : computeDiff(at.base, normalized) };
}

/**
 * Where step `stepId` is in `plan`. A runtime save gives the result of the
 * step it just changed, so the steps the request's plan records as changed
 * (array-lineage.ts) are looked at first; a plan of 10,000 steps is scanned
 * only when the step is not among them.
 */
function stepIndex(plan: readonly Json[], stepId: string, checkpoint: unknown): number {
  const from = copiedFrom((checkpoint as { plan?: unknown[] } | null)?.plan ?? []);
  for (const i of from?.changed ?? []) if (plan[i]?.id === stepId) return i;
  return plan.findIndex((s) => s?.id === stepId);
}

function dedupeBlobs(blobs: EncodedBlob[]): EncodedBlob[] {
  const seen = new Set<string>();
  return blobs.filter((b) => (seen.has(b.hex) ? false : (seen.add(b.hex), true)));
}
