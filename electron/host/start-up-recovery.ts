/**
 * Resuming the interrupted auto-mode tasks of a directory just opened: auto
 * mode promises that such tasks carry on without a human, so the first host
 * to see them after a crash restarts them.
 */
import type { EventHub } from './event-hub.js';
import type { OpenDirectory } from './open-directory.js';
import { messageOf } from '../../shared/api/error-codes.js';

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
      (err: unknown) => {
        // Recovery is best effort: the tasks stay interrupted and resumable by hand, and the reason is shown.
        hub.publish({
          type: 'directory-notice',
          root: dir.store.root,
          detail: `automatic recovery in ${dir.store.root} stopped: ${messageOf(err)}; interrupted tasks can be resumed by hand`,
        });
      },
    );
}
