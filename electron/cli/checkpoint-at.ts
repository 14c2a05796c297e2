/**
 * The checkpoint a command was asked for: a task's latest version, or the
 * version `--version N` names, read whole. `show` and `result` share it, so
 * a version is parsed and refused the same way everywhere.
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { Problem } from '../../shared/checkpoint/problem.js';
import { TaskReadError, type CheckpointSource, type TaskEntry } from '../store/store-types.js';
import { parseVersion } from './cli-context.js';

/** The checkpoint, or the problems that keep it from being read. */
export type CheckpointAt = { ok: true; checkpoint: Checkpoint } | { ok: false; problems: readonly Problem[] };

/**
 * Read `entry` at `versionText` (a number or `latest`; the latest when undefined).
 *
 * A malformed or out-of-range version is a UsageError (exit 2); a version
 * that exists but cannot be read comes back as its problems.
 */
export async function checkpointAt(source: CheckpointSource, entry: TaskEntry, versionText: string | undefined): Promise<CheckpointAt> {
  const latest = entry.checkpoint;
  if (versionText !== undefined) {
    const version = parseVersion(versionText, latest?.version ?? null);
    if (version !== latest?.version) {
      try {
        return { ok: true, checkpoint: await source.readVersion(entry.task_id, version) };
      } catch (err) {
        if (err instanceof TaskReadError) return { ok: false, problems: err.problems };
        throw err;
      }
    }
  }
  return latest ? { ok: true, checkpoint: latest } : { ok: false, problems: entry.problems };
}
