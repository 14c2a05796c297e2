/**
 * From parsed JSON to a canonical Checkpoint: migrate older schemas forward,
 * validate with zod, and turn what fails into problems a human can act on.
 */
import type { z } from 'zod';
import { Checkpoint, CURRENT_SCHEMA_VERSION } from '../../shared/checkpoint/schema.js';
import { migrateForward } from '../../shared/checkpoint/migrate.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { isCheckpointHead, type CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';

/** A parsed checkpoint file, checked: the checkpoint (a head or a whole one), or why it cannot be used. */
export interface Checked<C extends CheckpointHead> {
  /** The checkpoint, or null when it cannot be used. */
  checkpoint: C | null;
  problems: Problem[];
  /** Written by a newer Waystation: show it, never rewrite it. */
  readOnly: boolean;
}

export type CheckedCheckpoint = Checked<Checkpoint>;

/**
 * Migrate and validate a parsed checkpoint file.
 *
 * A future-schema file is still shown when it validates against this build's
 * schema (every object is loose, so newer fields pass through): the checkpoint
 * keeps its own `schema_version`, and `readOnly` is set.
 */
export function checkCheckpoint(doc: unknown, file: string): CheckedCheckpoint {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return { checkpoint: null, problems: [problem(file, 'schema', `expected a JSON object, got ${describe(doc)}`)], readOnly: false };
  }
  const migrated = migrateForward(doc as Record<string, unknown>);
  if (!migrated.ok) {
    if (migrated.reason === 'future-schema') {
      const p = problem(file, 'future-schema', migrated.message);
      const parsed = Checkpoint.safeParse({ ...doc, schema_version: CURRENT_SCHEMA_VERSION });
      const checkpoint = parsed.success
        ? ({ ...parsed.data, schema_version: (doc as { schema_version: number }).schema_version } as unknown as Checkpoint)
        : null;
      return { checkpoint, problems: [p], readOnly: true };
    }
    return { checkpoint: null, problems: [problem(file, 'schema', migrated.message)], readOnly: false };
  }
  const parsed = safeParseReporting(Checkpoint, migrated.doc);
  if (!parsed.success) {
    return { checkpoint: null, problems: [problem(file, 'schema', formatIssues(parsed.error.issues, migrated.doc))], readOnly: false };
  }
  return { checkpoint: parsed.data, problems: [], readOnly: false };
}

/**
 * Migrate a parsed checkpoint and check what a listing reads of it (see
 * CheckpointHead): no copy of the document, no zod.
 *
 * What the cheap check refuses, and a future schema, get the whole of
 * checkCheckpoint, so a listed problem reads exactly as it does when the task
 * is opened; and should the cheap check ever be stricter than the schema, the
 * document is still shown.
 */
export function checkCheckpointHead(doc: unknown, file: string): Checked<CheckpointHead> {
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) {
    const migrated = migrateForward(doc as Record<string, unknown>);
    if (migrated.ok && isCheckpointHead(migrated.doc)) return { checkpoint: migrated.doc, problems: [], readOnly: false };
  }
  return checkCheckpoint(doc, file);
}

/**
 * `schema.safeParse(value)`, with each issue carrying the input it found when
 * the value fails (what formatIssues names). A value that passes is parsed
 * once, without options: given any, zod's compiled parser of an object ran
 * 2 to 5 times slower (a plan step: 0.8-1.3 against 3.0-4.4 µs; a 200-step
 * checkpoint: 68-143 against 176-189 µs), and a save parses a few units, a
 * task opened its whole plan.
 */
export function safeParseReporting<T extends z.ZodType>(schema: T, value: unknown): z.ZodSafeParseResult<z.output<T>> {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed : schema.safeParse(value, { reportInput: true });
}

/**
 * Zod issues as "field: expected X, got Y", the first few joined.
 *
 * `doc` is the validated input, used to name what was actually found.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], doc: unknown): string {
  const shown = issues.slice(0, 5).map((issue) => {
    const field = fieldName(issue.path);
    const got = describe(valueAt(doc, issue.path));
    switch (issue.code) {
      case 'invalid_type':
        return `${field}: expected ${issue.expected}, got ${got}`;
      case 'invalid_value':
        return `${field}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${got}`;
      case 'invalid_format':
        return `${field}: expected ${issue.message ? issue.message : issue.format}, got ${got}`;
      case 'too_small':
      case 'too_big':
        return `${field}: ${issue.message}, got ${got}`;
      default:
        return `${field}: ${issue.message}`;
    }
  });
  const more = issues.length > shown.length ? `; and ${issues.length - shown.length} more` : '';
  return `${shown.join('; ')}${more}`;
}

function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out ? `.${String(seg)}` : String(seg);
  return out || '(the whole file)';
}

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let cur = doc;
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

/** A short description of a value for messages: its type and, for scalars, the value. */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  return `${typeof v} ${String(v)}`;
}
