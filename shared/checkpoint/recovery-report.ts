/**
 * What a crash or a power cut left behind in one task folder: the version the
 * task recovered to and what did not survive. Shared by the CLI's `verify`, the
 * host's verifyTask and the UI.
 */
import { z } from 'zod';

export const RecoveryReport = z.object({
  task_id: z.string(),
  /** The newest version that reads whole: what the task recovered to (0 when none does). */
  latest_version: z.number().int().nonnegative(),
  /** The version `checkpoint.json` holds, or null when it is missing or unreadable. */
  hot_version: z.number().int().nullable(),
  /** Versions whose save stopped before its commit point: a temp file remains, the version does not. */
  interrupted_versions: z.array(z.number().int()),
  /** Temp files of interrupted writes, relative to the root: harmless, never read, safe to delete. */
  leftover_temp_files: z.array(z.object({ file: z.string(), bytes: z.number().int().nonnegative() })),
  /** Versions newer than the newest `version` event of events.jsonl (the log is not fsynced). */
  events_behind: z.number().int().nonnegative(),
  /** Bytes of a torn last line of events.jsonl, ignored by readers. */
  torn_event_bytes: z.number().int().nonnegative(),
  /** The same, as sentences a human can act on; the first always says where the task stands. */
  account: z.array(z.string()).min(1),
});
export type RecoveryReport = z.infer<typeof RecoveryReport>;

/**
 * True when an interruption left something worth telling: more than the
 * account's first line (where the task stands), or no version that reads.
 */
export function hasRecoveryNews(r: RecoveryReport): boolean {
  return r.account.length > 1 || r.latest_version === 0;
}
