/**
 * The editor for a failed step's result: CodeMirror with JSON syntax and the
 * step's output_schema checked as you type. Save stays disabled while the
 * value is invalid, so nothing is ever written from bad input.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
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
  onSave(value: unknown): Promise<{ ok: boolean; errors: string[] }>;
  onCancel(): void;
}

export function StepEditor({ step, initial, busy, onSave, onCancel }: Props) {
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
        ],
      }),
    });
    return () => view.destroy();
  }, [initialText, schema, label]);

  const errors = serverErrors.length ? serverErrors : validation.errors;
  const valid = validation.errors.length === 0;

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
          <ul role="alert" aria-label="Validation errors" className="error-list">
            {errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        ) : (
          <p className="ok-text" role="status">
            ✓ Valid value
          </p>
        )}
      </div>
      <div className="row-actions">
        <button
          type="button"
          className="primary"
          disabled={!valid || busy}
          onClick={async () => {
            const outcome = await onSave(validation.value);
            if (!outcome.ok) setServerErrors(outcome.errors);
          }}
        >
          {busy ? 'Saving…' : 'Save as new version'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
