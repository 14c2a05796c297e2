/**
 * The result of checking a checkpoint against the world: the second step of a
 * resume ("does reality still match what was recorded?"), shared by the CLI's
 * `verify`, the runtime and the UI.
 */
import { z } from 'zod';
import { Problem } from './problem.js';
import { EffectStatus } from './schema.js';

/**
 * How one artifact compares with the disk.
 *
 * - `ok`: present with the recorded size and sha256 (or, for a `deleted` artifact, absent);
 * - `missing`: nothing at the path;
 * - `modified`: size or content differs (or a `deleted` artifact is back);
 * - `outside-root`: a relative path that leaves its base via `..` or a symlink; not read;
 * - `unreadable`: present but not a regular file, or reading it failed.
 */
export const ArtifactCheckStatus = z.enum(['ok', 'missing', 'modified', 'outside-root', 'unreadable']);
export type ArtifactCheckStatus = z.infer<typeof ArtifactCheckStatus>;

export const ArtifactCheck = z.object({
  /** The path as recorded in the checkpoint. */
  path: z.string(),
  type: z.string(),
  /** The absolute path that was checked; null when the path was refused. */
  resolved_path: z.string().nullable(),
  status: ArtifactCheckStatus,
  expected: z.object({ sha256: z.string(), size: z.number() }),
  /** What is on disk; sha256 is null when it was not computed (size already differs, or not read). */
  actual: z.object({ sha256: z.string().nullable(), size: z.number() }).nullable(),
  message: z.string(),
});
export type ArtifactCheck = z.infer<typeof ArtifactCheck>;

/** A side effect whose outcome is unknown: it may or may not have happened. */
export const UncertainEffect = z.object({
  id: z.string(),
  type: z.string(),
  status: EffectStatus,
  idempotency_key: z.string(),
  step_id: z.string().nullable(),
  message: z.string(),
});
export type UncertainEffect = z.infer<typeof UncertainEffect>;

export const VerifyReport = z.object({
  task_id: z.string(),
  version: z.number().int().positive(),
  /** The directory relative artifact paths were resolved against. */
  base_dir: z.string(),
  /** True when nothing needs a human: no drift, no uncertain effects, no broken invariants. */
  ok: z.boolean(),
  /** True when at least one artifact is not `ok`. */
  drift: z.boolean(),
  artifacts: z.array(ArtifactCheck),
  uncertain_effects: z.array(UncertainEffect),
  invariant_problems: z.array(Problem),
});
export type VerifyReport = z.infer<typeof VerifyReport>;
