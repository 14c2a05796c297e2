/**
 * Stopping a running task from its header, and who stopped it once it has.
 *
 * The first press asks the runner to stop at its next safe boundary (before
 * a step starts or an effect's intent is recorded): it saves and lets the
 * task go. While it has not yet, the button offers Force stop, which ends the
 * runner's process at once; an effect it had in flight is then probed on resume.
 */
import { useId } from 'react';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';
import { formatRelative, formatTime } from './format.js';

/** Stop, then Force stop while the run has not stopped yet; `blocked`: why it cannot be asked now (the host out of reach). */
export function StopButton({ taskId, blocked = null }: { taskId: string; blocked?: string | null }) {
  const asked = useAppStore((s) => s.stopRequests[taskId] ?? null);
  const busy = useAppStore((s) => Boolean(s.busy[`stop:${taskId}`]));
  const stopTask = useAppStore((s) => s.stopTask);
  const noteId = useId();
  const force = asked !== null;
  return (
    <>
      {asked && (
        <span id={noteId} className="muted small stop-asked" role="status">
          {asked.forced
            ? 'Ending the run’s process…'
            : 'Stop asked: the run stops at its next step or side effect. Force stop ends its process now.'}
        </span>
      )}
      {!asked?.forced && (
        <button
          type="button"
          className="danger"
          disabled={busy || blocked !== null}
          aria-busy={busy}
          aria-describedby={asked ? noteId : undefined}
          title={
            blocked ??
            (force
              ? 'End the runner’s process now: a side effect in flight is recorded as uncertain and probed on resume'
              : 'Stop at the next step or side effect: the task saves and can be resumed later')
          }
          onClick={() => void stopTask(taskId, force ? { force: true } : {})}
        >
          {busy ? 'Stopping…' : force ? '■ Force stop' : '■ Stop'}
        </button>
      )}
    </>
  );
}

/** Who stopped the task, when and why, as the version records it. */
export function StoppedNote({ stopped }: { stopped: NonNullable<Checkpoint['recovery']['stopped']> }) {
  return (
    <p className="stopped-note" role="note" aria-label="Stopped by a person">
      <span className="badge tone-warn">
        <span className="badge-icon" aria-hidden="true">
          ■
        </span>
        Stopped
      </span>{' '}
      by <strong>{stopped.by}</strong>{' '}
      <time dateTime={stopped.at} title={formatTime(stopped.at)}>
        {formatRelative(stopped.at)}
      </time>
      {stopped.reason && <span className="decision-reason">: “{stopped.reason}”</span>}
      <span className="muted small"> · nothing resumes it by itself; Resume continues it</span>
    </p>
  );
}

/**
 * A fork made from a version mid-run that nothing has run yet: held for a person, not stopped by one. No host
 * resumes it by itself (isUntouchedFork), and it carries no stop, so Stop records one of its own.
 */
export function HeldForkNote({
  forkedFrom,
  by,
  at,
}: {
  forkedFrom: NonNullable<Checkpoint['forked_from']>;
  by: string | undefined;
  at: string;
}) {
  return (
    <p className="stopped-note" role="note" aria-label="Held after a fork">
      <span className="badge tone-warn">Held</span> forked from <strong>{forkedFrom.task_id}</strong> at version {forkedFrom.version}
      {by && (
        <>
          {' '}
          by <strong>{by}</strong>
        </>
      )}{' '}
      <time dateTime={at} title={formatTime(at)}>
        {formatRelative(at)}
      </time>
      <span className="muted small"> · nothing resumes it by itself; Resume continues it from there</span>
    </p>
  );
}
