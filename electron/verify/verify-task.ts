/**
 * Check a checkpoint against the world before anyone trusts or resumes it: are
 * the recorded artifacts still there and unchanged, which side effects may or
 * may not have happened, does the checkpoint agree with itself.
 *
 * Verification only reads. It never repairs, probes remote systems or writes.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { ArtifactHead, CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { checkInvariants } from '../../shared/checkpoint/invariants.js';
import type { Problem } from '../../shared/checkpoint/problem.js';
import type { TaskFormat } from '../../shared/checkpoint/task-summary.js';
import type { ArtifactCheck, UncertainEffect, VerifyReport } from '../../shared/checkpoint/verify-report.js';
import { mapLimit } from '../store/directory-scan.js';

export interface VerifyOptions {
  /** The task's folder or file relative to the root (a TaskEntry's `location`), for problem file names. Default: the task id. */
  location?: string;
  /**
   * Check absolute artifact paths where they are (default true). Agents write to
   * their own output folders, which are often outside the checkpoint directory;
   * a host serving a directory it does not trust can turn this off, and then an
   * absolute path outside the base is reported `outside-root`.
   */
  allowAbsolute?: boolean;
  /** Where the checkpoint came from (a TaskEntry's `format`); article formats hold their history inline. Default `waystation`. */
  format?: TaskFormat;
  /** How many artifacts are hashed at once. Default 4. */
  concurrency?: number;
}

/**
 * The directory relative artifact paths are resolved against.
 *
 * The agent's `project_root` when the checkpoint names one (itself resolved
 * against the checkpoint directory root when relative), otherwise the
 * checkpoint directory root: an agent without a project writes its outputs
 * next to its tasks, and both article formats record paths relative to the
 * folder the agent ran in.
 */
export function artifactBaseDir(root: string, cp: CheckpointHead): string {
  const projectRoot = cp.agent?.project_root;
  return projectRoot ? path.resolve(root, projectRoot) : path.resolve(root);
}

/** The checkpoint file of a task location: a legacy task is a `.json` file itself, a native task a folder. */
export function checkpointFileOf(location: string): string {
  return location.endsWith('.json') ? location : `${location}/checkpoint.json`;
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function code(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/** A file's sha256 and size, streamed: an artifact of gigabytes is hashed in bounded memory. */
export async function sha256File(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/**
 * Compare one artifact with the disk.
 *
 * Rule for where an artifact may be: a relative path promises to stay inside
 * the base directory, so one that leaves it, lexically (`..`) or through a
 * symlink, is reported `outside-root` and nothing outside is read. An absolute
 * path names its location explicitly and is checked there (see
 * `allowAbsolute`). The file that is hashed is the resolved real path, so a
 * symlink swapped after the check cannot redirect the read.
 *
 * With `hash` false only metadata is read: an artifact of the recorded size
 * counts as `ok` (see quickDriftCheck).
 */
export async function checkArtifact(base: string, artifact: ArtifactHead, allowAbsolute = true, hash = true): Promise<ArtifactCheck> {
  const expected = { sha256: artifact.sha256, size: artifact.size };
  const result = (
    status: ArtifactCheck['status'],
    message: string,
    resolved: string | null,
    actual: ArtifactCheck['actual'] = null,
  ): ArtifactCheck => ({
    path: artifact.path,
    type: artifact.type,
    resolved_path: resolved,
    status,
    expected,
    actual,
    message,
  });
  const absolute = path.isAbsolute(artifact.path);
  const confined = !absolute || !allowAbsolute;
  const resolved = path.resolve(base, artifact.path);
  if (confined && !isInside(base, resolved)) {
    return result('outside-root', `${artifact.path} leads outside ${base}; it was not read`, null);
  }
  const deleted = artifact.status === 'deleted';

  let real: string;
  try {
    real = await fsp.realpath(resolved);
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') {
      return deleted
        ? result('ok', 'recorded as deleted, and absent', resolved)
        : result('missing', `${artifact.path} is not on disk (looked at ${resolved})`, resolved);
    }
    return result('unreadable', `${artifact.path} cannot be resolved: ${(err as Error).message}`, resolved);
  }
  if (confined) {
    // The base itself may sit behind a symlink (a temp dir, a mounted volume); compare real to real.
    const realBase = await fsp.realpath(base).catch(() => base);
    if (!isInside(realBase, real)) {
      return result(
        'outside-root',
        `${artifact.path} is a symlink (or inside one) that leads to ${real}, outside ${base}; it was not read`,
        null,
      );
    }
  }

  let stats;
  try {
    stats = await fsp.stat(real);
  } catch (err) {
    return result('unreadable', `${artifact.path} cannot be read: ${(err as Error).message}`, resolved);
  }
  if (!stats.isFile()) return result('unreadable', `${artifact.path} is not a regular file`, resolved);
  if (deleted) {
    return result('modified', `${artifact.path} is recorded as deleted but is on disk (${stats.size} bytes)`, resolved, {
      sha256: null,
      size: stats.size,
    });
  }
  // A different size already proves a change; hashing a large file to learn nothing more is skipped.
  if (stats.size !== artifact.size) {
    return result('modified', `${artifact.path} is ${stats.size} bytes, ${artifact.size} were recorded`, resolved, {
      sha256: null,
      size: stats.size,
    });
  }
  // Without hashing (listings), a matching size is all a stat can tell; the full verify reads the content.
  if (!hash) return result('ok', 'matches the recorded size (content not hashed)', resolved, { sha256: null, size: stats.size });
  let actual;
  try {
    actual = await sha256File(real);
  } catch (err) {
    return result('unreadable', `${artifact.path} cannot be read: ${(err as Error).message}`, resolved);
  }
  if (actual.sha256 !== artifact.sha256) {
    return result(
      'modified',
      `${artifact.path} has changed: sha256 ${actual.sha256.slice(0, 12)}…, ${artifact.sha256.slice(0, 12)}… was recorded`,
      resolved,
      actual,
    );
  }
  return result('ok', 'matches the recorded size and sha256', resolved, actual);
}

/** Side effects whose outcome is unknown: an intent was recorded and no outcome, or the runtime marked them uncertain. */
export function uncertainEffects(cp: Checkpoint): UncertainEffect[] {
  return (cp.side_effects ?? [])
    .filter((e) => e.status === 'intent' || e.status === 'uncertain')
    .map((e) => ({
      id: e.id,
      type: e.type,
      status: e.status,
      idempotency_key: e.idempotency_key,
      step_id: e.step_id ?? null,
      message:
        e.status === 'intent'
          ? `intent recorded but no outcome: ${e.type} (key ${e.idempotency_key}) may or may not have happened; probe before retrying`
          : `outcome uncertain${e.reconciliation ? ` (${e.reconciliation})` : ''}: probe ${e.type} with key ${e.idempotency_key} before retrying`,
    }));
}

/**
 * Verify a checkpoint against the disk.
 *
 * Relative artifact paths resolve against {@link artifactBaseDir}. The report is
 * `ok` only when every artifact matches, no side effect is uncertain and the
 * checkpoint's invariants hold: that is, when a resume needs no human look.
 *
 * @param root the checkpoint directory root.
 */
export async function verifyTask(root: string, cp: Checkpoint, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const base = artifactBaseDir(root, cp);
  const artifacts = await mapLimit(cp.artifacts ?? [], opts.concurrency ?? 4, (a) => checkArtifact(base, a, opts.allowAbsolute ?? true));
  const uncertain = uncertainEffects(cp);
  const invariant_problems = checkInvariants(cp, checkpointFileOf(opts.location ?? cp.task_id), {
    legacy: (opts.format ?? 'waystation') !== 'waystation',
  });
  const drift = artifacts.some((a) => a.status !== 'ok');
  return {
    task_id: cp.task_id,
    version: cp.version,
    base_dir: base,
    ok: !drift && uncertain.length === 0 && invariant_problems.length === 0,
    drift,
    artifacts,
    uncertain_effects: uncertain,
    invariant_problems,
  };
}

/**
 * The report with the task's version-numbering problems among its invariants:
 * a checkpoint.json that claims a version no file holds, a version file that
 * holds another version, a gap. The checkpoint verified can be whole while its
 * history contradicts itself, and verify is where a person looks for that.
 */
export function withNumberingProblems<R extends VerifyReport>(report: R, problems: readonly Problem[]): R {
  const numbering = problems.filter((p) => p.reason === 'invariant' || p.reason === 'missing-version');
  const known = new Set(report.invariant_problems.map((p) => `${p.file}\u0000${p.message}`));
  const added = numbering.filter((p) => !known.has(`${p.file}\u0000${p.message}`));
  if (added.length === 0) return report;
  return { ...report, ok: false, invariant_problems: [...added, ...report.invariant_problems] };
}
