/**
 * A typed problem with a file: what went wrong, where, and that nothing was changed.
 *
 * Readers never throw on bad input; they attach problems to the task they were
 * reading, so every other task stays browsable.
 */
import { z } from 'zod';

export const ProblemReason = z.enum([
  'unreadable', // the file could not be opened or read (EACCES, EIO, ...)
  'truncated', // JSON ends early: a torn or partial write
  'invalid-json', // not JSON at all
  'not-utf8', // bytes that are not valid UTF-8
  'too-large', // over the reader's size limit; not loaded
  'schema', // JSON of the wrong shape (field, expected, got)
  'future-schema', // written by a newer Waystation: shown read-only, never rewritten
  'outside-root', // a symlink that leads outside the checkpoint directory
  'missing-version', // a gap in the numbered history
  'invariant', // parses, but contradicts itself (current_step vs plan, ...)
  'legacy-format', // an article-format file: loaded read-only until resumed
  'conflict', // two writers raced for the same version
  'io', // a write failed (ENOSPC, EIO, ...); the previous version is intact
]);
export type ProblemReason = z.infer<typeof ProblemReason>;

export const Problem = z.object({
  /** Path relative to the checkpoint directory root, with forward slashes. */
  file: z.string(),
  reason: ProblemReason,
  /** A sentence a human can act on. */
  message: z.string(),
  /** Warnings (legacy-format, future-schema) leave the task usable; errors do not. */
  severity: z.enum(['error', 'warning']),
});
export type Problem = z.infer<typeof Problem>;

/** Build a problem; `severity` defaults by reason. */
export function problem(file: string, reason: ProblemReason, message: string): Problem {
  const warning: ProblemReason[] = ['legacy-format', 'future-schema'];
  return { file, reason, message, severity: warning.includes(reason) ? 'warning' : 'error' };
}

/**
 * A problem's own four fields, and nothing else a value carrying one may hold
 * (a refusal's extra fields): what crosses to a list row, an API answer or a
 * thread.
 */
export function plainProblem(p: Problem): Problem {
  return { file: p.file, reason: p.reason, message: p.message, severity: p.severity };
}
