/**
 * What full verifies of an open directory's tasks found drifted: a sha256
 * sees a same-size rewrite that the stat a listing affords cannot. The task
 * view and the task list both ask here, so a row shows the drift its task
 * view shows, at the cost of one map lookup a row and no read of any file.
 */
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import type { VerifyReport } from '../../shared/checkpoint/verify-report.js';

interface Finding {
  version: number;
  /** The artifacts the checkpoint recorded (recordedArtifacts): the finding is about those very files. */
  recorded: string;
  /** What each drifted artifact was found to be: a new finding differs from the last one. */
  signature: string;
}

/** The artifacts a checkpoint records, as a full verify checks them: path, size and hash of each. */
function recordedArtifacts(cp: Pick<CheckpointHead, 'artifacts'>): string {
  return JSON.stringify((cp.artifacts ?? []).map((a) => [a.path, a.size, a.sha256]));
}

/** Task id -> what the last full verify of it found drifted; see the module comment. */
export class VerifiedDrift {
  private readonly found = new Map<string, Finding>();

  /**
   * Whether the last full verify of `taskId` found drift in the checkpoint
   * `cp` is: one at that version recording those very artifacts (another
   * task written under the id is not shown the old one's drift).
   */
  holds(taskId: string, cp: Pick<CheckpointHead, 'version' | 'artifacts'> | null): boolean {
    const finding = this.found.get(taskId);
    return finding !== undefined && cp !== null && finding.version === cp.version && finding.recorded === recordedArtifacts(cp);
  }

  /**
   * Take what a full verify of `cp` found. True when that changes what the
   * task is shown as (drift found anew, found otherwise, or gone), so a
   * verify that finds what the last one found announces nothing.
   */
  note(report: Pick<VerifyReport, 'task_id' | 'version' | 'drift' | 'artifacts'>, cp: Pick<CheckpointHead, 'artifacts'>): boolean {
    const before = this.found.get(report.task_id);
    if (!report.drift) return this.found.delete(report.task_id);
    const signature = report.artifacts
      .filter((a) => a.status !== 'ok')
      .map((a) => `${a.path}\u0000${a.status}\u0000${a.actual?.size ?? ''}\u0000${a.actual?.sha256 ?? ''}`)
      .join('\n');
    const recorded = recordedArtifacts(cp);
    if (before?.version === report.version && before.recorded === recorded && before.signature === signature) return false;
    this.found.set(report.task_id, { version: report.version, recorded, signature });
    return true;
  }
}
