/**
 * The plan as a timeline: one row per step, results on demand, and on every
 * step the ways back: edit its result (the editor), or rerun from it (the
 * rerun's preview, rewind-dialog).
 */
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { Checkpoint, PlanStep } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';
import { StatusBadge } from './status-badge.js';
import { ValueView } from './json-view.js';

// CodeMirror is most of the bundle and only the editor needs it: load it on first edit.
const StepEditor = lazy(() => import('./step-editor.js').then((m) => ({ default: m.StepEditor })));
import { between, formatCount, formatDuration, formatTime } from './format.js';
import { stepEdits, type StepEdit } from '../store/step-edits.js';
import { canRerunFrom, stepsAnEditReruns } from '../store/later-steps.js';
import { StepCalls } from './step-calls.js';

/**
 * `interrupted`: nothing drives the task now (no runner, no live lease), so a step its checkpoint records as
 * running was cut off there, and is shown so rather than as running.
 */
export function PlanTab({
  checkpoint,
  readOnly,
  interrupted = false,
}: {
  checkpoint: Checkpoint;
  readOnly: boolean;
  interrupted?: boolean;
}) {
  const history = useAppStore((s) => s.history);
  const edits = useMemo(() => stepEdits(checkpoint, history), [checkpoint, history]);
  // The version the editor was opened on: the value is chosen looking at it, and the edit is refused if the task moves on.
  const [editing, setEditing] = useState<{ stepId: string; version: number } | null>(null);
  if (checkpoint.plan.length === 0) {
    return <p className="empty-inline">This task has no plan yet: the agent writes it on its first save.</p>;
  }
  return (
    <ol className="timeline" aria-label="Plan steps">
      {checkpoint.plan.map((step, i) => (
        <StepRow
          key={step.id}
          step={step}
          index={i}
          current={i === checkpoint.current_step && checkpoint.status !== 'done'}
          version={checkpoint.version}
          // A halted task stays halted (its resume plan was rejected): fork it to try again.
          editable={!readOnly && checkpoint.status !== 'halted' && step.status !== 'running'}
          rerunnable={!readOnly && canRerunFrom(checkpoint, step.id)}
          editingVersion={editing?.stepId === step.id ? editing.version : null}
          setEditing={(on) => setEditing(on ? { stepId: step.id, version: checkpoint.version } : null)}
          taskId={checkpoint.task_id}
          edit={edits.get(step.id) ?? null}
          checkpoint={checkpoint}
          interrupted={interrupted}
        />
      ))}
    </ol>
  );
}

interface RowProps {
  step: PlanStep;
  index: number;
  current: boolean;
  version: number;
  editable: boolean;
  /** "Rerun from here" is offered: the step or one after it has run. */
  rerunnable: boolean;
  /** The version the step's editor was opened on; null when it is not being edited. */
  editingVersion: number | null;
  setEditing(on: boolean): void;
  taskId: string;
  /** The last time a person edited this step's result, if one did. */
  edit: StepEdit | null;
  checkpoint: Checkpoint;
  interrupted: boolean;
}

function StepRow({
  step,
  index,
  current,
  version,
  editable,
  rerunnable,
  editingVersion,
  setEditing,
  taskId,
  edit,
  checkpoint,
  interrupted,
}: RowProps) {
  const [open, setOpen] = useState(false);
  const [callsOpen, setCallsOpen] = useState(false);
  const callCount = (checkpoint.run.llm_calls ?? []).filter((c) => c.step_id === step.id).length;
  const editing = editingVersion !== null;
  const key = `${version}:${step.id}`;
  // While editing, the value shown is the one of the version the editor was opened on, whatever arrives since.
  const editKey = `${editingVersion ?? version}:${step.id}`;
  const { result, editResult, busy } = useAppStore(
    useShallow((s) => ({ result: s.stepResults[key], editResult: s.stepResults[editKey], busy: Boolean(s.busy[`edit:${taskId}`]) })),
  );
  const loadStepResult = useAppStore((s) => s.loadStepResult);
  const focusHere = useAppStore((s) => s.stepFocus?.taskId === taskId && s.stepFocus.stepId === step.id);
  const clearStepFocus = useAppStore((s) => s.clearStepFocus);
  const row = useRef<HTMLLIElement>(null);
  useEffect(() => {
    // A link named this step (the overview's slowest steps): it is brought into view and takes the focus, once.
    if (!focusHere || !row.current) return;
    row.current.scrollIntoView?.({ block: 'center' });
    row.current.focus();
    clearStepFocus();
  }, [focusHere, clearStepFocus]);
  const cutOff = interrupted && step.status === 'running';
  const editStep = useAppStore((s) => s.editStep);
  const previewRewind = useAppStore((s) => s.previewRewind);
  const hasResult = step.result_ref != null || step.result !== undefined;
  const duration = step.elapsed_ms ?? between(step.started_at, step.finished_at);
  // Every row has the same buttons: the step's name tells them apart for a screen reader.
  const stepLabel = step.name || step.id;

  const toggle = () => {
    if (!open) void loadStepResult(step.id, version);
    setOpen(!open);
  };
  const startEdit = () => {
    void loadStepResult(step.id, version);
    setEditing(true);
  };

  return (
    <li
      ref={row}
      id={stepRowId(step.id)}
      tabIndex={-1}
      className={`step status-${cutOff ? 'interrupted' : step.status}${current ? ' current' : ''}`}
      aria-current={current ? 'step' : undefined}
    >
      <div className="step-marker" aria-hidden="true">
        {index + 1}
      </div>
      <div className="step-body">
        <div className="step-head">
          {cutOff ? (
            <span title="Recorded as running when the run stopped: nothing drives the task now. Resume runs this step again.">
              <StatusBadge status="interrupted" />
            </span>
          ) : (
            <StatusBadge status={step.status} />
          )}
          <span className="step-name">{step.name || step.id}</span>
          <span className="muted mono">{step.id}</span>
          {current && <span className="tag accent">current</span>}
          {edit && (
            <span className="tag run" title={`result set by hand in version ${edit.version}, ${formatTime(edit.at)}`}>
              ✎ edited{edit.actor ? ` by ${edit.actor}` : ' by a person'} (v{edit.version})
            </span>
          )}
          <span className="spacer" />
          <span className="metric" aria-label={`${step.attempts ?? 0} attempts`}>
            ↻ {step.attempts ?? 0}
          </span>
          <span className="metric" aria-label={`duration ${formatDuration(duration)}`}>
            {formatDuration(duration)}
          </span>
          <span className="metric" aria-label={`tokens in ${formatCount(step.tokens_in)}, out ${formatCount(step.tokens_out)}`}>
            {formatCount(step.tokens_in)} → {formatCount(step.tokens_out)} tok
          </span>
        </div>
        {step.error && (
          <p className="step-error" role="note" aria-label={`Error of step ${stepLabel}`}>
            <strong>{step.error.kind ?? 'error'}:</strong> {step.error.message}
          </p>
        )}
        <div className="row-actions">
          {hasResult && (
            <button
              type="button"
              className="link"
              aria-expanded={open}
              aria-label={`${open ? 'Hide' : 'Show'} result of step ${stepLabel}`}
              onClick={toggle}
            >
              {open ? 'Hide result' : 'Show result'}
            </button>
          )}
          {callCount > 0 && (
            <button
              type="button"
              className="link"
              aria-expanded={callsOpen}
              aria-label={`${callsOpen ? 'Hide' : 'Show'} model calls of step ${stepLabel}`}
              onClick={() => setCallsOpen(!callsOpen)}
            >
              {callsOpen ? 'Hide model calls' : `Model calls (${callCount})`}
            </button>
          )}
          {editable && !editing && (
            <button type="button" className="accent-button" aria-label={`Edit result of step ${stepLabel}`} onClick={startEdit}>
              Edit result
            </button>
          )}
          {rerunnable && (
            <button
              type="button"
              className="link"
              aria-haspopup="dialog"
              aria-label={`Rerun from here: step ${stepLabel}`}
              onClick={() => void previewRewind(taskId, step.id)}
            >
              Rerun from here
            </button>
          )}
        </div>
        {callsOpen && <StepCalls checkpoint={checkpoint} step={step} />}
        {open && (
          <div className="step-result">
            {!result || result.state === 'loading' ? (
              <p role="status" className="muted">
                <span className="spinner" aria-hidden="true" /> Loading result…
              </p>
            ) : result.state === 'error' ? (
              <p role="alert" className="error-text">
                Could not load the result: {result.error}
              </p>
            ) : result.found ? (
              <ValueView value={result.value} label={`Result of step ${stepLabel}`} />
            ) : (
              <p className="muted">No stored result for this step.</p>
            )}
          </div>
        )}
        {editingVersion !== null &&
          (editResult?.state === 'ready' || editResult?.state === 'error' || !hasResult ? (
            <Suspense
              fallback={
                <p role="status" className="muted">
                  <span className="spinner" aria-hidden="true" /> Loading the editor…
                </p>
              }
            >
              <StepEditor
                step={step}
                initial={editResult?.found ? editResult.value : undefined}
                busy={busy}
                later={stepsAnEditReruns(checkpoint, step.id)}
                onCancel={() => setEditing(false)}
                onSave={async (value, later) => {
                  const outcome = await editStep(taskId, step.id, value, editingVersion, later);
                  if (outcome.ok) setEditing(false);
                  return outcome;
                }}
              />
            </Suspense>
          ) : (
            <p role="status" className="muted">
              <span className="spinner" aria-hidden="true" /> Loading the current value…
            </p>
          ))}
      </div>
    </li>
  );
}

/** The DOM id of a step's row: a link to a step finds it by this. */
export const stepRowId = (stepId: string) => `plan-step-${stepId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
