/**
 * Fork a version into a new task: its id (optional: the host makes one up),
 * checked as it is typed, and why, for the fork's history. The task forked
 * from is only read; on success the new task opens.
 */
import { useId, useMemo, useState } from 'react';
import { newTaskIdProblem } from '../../../shared/checkpoint/new-task-id.js';
import { useAppStore } from '../store/app-store.js';
import { ModalDialog } from './modal-dialog.js';
import { DialogActions } from './dialog-actions.js';

interface Props {
  taskId: string;
  /** The version forked; null when the dialog is closed. */
  version: number | null;
  onClose(): void;
}

export function ForkDialog({ taskId, version, onClose }: Props) {
  const titleId = useId();
  return (
    <ModalDialog open={version !== null} labelledBy={titleId} onClose={onClose}>
      {version !== null && <ForkForm taskId={taskId} version={version} titleId={titleId} onClose={onClose} />}
    </ModalDialog>
  );
}

function ForkForm({ taskId, version, titleId, onClose }: { taskId: string; version: number; titleId: string; onClose(): void }) {
  const forkTask = useAppStore((s) => s.forkTask);
  const tasks = useAppStore((s) => s.tasks);
  const busy = useAppStore((s) => Boolean(s.busy[`fork:${taskId}`]));
  const [newId, setNewId] = useState('');
  const [reason, setReason] = useState('');
  const [failure, setFailure] = useState<string | null>(null);
  const idHint = useId();
  const idError = useId();
  const trimmed = newId.trim();
  const problem = useMemo(
    () =>
      trimmed
        ? newTaskIdProblem(
            trimmed,
            tasks.map((t) => t.task_id),
          )
        : null,
    [trimmed, tasks],
  );

  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (problem || busy) return;
        setFailure(null);
        const outcome = await forkTask({ taskId, version, ...(trimmed ? { newTaskId: trimmed } : {}), reason });
        if ('error' in outcome) setFailure(outcome.error);
        else onClose();
      }}
    >
      <h2 id={titleId}>
        Fork {taskId} from version {version}
      </h2>
      <p className="muted small">
        A new task starts from this version’s state, with its own history. {taskId} itself is not changed. Side effects done by then stay
        done in the fork, under the same idempotency keys, so the fork does not repeat them.
      </p>
      <label className="field">
        <span>New task id (optional)</span>
        <input
          value={newId}
          data-autofocus
          onChange={(e) => setNewId(e.target.value)}
          aria-invalid={problem !== null}
          aria-describedby={problem ? idError : idHint}
          spellCheck={false}
          autoComplete="off"
        />
        {problem ? (
          <small id={idError} className="error-text" role="alert">
            {problem}
          </small>
        ) : (
          <small id={idHint} className="muted">
            Leave it empty and one is made from {taskId} and the version.
          </small>
        )}
      </label>
      <label className="field">
        <span>Why (optional, kept in the fork’s history)</span>
        <input value={reason} onChange={(e) => setReason(e.target.value)} autoComplete="off" />
      </label>
      <DialogActions
        failure={failure}
        failureLabel="Why the fork was refused"
        onCancel={onClose}
        submit="Fork"
        busyText="Forking…"
        busy={busy}
        disabled={problem !== null}
      />
    </form>
  );
}
