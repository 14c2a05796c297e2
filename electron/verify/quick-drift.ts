/**
 * The cheap drift check a listing can afford: stat calls only, no content read.
 *
 * `waystation ls`, `GET /api/tasks` and the host's task list show a task as
 * drifted when one of its recorded artifacts is gone, has another size, or no
 * longer resolves where it may (outside its base, not a regular file). A file
 * rewritten to the same size is beyond what a stat can prove; the full sha256
 * verify (`waystation verify`, opening the task in the app) catches that.
 */
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { artifactBaseDir, checkArtifact } from './verify-task.js';

export interface QuickDriftOptions {
  /** As in VerifyOptions: check absolute artifact paths where they are (default true). */
  allowAbsolute?: boolean;
}

/**
 * Whether any recorded artifact of `cp` visibly no longer matches the disk.
 *
 * Artifacts are checked one after another and the check stops at the first
 * drifted one: callers list many tasks and bound the concurrency across
 * tasks, not within one.
 *
 * @param root the checkpoint directory root (relative artifact paths resolve as in verifyTask).
 */
export async function quickDriftCheck(root: string, cp: CheckpointHead, opts: QuickDriftOptions = {}): Promise<boolean> {
  const artifacts = cp.artifacts ?? [];
  if (artifacts.length === 0) return false;
  const base = artifactBaseDir(root, cp);
  for (const artifact of artifacts) {
    const check = await checkArtifact(base, artifact, opts.allowAbsolute ?? true, false);
    if (check.status !== 'ok') return true;
  }
  return false;
}
