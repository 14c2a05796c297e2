/**
 * The rerun from a step, shown before anything is written: the steps set
 * back to pending, the artifacts they write again, and each side effect those
 * steps recorded with the person's choice for it: keep (the default: not
 * performed again, its idempotency key still held) or redo (performed again
 * under a new key). Confirming writes one version; the resume that follows
 * waits for approval in confirm mode like any other.
 */
import { useId, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { RewindDraft } from '../store/store-types.js';
import { useAppStore } from '../store/app-store.js';
import { ModalDialog } from './modal-dialog.js';
import { DialogActions } from './dialog-actions.js';

export function RewindDialog() {
  const rewind = useAppStore((s) => s.rewind);
  const cancel = useAppStore((s) => s.cancelRewind);
  const titleId = useId();
  return (
    <ModalDialog open={rewind !== null} labelledBy={titleId} onClose={cancel} className="dialog-wide">
      {rewind && <RewindForm draft={rewind} titleId={titleId} />}
    </ModalDialog>
  );
}

function RewindForm({ draft, titleId }: { draft: RewindDraft; titleId: string }) {
  const { busy, mode, stepName } = useAppStore(
    useShallow((s) => ({
      busy: Boolean(s.busy[`rewind:${draft.taskId}`] ?? s.busy[`resume:${draft.taskId}`]),
      mode: s.detail?.summary.task_id === draft.taskId ? (s.detail.checkpoint?.recovery.mode ?? null) : null,
      stepName: s.detail?.checkpoint?.plan.find((p) => p.id === draft.stepId)?.name || draft.stepId,
    })),
  );
  const chooseRedo = useAppStore((s) => s.chooseRedo);
  const cancel = useAppStore((s) => s.cancelRewind);
  const confirm = useAppStore((s) => s.confirmRewind);
  const [reason, setReason] = useState('');
  const [resume, setResume] = useState(true);
  const plan = draft.plan;

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy) void confirm({ resume, reason });
      }}
    >
      <h2 id={titleId}>Rerun from “{stepName}”</h2>
      {draft.state === 'loading' && (
        <p role="status" className="muted">
          <span className="spinner" aria-hidden="true" /> Asking the host what a rerun would do…
        </p>
      )}
      {plan && (
        <>
          <p className="muted small">
            Nothing is written until you confirm. The earlier results stay in the history (version {plan.version} and before).
          </p>
          <section aria-labelledby={`${titleId}-steps`}>
            <h3 id={`${titleId}-steps`} className="dialog-section">
              Steps to rerun ({plan.rerun.length})
            </h3>
            <ol className="plain rewind-list" aria-label="Steps to rerun">
              {plan.rerun.map((s) => (
                <li key={s.id}>
                  {s.name || s.id} <span className="muted mono small">{s.id}</span>{' '}
                  <span className="muted small">(was {s.status.replace(/_/g, ' ')})</span>
                </li>
              ))}
            </ol>
          </section>
          <section aria-labelledby={`${titleId}-artifacts`}>
            <h3 id={`${titleId}-artifacts`} className="dialog-section">
              Artifacts these steps recorded ({plan.artifacts.length})
            </h3>
            {plan.artifacts.length === 0 ? (
              <p className="muted small">None: these steps recorded no files.</p>
            ) : (
              // Recorded, not necessarily where the rerun writes: a fork's steps recorded its parent's files.
              <ul className="plain rewind-list" aria-label="Artifacts these steps recorded">
                {plan.artifacts.map((a) => (
                  <li key={a} className="mono small wrap-anywhere">
                    {a}
                  </li>
                ))}
              </ul>
            )}
            {plan.artifacts.length > 0 && <p className="muted small">The rerun records the files it writes in their place.</p>}
          </section>
          <section aria-labelledby={`${titleId}-effects`}>
            <h3 id={`${titleId}-effects`} className="dialog-section">
              Side effects these steps recorded ({plan.effects.length})
            </h3>
            {plan.effects.length === 0 ? (
              <p className="muted small">None: the rerun has nothing outside the task to repeat or keep.</p>
            ) : (
              <>
                <p className="muted small">
                  Kept effects are not performed again: their idempotency keys stay held. Redo performs one again under a new key; choose it
                  only for an effect you want repeated.
                </p>
                {plan.effects.map((e) => {
                  const redo = draft.redo.includes(e.id);
                  const canRedo = e.status === 'done';
                  return (
                    <fieldset key={e.id} className="field-group effect-choice">
                      <legend>
                        {e.type} <span className="mono small">{e.id}</span>{' '}
                        <span className="muted small">
                          in {e.step_id}, {e.status}
                        </span>
                      </legend>
                      <label className="check">
                        <input type="radio" name={`choice-${e.id}`} checked={!redo} onChange={() => chooseRedo(e.id, false)} /> Keep: not
                        performed again (key <span className="mono wrap-anywhere">{e.idempotency_key}</span>)
                      </label>
                      <label className="check">
                        <input
                          type="radio"
                          name={`choice-${e.id}`}
                          checked={redo}
                          disabled={!canRedo}
                          onChange={() => chooseRedo(e.id, true)}
                        />{' '}
                        Redo: perform it again under a new key
                        {!canRedo && <small className="muted"> (only a done effect; an {e.status} one is probed on resume)</small>}
                      </label>
                    </fieldset>
                  );
                })}
              </>
            )}
          </section>
          <label className="field">
            <span>Why (optional, kept in the history)</span>
            <input value={reason} onChange={(e) => setReason(e.target.value)} autoComplete="off" />
          </label>
          <label className="check">
            <input type="checkbox" checked={resume} onChange={(e) => setResume(e.target.checked)} /> Resume at once
            <small className="muted">
              {' '}
              {mode === 'confirm'
                ? '(confirm mode: the resume prepares a plan that waits for approval)'
                : '(otherwise the task waits for Resume)'}
            </small>
          </label>
        </>
      )}
      <DialogActions
        failure={draft.error}
        failureLabel="Why the rerun was refused"
        onCancel={cancel}
        submit={`Rerun ${plan ? plan.rerun.length : ''} step${plan?.rerun.length === 1 ? '' : 's'}`}
        busyText="Working…"
        busy={busy}
        disabled={!plan || draft.state !== 'ready'}
      />
    </form>
  );
}
