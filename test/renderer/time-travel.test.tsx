// @vitest-environment jsdom
/**
 * Going back from the inspector: Stop (then Force stop) on a running task,
 * Fork from a version, Rerun from a step with its preview and a keep/redo
 * choice per side effect, and Edit result on a done step with the choice of
 * what happens to the steps after it. Nothing is sent that writes until the
 * person confirms; the store logic first, then the controls as a person uses them.
 */
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { EditorView } from 'codemirror';
import { ApiError } from '../../shared/api/api-error.js';
import type { Checkpoint, CheckpointInput } from '../../shared/checkpoint/schema.js';
import { toTaskSummary } from '../../shared/checkpoint/task-summary.js';
import { forkChildren, forkParent } from '../../renderer/src/store/fork-links.js';
import { canRerunFrom, stepsAnEditReruns } from '../../renderer/src/store/later-steps.js';
import { disposeStores, newStore, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(disposeStores);

/** A summariser that ran to done: two summaries, then a publish recorded as a side effect. */
function doneTask(taskId: string, overrides: Partial<CheckpointInput> = {}): Checkpoint {
  return makeCheckpoint(taskId, {
    status: 'done',
    current_step: 3,
    total_steps: 3,
    plan: [
      { id: 'summarize:a.md', name: 'summarize a.md', status: 'done', attempts: 1 },
      { id: 'summarize:b.md', name: 'summarize b.md', status: 'done', attempts: 1 },
      {
        id: 'publish-index',
        name: 'write and publish the index',
        status: 'done',
        attempts: 1,
        output_schema: { type: 'object', required: ['index_path'], properties: { index_path: { type: 'string' } } },
      },
    ],
    artifacts: [
      { type: 'summary', path: 'outputs/a.summary.md', sha256: 'a'.repeat(64), size: 10, step_id: 'summarize:a.md' },
      { type: 'index', path: 'outputs/index.json', sha256: 'b'.repeat(64), size: 10, step_id: 'publish-index' },
    ],
    side_effects: [
      { id: 'effect-1', type: 'http-publish', status: 'done', idempotency_key: `${taskId}:publish-index`, step_id: 'publish-index' },
    ],
    ...overrides,
  });
}

const inputOf = (fake: FakeApi, method: string) => fake.calls.filter((c) => c.method === method).map((c) => c.input);

describe('what going back touches, as the plan shows it', () => {
  it('names the later steps an edit would rerun: those that ran, not those still pending', () => {
    const cp = makeCheckpoint('t', {
      plan: [
        { id: 'a', name: 'a', status: 'done' },
        { id: 'b', name: 'b', status: 'done' },
        { id: 'c', name: 'c', status: 'failed' },
        { id: 'd', name: 'd', status: 'pending' },
      ],
    });
    expect(stepsAnEditReruns(cp, 'a').map((s) => s.id)).toEqual(['b', 'c']);
    expect(stepsAnEditReruns(cp, 'c')).toEqual([]);
    expect(stepsAnEditReruns(cp, 'nope')).toEqual([]);
  });

  it('offers a rerun from a step only when it or a later one ran, and never on a halted task', () => {
    const cp = makeCheckpoint('t', {
      plan: [
        { id: 'a', name: 'a', status: 'done' },
        { id: 'b', name: 'b', status: 'pending' },
      ],
    });
    expect(canRerunFrom(cp, 'a')).toBe(true);
    expect(canRerunFrom(cp, 'b')).toBe(false);
    expect(canRerunFrom({ ...cp, status: 'halted' }, 'a')).toBe(false);
  });

  it('links a fork to its parent, and a task to its forks from the list rows', () => {
    const child = makeCheckpoint('child', { forked_from: { task_id: 'parent', version: 2 } });
    expect(forkParent(child)).toEqual({ task_id: 'parent', version: 2 });
    expect(forkParent(makeCheckpoint('plain'))).toBeNull();
    const row = (cp: Checkpoint) =>
      toTaskSummary({ task_id: cp.task_id, location: cp.task_id, format: 'waystation', checkpoint: cp, read_only: false, problems: [] });
    const rows = [
      row(makeCheckpoint('parent')),
      row(makeCheckpoint('late', { forked_from: { task_id: 'parent', version: 5 } })),
      row(child),
      row(makeCheckpoint('other', { forked_from: { task_id: 'elsewhere', version: 1 } })),
    ];
    expect(forkChildren('parent', rows)).toEqual([
      { task_id: 'child', version: 2 },
      { task_id: 'late', version: 5 },
    ]);
    expect(forkChildren('child', rows)).toEqual([]);
  });
});

describe('the store, going back', () => {
  it('asks a run to stop, offers force next, and forgets the stop once the run has ended', async () => {
    const fake = new FakeApi().add(makeCheckpoint('r', { status: 'running' }));
    const store = newStore(fake.api);
    await store.getState().init();
    fake.emit({ type: 'runner', taskId: 'r', state: 'started', detail: '' });
    expect(await store.getState().stopTask('r')).toBe(true);
    expect(store.getState().stopRequests.r).toMatchObject({ forced: false });
    expect(await store.getState().stopTask('r', { force: true })).toBe(true);
    expect(inputOf(fake, 'stopTask')).toEqual([{ taskId: 'r' }, { taskId: 'r', force: true }]);
    expect(store.getState().stopRequests.r).toMatchObject({ forced: true });
    fake.emit({ type: 'runner', taskId: 'r', state: 'exited', detail: 'stopped' });
    expect(store.getState().stopRequests.r).toBeUndefined();
  });

  it('records no stop to force when the run ended before the answer came', async () => {
    const fake = new FakeApi().add(makeCheckpoint('r', { status: 'running' }));
    const store = newStore(fake.api);
    await store.getState().init();
    // No runner of this host drives it, and no lease is held: the stop was recorded, and nothing runs to force.
    expect(await store.getState().stopTask('r')).toBe(true);
    expect(inputOf(fake, 'stopTask')).toEqual([{ taskId: 'r' }]);
    expect(store.getState().stopRequests).toEqual({});
  });

  it('says why a stop was refused, and records no stop', async () => {
    const fake = new FakeApi().add(makeCheckpoint('r'));
    fake.api.stopTask = async () => {
      throw new ApiError('invalid-input', 'task r is not running (it is failed); there is nothing to stop');
    };
    const store = newStore(fake.api);
    await store.getState().init();
    expect(await store.getState().stopTask('r')).toBe(false);
    expect(store.getState().stopRequests).toEqual({});
    expect(store.getState().notices.at(-1)).toMatchObject({ kind: 'error', text: expect.stringContaining('nothing to stop') });
  });

  it('previews a rerun, writes nothing until confirmed, then rewinds with the effects chosen for redo at the version shown', async () => {
    const fake = new FakeApi().add(doneTask('s'));
    const store = newStore(fake.api);
    await store.getState().init();
    await store.getState().previewRewind('s', 'summarize:b.md');
    const draft = store.getState().rewind!;
    expect(draft.state).toBe('ready');
    expect(draft.plan!.rerun.map((s) => s.id)).toEqual(['summarize:b.md', 'publish-index']);
    expect(draft.plan!.artifacts).toEqual(['outputs/index.json']);
    expect(draft.plan!.effects.map((e) => [e.id, e.choice])).toEqual([['effect-1', 'keep']]);
    expect(draft.redo).toEqual([]);

    store.getState().chooseRedo('effect-1', true);
    expect(store.getState().rewind!.redo).toEqual(['effect-1']);
    store.getState().chooseRedo('effect-1', false);
    store.getState().chooseRedo('effect-1', true);
    store.getState().chooseRedo('no-such-effect', true);
    expect(store.getState().rewind!.redo).toEqual(['effect-1']);
    expect(fake.count('rewindTask')).toBe(0);

    expect(await store.getState().confirmRewind({ resume: true, reason: ' try again ' })).toBe(true);
    expect(inputOf(fake, 'rewindTask')).toEqual([
      { taskId: 's', stepId: 'summarize:b.md', redo: ['effect-1'], expectedVersion: 1, reason: 'try again' },
    ]);
    expect(inputOf(fake, 'resumeTask')).toEqual([{ taskId: 's' }]);
    expect(store.getState().rewind).toBeNull();
  });

  it('keeps every effect when none is chosen, and a cancelled preview sends nothing that writes', async () => {
    const fake = new FakeApi().add(doneTask('s'));
    const store = newStore(fake.api);
    await store.getState().init();
    await store.getState().previewRewind('s', 'summarize:a.md');
    store.getState().cancelRewind();
    expect(store.getState().rewind).toBeNull();
    expect(fake.count('rewindTask')).toBe(0);

    await store.getState().previewRewind('s', 'summarize:a.md');
    expect(await store.getState().confirmRewind()).toBe(true);
    expect(inputOf(fake, 'rewindTask')).toEqual([{ taskId: 's', stepId: 'summarize:a.md', redo: [], expectedVersion: 1 }]);
    // Without `resume` the task waits for the person's Resume.
    expect(fake.count('resumeTask')).toBe(0);
  });

  it('will not redo an effect that is not done: an uncertain one is probed on resume', async () => {
    const fake = new FakeApi().add(
      doneTask('u', {
        side_effects: [
          { id: 'effect-1', type: 'http-publish', status: 'uncertain', idempotency_key: 'u:publish', step_id: 'publish-index' },
        ],
      }),
    );
    const store = newStore(fake.api);
    await store.getState().init();
    await store.getState().previewRewind('u', 'publish-index');
    store.getState().chooseRedo('effect-1', true);
    expect(store.getState().rewind!.redo).toEqual([]);
  });

  it('shows the plan as it stands now when the task moved on, the choices kept, and writes nothing', async () => {
    const fake = new FakeApi().add(doneTask('s'));
    const store = newStore(fake.api);
    await store.getState().init();
    await store.getState().previewRewind('s', 'publish-index');
    store.getState().chooseRedo('effect-1', true);
    fake.add(doneTask('s', { version: 2 }));
    fake.api.rewindTask = async (i) => {
      throw new ApiError('conflict', `task s moved on to version 2 since version ${i.expectedVersion} was shown`);
    };
    expect(await store.getState().confirmRewind({ resume: true })).toBe(false);
    const draft = store.getState().rewind!;
    expect(draft.error).toContain('moved on to version 2');
    expect(draft.plan!.version).toBe(2);
    expect(draft.redo).toEqual(['effect-1']);
    expect(fake.count('resumeTask')).toBe(0);
  });

  it('forks a version and opens the new task; a refusal comes back as a sentence for the dialog', async () => {
    const fake = new FakeApi().add(doneTask('p'));
    const store = newStore(fake.api);
    await store.getState().init();
    fake.add(
      doneTask('p-b', { forked_from: { task_id: 'p', version: 1 }, source: { kind: 'fork', forked_from: { task_id: 'p', version: 1 } } }),
    );
    expect(await store.getState().forkTask({ taskId: 'p', version: 1, newTaskId: 'p-b', reason: '' })).toEqual({ taskId: 'p-b' });
    expect(inputOf(fake, 'forkTask')).toEqual([{ taskId: 'p', version: 1, newTaskId: 'p-b' }]);
    expect(store.getState().selectedTaskId).toBe('p-b');

    fake.api.forkTask = async () => {
      throw new ApiError('conflict', 'task p-b already exists; nothing was written');
    };
    expect(await store.getState().forkTask({ taskId: 'p', version: 1, newTaskId: 'p-b' })).toEqual({
      error: 'task p-b already exists; nothing was written',
    });
  });
});

describe('the controls, going back', () => {
  async function openTask(fake: FakeApi, taskId: string) {
    const store = newStore(fake.api);
    renderApp(store);
    await act(() => store.getState().init());
    act(() => store.getState().selectTask(taskId));
    await screen.findByRole('article', { name: new RegExp(`^Task `) });
    return store;
  }

  it('shows Stop on a running task, then Force stop, and who stopped it once it stopped', async () => {
    const fake = new FakeApi().add(makeCheckpoint('r', { status: 'running' }));
    const store = await openTask(fake, 'r');
    expect(screen.queryByRole('button', { name: /Stop/ })).toBeNull();
    act(() => fake.emit({ type: 'runner', taskId: 'r', state: 'started', detail: '' }));
    fireEvent.click(await screen.findByRole('button', { name: '■ Stop' }));
    const force = await screen.findByRole('button', { name: '■ Force stop' });
    expect(document.getElementById(force.getAttribute('aria-describedby')!)?.textContent).toContain('Stop asked');
    fireEvent.click(force);
    await waitFor(() => expect(inputOf(fake, 'stopTask')).toEqual([{ taskId: 'r' }, { taskId: 'r', force: true }]));

    fake.add(
      makeCheckpoint('r', {
        version: 2,
        status: 'running',
        recovery: { mode: 'manual', stopped: { by: 'ada', at: new Date().toISOString(), reason: 'wrong input' } },
        source: { kind: 'stop', actor: 'ada' },
      }),
    );
    act(() => fake.emit({ type: 'runner', taskId: 'r', state: 'exited', detail: 'stopped' }));
    const note = await screen.findByRole('note', { name: 'Stopped by a person' });
    expect(note.textContent).toContain('by ada');
    expect(note.textContent).toContain('wrong input');
    expect(screen.queryByRole('button', { name: /Stop/ })).toBeNull();
    expect(store.getState().stopRequests).toEqual({});
  });

  it('offers Rerun from here and Edit result on done steps, and the preview lists steps, artifacts and a keep/redo choice per effect', async () => {
    const fake = new FakeApi().add(doneTask('s'));
    await openTask(fake, 's');
    fireEvent.click(await screen.findByRole('tab', { name: /Plan/ }));
    for (const name of ['summarize a.md', 'summarize b.md', 'write and publish the index']) {
      expect(screen.getByRole('button', { name: `Edit result of step ${name}` })).toBeTruthy();
      expect(screen.getByRole('button', { name: `Rerun from here: step ${name}` })).toBeTruthy();
    }
    // Cancelled: nothing sent, and focus back on the button that opened it.
    const opener = screen.getByRole('button', { name: 'Rerun from here: step summarize b.md' });
    opener.focus();
    fireEvent.click(opener);
    let dialog = await screen.findByRole('dialog', { name: 'Rerun from “summarize b.md”' });
    await within(dialog).findByRole('list', { name: 'Steps to rerun' });
    expect(dialog.contains(document.activeElement)).toBe(true);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(document.activeElement).toBe(opener);
    expect(fake.count('rewindTask')).toBe(0);

    fireEvent.click(opener);
    dialog = await screen.findByRole('dialog', { name: 'Rerun from “summarize b.md”' });
    await within(dialog).findByRole('list', { name: 'Steps to rerun' });
    expect(
      within(dialog)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(expect.arrayContaining([expect.stringContaining('summarize b.md'), expect.stringContaining('outputs/index.json')]));
    const keep = within(dialog).getByRole('radio', { name: /^Keep: not performed again/ }) as HTMLInputElement;
    const redo = within(dialog).getByRole('radio', { name: /^Redo: perform it again under a new key/ }) as HTMLInputElement;
    expect(keep.checked).toBe(true);
    expect(fake.count('rewindTask')).toBe(0);
    fireEvent.click(redo);
    expect(redo.checked).toBe(true);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Rerun 2 steps' }));
    await waitFor(() =>
      expect(inputOf(fake, 'rewindTask')).toEqual([{ taskId: 's', stepId: 'summarize:b.md', redo: ['effect-1'], expectedVersion: 1 }]),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    // The rerun runs, so the plan's buttons are gone while it does: focus lands on the task's heading.
    expect(document.activeElement).toBe(screen.getByRole('heading', { level: 1, name: 'Task s' }));
  });

  it('asks, after Save, whether the later steps rerun or stay, naming them, and sends the choice with the one edit', async () => {
    const fake = new FakeApi().add(doneTask('s'));
    fake.results.set('s:summarize:a.md', { summary: 'old' });
    await openTask(fake, 's');
    fireEvent.click(await screen.findByRole('tab', { name: /Plan/ }));
    fireEvent.click(screen.getByRole('button', { name: 'Edit result of step summarize a.md' }));
    const content = await screen.findByRole('textbox', { name: 'New result for step summarize a.md' }, { timeout: 15_000 });
    const view = EditorView.findFromDOM(content)!;
    act(() => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: '{"summary":"set by hand"}' } }));
    fireEvent.click(screen.getByRole('button', { name: 'Save as new version…' }));
    const choice = await screen.findByRole('group', { name: /2 later steps ran with the old value/ });
    expect(choice.textContent).toContain('summarize b.md, write and publish the index');
    expect(fake.count('editStepResult')).toBe(0);
    expect(document.activeElement).toBe(within(choice).getByRole('button', { name: 'Save and rerun later steps' }));
    fireEvent.click(within(choice).getByRole('button', { name: 'Save and rerun later steps' }));
    await waitFor(() => expect(fake.count('editStepResult')).toBe(1));
    expect(inputOf(fake, 'editStepResult')[0]).toEqual({
      taskId: 's',
      stepId: 'summarize:a.md',
      value: { summary: 'set by hand' },
      expectedVersion: 1,
      later: 'rerun',
    });
  });

  it('links forks both ways in History, marks the versions going back wrote, and checks a fork id before sending it', async () => {
    const fake = new FakeApi()
      .add(doneTask('p'))
      .add(
        doneTask('p', { version: 2, source: { kind: 'rewind', actor: 'ada', rewind: { step_id: 'publish-index', redo: ['effect-1'] } } }),
      )
      .add(
        doneTask('p-child', {
          forked_from: { task_id: 'p', version: 1 },
          source: { kind: 'fork', forked_from: { task_id: 'p', version: 1 } },
        }),
      );
    const store = await openTask(fake, 'p');
    fireEvent.click(await screen.findByRole('tab', { name: /History/ }));
    const forks = await screen.findByRole('navigation', { name: 'Forks' });
    expect(forks.textContent).toContain('Forked into p-child (from v1)');
    const versions = screen.getByRole('table', { name: 'Versions' });
    expect(versions.textContent).toContain('rerun from publish-index, redo effect-1 under new keys');
    expect(versions.textContent).toContain('forked into p-child');
    // The fork's mark is drawn (no font holds a fork symbol everywhere), hidden from assistive technology.
    expect(versions.querySelectorAll('svg.fork-icon[aria-hidden="true"]').length).toBeGreaterThan(0);

    fireEvent.click(within(versions).getByRole('button', { name: 'Fork from version 1' }));
    const dialog = await screen.findByRole('dialog', { name: 'Fork p from version 1' });
    const id = within(dialog).getByRole('textbox', { name: /^New task id/ });
    expect(document.activeElement).toBe(id);
    fireEvent.change(id, { target: { value: 'p-child' } });
    expect(within(dialog).getByRole('alert').textContent).toBe('a task named p-child already exists in this directory');
    expect((within(dialog).getByRole('button', { name: 'Fork' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(id, { target: { value: 'bad id' } });
    expect(within(dialog).getByRole('alert').textContent).toMatch(/letters, digits/);
    fireEvent.change(id, { target: { value: 'p-two' } });
    fake.add(doneTask('p-two', { forked_from: { task_id: 'p', version: 1 } }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Fork' }));
    await waitFor(() => expect(store.getState().selectedTaskId).toBe('p-two'));
    expect(inputOf(fake, 'forkTask')).toEqual([{ taskId: 'p', version: 1, newTaskId: 'p-two' }]);

    // Beside the version menu: the version shown.
    act(() => store.getState().selectTask('p'));
    fireEvent.click(await screen.findByRole('button', { name: 'Fork from this version…' }));
    const again = await screen.findByRole('dialog', { name: 'Fork p from version 2' });
    // Escape: the browser fires `cancel` on the dialog.
    fireEvent(again, new Event('cancel', { cancelable: true }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(fake.count('forkTask')).toBe(1);

    // The child links back to its parent.
    act(() => store.getState().selectTask('p-child'));
    fireEvent.click(await screen.findByRole('tab', { name: /History/ }));
    const back = await screen.findByRole('navigation', { name: 'Forks' });
    fireEvent.click(within(back).getByRole('button', { name: 'p' }));
    await waitFor(() => expect(store.getState().selectedTaskId).toBe('p'));
  });
});
