/**
 * The editor for a step's result, failed or done: CodeMirror with JSON syntax
 * and the step's output_schema checked as you type. Save stays disabled while
 * the value is invalid, so nothing is ever written from bad input. When steps
 * after this one ran with the old value, saving asks whether they rerun or
 * stay as they are, naming them, before the one write.
 */
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { EditorView, basicSetup } from 'codemirror';
import { EditorState } from '@codemirror/state';
import { json } from '@codemirror/lang-json';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import type { PlanStep } from '../../../shared/checkpoint/schema.js';
import { validateAgainstSchema } from '../../../shared/checkpoint/output-schema.js';

export interface Validation {
  errors: string[];
  value?: unknown;
}

/** Parse and validate the editor text: JSON syntax first, then the step's schema. */
export function validateEditorText(text: string, schema: unknown): Validation {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { errors: [`Not valid JSON: ${(err as Error).message}`] };
  }
  return { errors: validateAgainstSchema(schema, value), value };
}

/** A starting value that has the schema's shape, for a step that has no result yet. */
export function exampleFor(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props);
      return Object.fromEntries(required.map((k) => [k, exampleFor(props[k])]));
    }
    case 'array':
      return [];
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

interface Props {
  step: PlanStep;
  initial: unknown;
  busy: boolean;
  /** The steps after this one that ran, computed from the old value: saving asks whether they rerun or stay. */
  later?: readonly PlanStep[];
  /** `later` is given when there were later steps to ask about. */
  onSave(value: unknown, later?: 'keep' | 'rerun'): Promise<{ ok: boolean; errors: string[] }>;
  onCancel(): void;
}

export function StepEditor({ step, initial, busy, later = [], onSave, onCancel }: Props) {
  const host = useRef<HTMLDivElement>(null);
  // The task view refreshes on every live event and hands down new (equal) objects;
  // an edit session takes the step as it was when editing began and builds the editor
  // once, so what the user typed survives them. The host validates again on save.
  const [{ schema, label }] = useState(() => ({
    schema: step.output_schema ?? null,
    label: `New result for step ${step.name || step.id}`,
  }));
  const [initialText] = useState(() => JSON.stringify(initial === undefined ? exampleFor(schema) : initial, null, 2));
  const [text, setText] = useState(initialText);
  const [serverErrors, setServerErrors] = useState<string[]>([]);
  const validation = useMemo(() => validateEditorText(text, schema), [text, schema]);

  const focusedOnce = useRef(false);
  useEffect(() => {
    if (!host.current) return;
    const view = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: initialText,
        extensions: [
          basicSetup,
          json(),
          lintGutter(),
          linter(
            (v): Diagnostic[] =>
              validateEditorText(v.state.doc.toString(), schema).errors.map((message) => ({
                from: 0,
                to: v.state.doc.length,
                severity: 'error',
                message,
              })),
            { delay: 150 },
          ),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) {
              setText(u.state.doc.toString());
              setServerErrors([]);
            }
          }),
          EditorView.contentAttributes.of({ 'aria-label': label }),
          // Long values wrap instead of scrolling sideways.
          EditorView.lineWrapping,
        ],
      }),
    });
    // A value taller than the editor scrolls: the scroller itself takes focus, so the keyboard can scroll it too.
    view.scrollDOM.tabIndex = 0;
    // The editor takes the place of the button that opened it: focus goes into it, once, not to the page's start.
    if (!focusedOnce.current) {
      focusedOnce.current = true;
      view.focus();
    }
    return () => view.destroy();
  }, [initialText, schema, label]);

  const errors = serverErrors.length ? serverErrors : validation.errors;
  const valid = validation.errors.length === 0;
  // Save pressed with later steps to ask about: the choice is shown, nothing is written yet.
  const [choosing, setChoosing] = useState(false);
  const laterId = useId();
  const firstChoice = useRef<HTMLButtonElement>(null);
  // The Save button is gone once the choice shows: focus goes to the choice, not to the page's start.
  useEffect(() => {
    if (choosing) firstChoice.current?.focus();
  }, [choosing]);
  const save = async (choice?: 'keep' | 'rerun') => {
    const outcome = await onSave(validation.value, choice);
    if (!outcome.ok) {
      setServerErrors(outcome.errors);
      setChoosing(false);
    }
  };

  return (
    <div className="step-editor">
      <div className="step-editor-head">
        <strong>Edit result of “{step.name || step.id}”</strong>
        {schema ? (
          <span className="muted">validated against the step’s output schema</span>
        ) : (
          <span className="muted">no output schema: any JSON is accepted</span>
        )}
      </div>
      <div ref={host} className="cm-host" />
      <div className="validation" aria-live="polite">
        {errors.length > 0 ? (
          // The alert on a wrapper: a list given another role is no longer a list, and its items then belong to none.
          <div role="alert" aria-label="Validation errors">
            <ul className="error-list">
              {errors.map((e) => (
                <li key={e}>{e}</li>
              ))}
            </ul>
          </div>
        ) : (
          <p className="ok-text" role="status">
            ✓ Valid value
          </p>
        )}
      </div>
      {choosing && valid ? (
        <div className="later-choice" role="group" aria-labelledby={laterId}>
          <p id={laterId}>
            <strong>
              {later.length} later step{later.length === 1 ? '' : 's'} ran with the old value:
            </strong>{' '}
            {later.map((s) => s.name || s.id).join(', ')}. Rerun {later.length === 1 ? 'it' : 'them'} from the new value, or keep{' '}
            {later.length === 1 ? 'it' : 'them'} as {later.length === 1 ? 'it is' : 'they are'}? Side effects they recorded stay done either
            way.
          </p>
          <div className="row-actions">
            <button ref={firstChoice} type="button" className="primary" disabled={busy} onClick={() => void save('rerun')}>
              {busy ? 'Saving…' : 'Save and rerun later steps'}
            </button>
            <button type="button" disabled={busy} onClick={() => void save('keep')}>
              Save and keep later steps
            </button>
            <button type="button" disabled={busy} onClick={() => setChoosing(false)}>
              Back to the value
            </button>
          </div>
        </div>
      ) : (
        <div className="row-actions">
          <button
            type="button"
            className="primary"
            disabled={!valid || busy}
            onClick={() => (later.length > 0 ? setChoosing(true) : void save())}
          >
            {busy ? 'Saving…' : later.length > 0 ? 'Save as new version…' : 'Save as new version'}
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      )}
    </div>
  );
}
