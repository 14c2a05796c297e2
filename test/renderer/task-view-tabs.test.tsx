// @vitest-environment jsdom
/**
 * The task view's detail tabs (side-effect ledger, recorded errors, step
 * results), the approval panel's plan, and the keyboard and theme controls,
 * rendered in jsdom over the in-memory API with a task that has all of them.
 */
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { AppStore } from '../../renderer/src/store/app-store.js';
import { disposeStores, newStore, layOutElements, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => {
  disposeStores();
  globalThis.localStorage?.clear();
  delete document.documentElement.dataset.theme;
});

const ref = (hex: string) => `sha256:${hex.repeat(64)}`;
const LONG_NOTE = 'x'.repeat(1000);
const LONG_TEXT = 'The generated tests cover the happy path and the edge cases. '.repeat(60);

/** A confirm-mode task waiting on a plan that probes, retries and reports drift; it has effects, errors and results of every size. */
function richTask() {
  return makeCheckpoint('rich', {
    status: 'waiting_approval',
    recovery: {
      mode: 'confirm',
      pending_approval: {
        id: 'approval-1',
        requested_at: '2026-01-01T00:02:00Z',
        plan: { rerun_step: 'summarize', probe_effects: ['fx-mail'], retry_effects: ['fx-upload'], drift: ['out/summary.md: modified'] },
      },
    },
    plan: [
      { id: 'read', name: 'read notes', status: 'done', attempts: 1, result_ref: ref('a') },
      { id: 'write', name: 'write tests', status: 'done', attempts: 1, result_ref: ref('b') },
      {
        id: 'summarize',
        name: 'summarize',
        status: 'failed',
        attempts: 2,
        error: { message: 'model returned invalid JSON', kind: 'schema' },
      },
    ],
    total_steps: 3,
    current_step: 2,
    side_effects: [
      {
        id: 'fx-mail',
        type: 'send-email',
        status: 'uncertain',
        idempotency_key: 'mail-7f3a',
        step_id: 'summarize',
        request: { to: 'team@example.com', subject: 'Weekly summary' },
        attempts: 2,
        reconciliation: 'awaiting-human',
      },
      {
        id: 'fx-upload',
        type: 'upload',
        status: 'done',
        idempotency_key: 'upload-91c2',
        step_id: 'read',
        request: { path: 'out/summary.md' },
        outcome: { url: 'https://files.example.com/summary.md' },
        attempts: 1,
        reconciliation: 'probed-done',
      },
    ],
    errors: [
      {
        at: '2026-01-01T00:00:30Z',
        step_id: 'read',
        what: 'the notes folder was locked',
        fix: 'waited for the lock and read again',
        verification: 'all three notes read',
      },
      { at: '2026-01-01T00:01:30Z', step_id: 'summarize', what: 'model returned invalid JSON' },
    ],
  });
}

function setup(): { fake: FakeApi; store: AppStore } {
  const fake = new FakeApi().add(richTask());
  fake.results.set('rich:read', { notes: Array.from({ length: 50 }, (_, i) => `note-${i}.md`), long: LONG_NOTE, count: 50 });
  fake.results.set('rich:write', LONG_TEXT);
  const store = newStore(fake.api);
  renderApp(store);
  return { fake, store };
}

async function openRich(store: AppStore) {
  await waitFor(() => expect(store.getState().tasksState).toBe('ready'));
  act(() => store.getState().selectTask('rich'));
  await screen.findByRole('heading', { level: 1, name: 'Task rich' });
}

describe('the side-effect ledger', () => {
  it('shows each effect with its type, key, status, request, outcome and reconciliation', async () => {
    const { store } = setup();
    await openRich(store);
    fireEvent.click(screen.getByRole('tab', { name: /Side effects/ }));
    const ledger = await screen.findByRole('table', { name: 'Side-effect ledger' });
    expect(
      within(ledger)
        .getAllByRole('columnheader')
        .map((h) => h.textContent),
    ).toEqual(['Type', 'Idempotency key', 'Status', 'Step', 'Request', 'Outcome', 'Reconciliation']);
    const rows = within(ledger).getAllByRole('row').slice(1);
    const cells = rows.map((r) =>
      within(r)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    );
    expect(cells[0][0]).toBe('send-email');
    expect(cells[0][1]).toBe('mail-7f3a');
    expect(cells[0][2]).toContain('Uncertain');
    expect(cells[0][2]).toContain('2 attempts');
    expect(cells[0][3]).toBe('summarize');
    expect(cells[0][4]).toContain('team@example.com');
    // No outcome is known for an uncertain effect.
    expect(cells[0][5]).toBe('—');
    expect(cells[0][6]).toBe('awaiting-human');
    expect(cells[1].slice(0, 2)).toEqual(['upload', 'upload-91c2']);
    expect(cells[1][2]).toContain('Done');
    expect(cells[1][5]).toContain('https://files.example.com/summary.md');
    expect(cells[1][6]).toBe('probed-done');

    // The request folds into a one-line preview and opens as a tree of its fields.
    const details = rows[0].querySelector('details')!;
    // Its name holds the preview a sighted person reads (label in name), after what it is.
    const summary = details.querySelector('summary')!;
    expect(summary.getAttribute('aria-label')).toBeNull();
    expect(summary.textContent).toMatch(/^Request of send-email fx-mail: \{/);
    expect(details.open).toBe(false);
    const tree = within(details).getByRole('tree', { name: 'Request of send-email fx-mail' });
    expect(within(tree).getByText(/Weekly summary/)).toBeTruthy();
  });
});

describe('the recorded errors', () => {
  it('lists errors newest first, with the fix and its verification, or that none was found yet', async () => {
    const { store } = setup();
    await openRich(store);
    const tab = screen.getByRole('tab', { name: /Errors/ });
    expect(tab.textContent).toContain('2');
    fireEvent.click(tab);
    const log = await screen.findByRole('list', { name: 'Recorded errors' });
    const entries = within(log).getAllByRole('listitem');
    expect(entries).toHaveLength(2);
    expect(entries[0].textContent).toContain('step summarize');
    expect(entries[0].textContent).toContain('model returned invalid JSON');
    expect(entries[0].textContent).toContain('not fixed yet');
    expect(entries[1].textContent).toContain('the notes folder was locked');
    expect(entries[1].textContent).toContain('waited for the lock and read again');
    expect(entries[1].textContent).toContain('all three notes read');
  });
});

describe('step results', () => {
  it('shows a JSON result as a tree, a large array folded and a long string clipped until asked', async () => {
    const { fake, store } = setup();
    await openRich(store);
    fireEvent.click(screen.getByRole('button', { name: 'Show result of step read notes' }));
    const tree = await screen.findByRole('tree', { name: 'Result of step read notes' });
    expect(fake.calls.filter((c) => c.method === 'getStepResult').map((c) => c.input)).toEqual([
      { taskId: 'rich', stepId: 'read', version: 1 },
    ]);
    expect(screen.getByRole('button', { name: 'Hide result of step read notes' }).getAttribute('aria-expanded')).toBe('true');

    // Fifty items start folded: their rows are not rendered until expanded.
    expect(within(tree).getByText('[50 items]')).toBeTruthy();
    expect(within(tree).queryByText(/note-49\.md/)).toBeNull();
    fireEvent.click(within(tree).getByRole('button', { name: 'Expand notes' }));
    expect(within(tree).getByText(/note-49\.md/)).toBeTruthy();

    // The 1,000-character string shows its first 400 and offers the rest.
    const more = within(tree).getByRole('button', { name: '+600 chars' });
    expect(within(tree).queryByText(new RegExp(`${LONG_NOTE}`))).toBeNull();
    fireEvent.click(more);
    expect(within(tree).getByText(new RegExp(LONG_NOTE))).toBeTruthy();
  });

  it('shows a text result as text, clipped with a way to see all of it', async () => {
    const { store } = setup();
    await openRich(store);
    fireEvent.click(screen.getByRole('button', { name: 'Show result of step write tests' }));
    const block = await screen.findByRole('group', { name: 'Result of step write tests' });
    expect(screen.queryByRole('tree', { name: 'Result of step write tests' })).toBeNull();
    const shown = () => block.querySelector('pre')!.textContent!;
    expect(shown().length).toBeLessThan(LONG_TEXT.length);
    expect(LONG_TEXT.startsWith(shown().replace(/…$/, ''))).toBe(true);
    fireEvent.click(within(block).getByRole('button', { name: `Show all ${LONG_TEXT.length.toLocaleString()} characters` }));
    expect(shown()).toBe(LONG_TEXT);
    fireEvent.click(within(block).getByRole('button', { name: 'Show less' }));
    expect(shown().length).toBeLessThan(LONG_TEXT.length);
  });

  it('offers Edit result on every step, done ones too, each button named for its step', async () => {
    const { store } = setup();
    await openRich(store);
    expect(screen.getByRole('button', { name: 'Edit result of step summarize' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Edit result of step read notes' })).toBeTruthy();
    const steps = store.getState().detail!.checkpoint!.plan;
    expect(screen.getAllByRole('button', { name: /^Edit result of step / }).map((b) => b.getAttribute('aria-label'))).toEqual(
      steps.map((s) => `Edit result of step ${s.name || s.id}`),
    );
  });
});

describe('the approval panel', () => {
  it('lists the step to rerun, the effects to probe and to retry, and the drift found', async () => {
    const { store } = setup();
    await openRich(store);
    const panel = screen.getByRole('region', { name: 'Resume approval' });
    const value = (term: string) => {
      const dt = within(panel).getByText(term, { selector: 'dt' });
      return dt.nextElementSibling as HTMLElement;
    };
    expect(value('Rerun step').textContent).toBe('summarize');
    expect(
      within(value('Probe effects'))
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['send-email · mail-7f3a (uncertain)']);
    expect(
      within(value('Retry effects'))
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['upload · upload-91c2 (done)']);
    expect(
      within(value('Drift found'))
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['out/summary.md: modified']);
  });
});

describe('tabs', () => {
  it('points only the active tab at its panel, which is rendered', async () => {
    const { store } = setup();
    await openRich(store);
    const tabs = within(screen.getByRole('tablist')).getAllByRole('tab');
    const check = () => {
      for (const tab of tabs) {
        const controls = tab.getAttribute('aria-controls');
        if (tab.getAttribute('aria-selected') === 'true') {
          expect(document.getElementById(controls!)?.getAttribute('role')).toBe('tabpanel');
        } else {
          expect(controls).toBeNull();
        }
      }
    };
    check();
    fireEvent.keyDown(screen.getByRole('tab', { selected: true }), { key: 'ArrowRight' });
    expect(screen.getByRole('tab', { selected: true }).textContent).toMatch(/^Artifacts/);
    check();
  });
});

describe('keyboard and theme', () => {
  // jsdom lays nothing out: the virtualised list is given a size, so it renders its rows.
  layOutElements(600);

  function listSetup() {
    const fake = new FakeApi();
    // Newest first: t3, t2, t1.
    for (const [id, at] of [
      ['t1', '2026-01-01T00:01:00Z'],
      ['t2', '2026-01-01T00:02:00Z'],
      ['t3', '2026-01-01T00:03:00Z'],
    ]) {
      fake.add(makeCheckpoint(id, { run: { created_at: at, updated_at: at } }));
    }
    const store = newStore(fake.api);
    renderApp(store);
    return store;
  }

  it('moves through the task list with ↓, j and End, opening each task', async () => {
    const store = listSetup();
    const list = await screen.findByRole('listbox', { name: 'Task list' });
    await waitFor(() => expect(within(list).getAllByRole('option')).toHaveLength(3));
    const press = (key: string) => fireEvent.keyDown(list, { key });
    const active = () => list.getAttribute('aria-activedescendant');

    press('ArrowDown');
    expect(store.getState().selectedTaskId).toBe('t3');
    expect(active()).toBe('task-row-t3');
    await screen.findByRole('heading', { level: 1, name: 'Task t3' });
    press('j');
    expect(store.getState().selectedTaskId).toBe('t2');
    expect(active()).toBe('task-row-t2');
    press('End');
    expect(store.getState().selectedTaskId).toBe('t1');
    expect(within(list).getByRole('option', { selected: true }).id).toBe('task-row-t1');
    await screen.findByRole('heading', { level: 1, name: 'Task t1' });
    // Past the end stays on the last task.
    press('ArrowDown');
    expect(store.getState().selectedTaskId).toBe('t1');
  });

  it('focuses the search with /, but not while typing in a field', async () => {
    listSetup();
    const search = await screen.findByRole('searchbox', { name: 'Search tasks' });
    const list = screen.getByRole('listbox', { name: 'Task list' });
    list.focus();
    const slash = fireEvent.keyDown(list, { key: '/' });
    expect(document.activeElement).toBe(search);
    expect(slash).toBe(false);

    // In the search box itself a slash is text, not a shortcut.
    expect(fireEvent.keyDown(search, { key: '/' })).toBe(true);
    expect(document.activeElement).toBe(search);
  });

  it('cycles the theme button from the system theme to dark in one click, then light, and remembers the choice', async () => {
    listSetup();
    const button = () => screen.getByRole('button', { name: /^Theme:/ });
    await screen.findByRole('listbox', { name: 'Task list' });
    expect(button().getAttribute('aria-label')).toBe('Theme: system. Switch to dark');
    expect(document.documentElement.dataset.theme).toBeUndefined();
    fireEvent.click(button());
    expect(button().getAttribute('aria-label')).toBe('Theme: dark. Switch to light');
    expect(document.documentElement.dataset.theme).toBe('dark');
    expect(globalThis.localStorage.getItem('waystation-theme')).toBe('dark');
    fireEvent.click(button());
    expect(button().getAttribute('aria-label')).toBe('Theme: light. Switch to system');
    expect(document.documentElement.dataset.theme).toBe('light');
    fireEvent.click(button());
    expect(button().getAttribute('aria-label')).toBe('Theme: system. Switch to dark');
    expect(document.documentElement.dataset.theme).toBeUndefined();
    expect(globalThis.localStorage.getItem('waystation-theme')).toBe('system');
  });
});
