// @vitest-environment jsdom
/**
 * The step editor keeps what the user typed while the task view refreshes
 * around it (a live event hands it new, equal step objects), and checks the
 * value against the step's schema as it changes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';
import { cleanup, render, screen, within } from '@testing-library/react';
import { EditorView } from 'codemirror';
import { StepEditor } from '../../renderer/src/components/step-editor.js';
import type { PlanStep } from '../../shared/checkpoint/schema.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(cleanup);

const failedStep = (): PlanStep =>
  ({
    id: 'check',
    name: 'check errors',
    status: 'failed',
    attempts: 1,
    output_schema: { type: 'string', minLength: 1 },
  }) as PlanStep;

function editorView(): EditorView {
  const content = screen.getByRole('textbox', { name: 'New result for step check errors' });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error('no CodeMirror view in the step editor');
  return view;
}

function type(text: string) {
  const view = editorView();
  act(() => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }));
}

describe('the step editor', () => {
  const props = { initial: undefined, busy: false, onSave: async () => ({ ok: true, errors: [] }), onCancel: () => undefined };

  it('keeps the typed value when the task view re-renders it with a new, equal step', () => {
    const { rerender } = render(<StepEditor step={failedStep()} {...props} />);
    const before = editorView();
    type('12345');
    expect(screen.getByRole('alert', { name: 'Validation errors' }).textContent).toMatch(/string/);

    type('"fixed by hand"');
    rerender(<StepEditor step={failedStep()} {...props} />);

    expect(editorView()).toBe(before);
    expect(editorView().state.doc.toString()).toBe('"fixed by hand"');
    expect(screen.getByRole('status').textContent).toContain('Valid value');
    expect((screen.getByRole('button', { name: 'Save as new version' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it("starts from a value of the schema's shape and refuses an empty string", () => {
    render(<StepEditor step={failedStep()} {...props} />);
    expect(editorView().state.doc.toString()).toBe('""');
    expect(screen.getByRole('alert', { name: 'Validation errors' })).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Save as new version' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('takes the focus when it opens, in place of the button that opened it', () => {
    render(<StepEditor step={failedStep()} {...props} />);
    expect(editorView().contentDOM.contains(document.activeElement)).toBe(true);
  });

  it('says what is wrong in an alert holding a list, whose items stay items of a list', () => {
    render(<StepEditor step={failedStep()} {...props} />);
    const alert = screen.getByRole('alert', { name: 'Validation errors' });
    const items = within(within(alert).getByRole('list')).getAllByRole('listitem');
    expect(items.length).toBeGreaterThan(0);
    expect(items[0].textContent).toMatch(/at least 1 character/);
  });
});
