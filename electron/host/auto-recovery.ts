/**
 * Resuming the interrupted auto-mode tasks of a directory: auto mode promises
 * that such tasks carry on without a human, so the first host to see them
 * after a crash restarts them (confirm mode has their resume plan prepared).
 * A host sees them when it opens the directory, and, while it stays open,
 * when a run it shows running stops with nothing driving it (its runner
 * killed, its machine gone: running-rows.ts).
 */
import type { EventHub } from './event-hub.js';
import type { OpenDirectory } from './open-directory.js';
import { messageOf } from '../../shared/api/error-codes.js';
import { mayNeedRecovery, type TaskSummary } from '../../shared/checkpoint/task-summary.js';

/**
 * How long a run seen to stop is left to the process that drove it before the host resumes it. A supervisor that
 * is alive (`waystation run` in a terminal, another host) resumes its own task in auto mode after a backoff of at
 * most 30 s, holding the lease again; the host steps in only when nothing has.
 */
export const RECOVER_AFTER_MS = 35_000;

type Recover = (root: string, candidates?: readonly string[]) => Promise<void>;

/** Tell subscribers that a recovery stopped, and that what it would have resumed can be resumed by hand. */
function noticeStopped(dir: OpenDirectory, hub: EventHub, err: unknown): void {
  // Recovery is best effort: the tasks stay interrupted and resumable by hand, and the reason is shown.
  hub.publish({
    type: 'directory-notice',
    root: dir.store.root,
    detail: `automatic recovery in ${dir.store.root} stopped: ${messageOf(err)}; interrupted tasks can be resumed by hand`,
  });
}

/**
 * While `dir` is open, recover each run the host saw stop (OpenDirectory.onRunEnded) that may need it
 * (mayNeedRecovery: auto or confirm mode), `afterMs` (and up to a seventh more) after it stopped, when its row
 * still shows it stopped. The runner then checks the task whole, as at start-up: its lease, a stop a person asked
 * for, its attempts left.
 */
export function recoverRunsThatEnd(dir: OpenDirectory, recover: Recover, hub: EventHub, afterMs = RECOVER_AFTER_MS): void {
  const timers = new Map<string, NodeJS.Timeout>();
  const due = (summary: TaskSummary) => {
    timers.delete(summary.location);
    const now = dir.list.summaryAt(summary.location);
    if (!dir.isOpen || !now || now.task_id !== summary.task_id || now.display_status === 'running' || !mayNeedRecovery(now)) return;
    void recover(dir.root, [now.task_id]).catch((err: unknown) => dir.isOpen && noticeStopped(dir, hub, err));
  };
  dir.onRunEnded((summary) => {
    if (!mayNeedRecovery(summary)) return;
    clearTimeout(timers.get(summary.location));
    // Up to a seventh more, drawn: two hosts open on one directory see a run stop within the same pass, and would
    // otherwise both start its resume at once (the lease lets one through; the other's runner says it lost).
    const timer = setTimeout(() => due(summary), afterMs + Math.floor(Math.random() * (afterMs / 7)));
    timer.unref();
    timers.set(summary.location, timer);
  });
  dir.onClosing(async () => {
    for (const timer of timers.values()) clearTimeout(timer);
    timers.clear();
  });
}

/**
 * Start the recovery of `dir`'s interrupted tasks in the background, once the
 * first task list is built (`listed`), and from it: a second listing of a
 * large directory would compete with the first page a user waits for.
 *
 * The runtime's backoff and attempt limits apply, and a task whose
 * verification fails falls back to waiting for a human. Progress reaches
 * subscribers as runner and task events like any other run (see HostRunner.recoverInterrupted); a recovery that
 * stops is announced as a directory notice. Resolves when it has run its course.
 */
export function startRecovery(
  dir: OpenDirectory,
  recover: (root: string, candidates?: readonly string[]) => Promise<void>,
  hub: EventHub,
  listed: Promise<void>,
): Promise<void> {
  return listed
    .then(async () => {
      if (!dir.isOpen) return;
      const candidates = await dir.list.recoveryCandidates();
      await recover(dir.root, candidates);
    })
    .then(
      () => undefined,
      (err: unknown) => noticeStopped(dir, hub, err),
    );
}
