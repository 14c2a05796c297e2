/**
 * The limits a store's readers apply, checked before anything is written.
 *
 * A reader refuses a file over the size limit for one file, or nested more
 * than MAX_JSON_DEPTH levels deep (file-reader.ts). A writer that accepted
 * such a value would write a version its own reader then refuses: the task
 * would show the version before, and every resume and edit after would fail.
 * So every save is checked here first, whoever calls the store, and refused
 * with a WriteLimitError naming the limit; nothing is written.
 *
 * One module for every store: the directory store calls it in its write path,
 * and any other store that shares the readers' limits calls the same checks.
 */
import { problem } from '../../shared/checkpoint/problem.js';
import { placesSince } from '../../shared/diff/array-lineage.js';
import { walkable } from '../../shared/diff/frozen-arrays.js';
import { MAX_JSON_DEPTH, nameOf, type LazyName } from './file-reader.js';
import { StoreWriteError } from './store-types.js';

/**
 * How many levels the files of a version add around a value: the envelope,
 * the checkpoint, the plan and its step, a blob list, a delta's operation.
 * A value may nest this much less than the reader's limit.
 */
export const ENVELOPE_DEPTH = 12;
/** The deepest a value in a checkpoint, a step result or a message may nest. */
export const MAX_VALUE_DEPTH = MAX_JSON_DEPTH - ENVELOPE_DEPTH;

/** Which limit a refused save went over. */
export type WriteLimit = 'depth' | 'file-size';

/**
 * A save refused before anything was written because a reader would refuse
 * what it writes; `limit` says which. A StoreWriteError, so every caller that
 * handles a refused save handles this one.
 */
export class WriteLimitError extends StoreWriteError {
  constructor(
    taskId: string,
    readonly limit: WriteLimit,
    file: string,
    message: string,
  ) {
    super(taskId, [problem(file, 'too-large', message)]);
  }
}

// Heights of values already measured. Checkpoints are frozen and each save reuses the parts that did not change,
// so a save measures only what is new; the map holds its keys weakly.
const heights = new WeakMap<object, number>();

class TooDeep extends Error {}

/** The nesting height of a JSON value (0 for a scalar), throwing TooDeep as soon as it exceeds `budget`. */
function heightWithin(value: unknown, budget: number): number {
  if (value === null || typeof value !== 'object') return 0;
  const known = heights.get(value);
  if (known !== undefined) {
    if (known > budget) throw new TooDeep();
    return known;
  }
  if (budget <= 0) throw new TooDeep();
  let max = 0;
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  for (const child of children) {
    if (child === null || typeof child !== 'object') continue;
    const h = heightWithin(child, budget - 1);
    if (h > max) max = h;
  }
  heights.set(value, max + 1);
  return max + 1;
}

/** Whether a value nests at most `limit` levels (arrays and objects; a scalar is 0). */
export function nestsWithin(value: unknown, limit: number): boolean {
  try {
    heightWithin(value, limit);
    return true;
  } catch (err) {
    if (err instanceof TooDeep) return false;
    throw err;
  }
}

/**
 * Whether `value` nests at most `budget` levels, where `accepted` is a value
 * at the same place that nests at most as many: a part of `value` that is the
 * very object `accepted` holds at the same place is within the budget and is
 * not walked again. A save passes the version before it back with a few parts
 * replaced, so this costs a pointer comparison per member of the containers
 * that changed, where a walk would look each member up in `heights`.
 */
function fitsBeside(value: unknown, accepted: unknown, budget: number): boolean {
  if (value === accepted || value === null || typeof value !== 'object') return true;
  if (accepted === null || typeof accepted !== 'object' || Array.isArray(value) !== Array.isArray(accepted)) {
    return nestsWithin(value, budget);
  }
  if (budget <= 0) return false;
  if (Array.isArray(value)) {
    // A copy of the accepted array that recorded its changes (array-lineage.ts) is checked there and past its end.
    const places = placesSince(value, accepted as readonly unknown[]);
    if (places !== null) {
      const twin = accepted as readonly unknown[];
      for (const i of places) {
        const child: unknown = value[i];
        if (child !== twin[i] && child !== null && typeof child === 'object' && !fitsBeside(child, twin[i], budget - 1)) return false;
      }
      return true;
    }
    const twin = walkable(accepted as readonly unknown[]);
    const members = walkable(value);
    for (let i = 0; i < members.length; i++) {
      const child: unknown = members[i];
      // The common case, an unchanged member, without a call.
      if (child !== twin[i] && child !== null && typeof child === 'object' && !fitsBeside(child, twin[i], budget - 1)) return false;
    }
    return true;
  }
  const twin = accepted as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (child === null || typeof child !== 'object') continue;
    // Own members only: a key such as "__proto__" must not find the prototype's.
    if (!fitsBeside(child, Object.hasOwn(twin, key) ? twin[key] : undefined, budget - 1)) return false;
  }
  return true;
}

/** What a save is about to put into the files of a version. */
export interface SaveContents {
  checkpoint: unknown;
  results?: Record<string, unknown>;
  messages?: readonly unknown[];
}

/**
 * Refuse a save whose values nest deeper than readers accept; see the module
 * comment. `file` is the version file the save would write, for the message
 * (a function, so that a save that is accepted does not build the name).
 *
 * `accepted` is a checkpoint known to be within the limit: the one this
 * writer built from the last save it accepted. Built from a checked request,
 * it nests no deeper than that request did, but where the schema filled in a
 * default, and defaults are a level or two deep, far under the limit. The
 * parts of `contents.checkpoint` that are its very objects are not walked.
 */
export function checkValueDepth(taskId: string, file: LazyName, contents: SaveContents, accepted?: unknown): void {
  const refuse = (what: string) =>
    new WriteLimitError(
      taskId,
      'depth',
      nameOf(file),
      `refusing to save this version: ${what} is nested more than ${MAX_VALUE_DEPTH} levels deep, the most a checkpoint value may nest ` +
        `(readers refuse files nested more than ${MAX_JSON_DEPTH} levels); nothing was written and the task is unchanged`,
    );
  for (const [stepId, value] of Object.entries(contents.results ?? {})) {
    if (!nestsWithin(value, MAX_VALUE_DEPTH)) throw refuse(`the result of step ${JSON.stringify(stepId)}`);
  }
  (contents.messages ?? []).forEach((m, i) => {
    if (!nestsWithin(m, MAX_VALUE_DEPTH)) throw refuse(`message ${i + 1} of those appended`);
  });
  const fits =
    accepted === undefined || accepted === null
      ? nestsWithin(contents.checkpoint, MAX_VALUE_DEPTH)
      : fitsBeside(contents.checkpoint, accepted, MAX_VALUE_DEPTH);
  if (!fits) throw refuse('the checkpoint');
}

/** Refuse to write a file larger than readers load; see the module comment. `file` as for checkValueDepth. */
export function checkFileSize(taskId: string, file: LazyName, bytes: number, maxFileBytes: number): void {
  if (bytes <= maxFileBytes) return;
  throw new WriteLimitError(
    taskId,
    'file-size',
    nameOf(file),
    `refusing to save this version: the file would be ${bytes} bytes, over the ${maxFileBytes}-byte limit readers load for one file; ` +
      'nothing was written and the task is unchanged. Keep large data in files of its own and record them as artifacts',
  );
}
