// @vitest-environment jsdom
/**
 * An edit is chosen looking at the version the editor was opened on. When
 * another process writes a new version meanwhile, the editor keeps what was
 * typed, the save carries the version it was opened on, and the host's
 * refusal is shown in the editor with nothing written.
 */
import { act } from 'react';
import { afterEach, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { EditorView } from 'codemirror';
import { createAppStore } from '../../renderer/src/store/app-store.js';
import { renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(cleanup);

it('sends the version the editor was opened on, and shows the refusal when the task moved on', async () => {
  const fake = new FakeApi().add(makeCheckpoint('a'));
  const store = createAppStore(fake.api);
  try {
    renderApp(store);
    await act(() => store.getState().init());
    act(() => store.getState().selectTask('a'));
    fireEvent.click(await screen.findByRole('tab', { name: /Plan/ }));
    fireEvent.click(await screen.findByRole('button', { name: 'Edit result of step summarize' }));
    // The editor (CodeMirror) is loaded on first use: the first import takes a moment on a loaded machine.
    const content = await screen.findByRole('textbox', { name: 'New result for step summarize' }, { timeout: 15_000 });
    const view = EditorView.findFromDOM(content)!;
    act(() => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: '{"summary":"typed on v1"}' } }));

    // Another process writes version 2; the step is still failed.
    fake.add(makeCheckpoint('a', { version: 2, phase: 'changed by someone else', source: { kind: 'runtime' } }));
    fake.emit({ type: 'task-changed', taskId: 'a', version: 2 });
    await waitFor(() => expect(store.getState().detail?.version).toBe(2));

    const editor = EditorView.findFromDOM(screen.getByRole('textbox', { name: 'New result for step summarize' }))!;
    expect(editor.state.doc.toString()).toBe('{"summary":"typed on v1"}');
    fireEvent.click(screen.getByRole('button', { name: 'Save as new version' }));
    await waitFor(() => expect(fake.count('editStepResult')).toBe(1));
    expect(fake.calls.find((c) => c.method === 'editStepResult')!.input).toMatchObject({ taskId: 'a', expectedVersion: 1 });
    const alert = await screen.findByRole('alert', { name: 'Validation errors' });
    expect(alert.textContent).toContain('moved on to version 2');
    expect(fake.tasks.get('a')!.map((c) => c.version)).toEqual([1, 2]);
  } finally {
    store.getState().dispose();
  }
});
