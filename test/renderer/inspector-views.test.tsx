// @vitest-environment jsdom
/**
 * The inspector's directory controls, message history, older-version view
 * and notices, rendered in jsdom over the in-memory API.
 */
import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { NOTICE_MS, Notices } from '../../renderer/src/components/notices.js';
import { StoreContext, type AppStore } from '../../renderer/src/store/app-store.js';
import { disposeStores, listedIds, newStore, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

// State changes reach React through act(): events, store calls and Testing Library's waits wrap them, so a missing wrap shows as a warning.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => {
  disposeStores();
  vi.useRealTimers();
});

const setup = (fake: FakeApi): AppStore => newStore(fake.api);

/** A task with two versions: failed at v1, done at v2. */
function twoVersions(fake: FakeApi, taskId = 'a'): FakeApi {
  return fake
    .add(makeCheckpoint(taskId))
    .add(makeCheckpoint(taskId, { version: 2, status: 'done', phase: 'published', source: { kind: 'runtime' } }));
}

describe('the open directory', () => {
  it('shows the served directory in browser mode, with no folder chooser', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    renderApp(store);
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/tmp/fake'));
    expect(screen.queryByRole('button', { name: 'Open folder…' })).toBeNull();
    expect(screen.queryByRole('combobox', { name: 'Recent folders' })).toBeNull();
  });

  it('shows the first screen of rows with a line saying the rest is being read, and drops the line with the whole list', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b')).add(makeCheckpoint('c'));
    const answerWhole = fake.holdListing('whole list', 2);
    renderApp(setup(fake));
    const note = await screen.findByText(/2 tasks shown; reading the rest/);
    expect(note.getAttribute('role')).toBe('status');
    // The status chips count what is listed so far.
    const all = () => within(screen.getByRole('group', { name: 'Filter by status' })).getByRole('button', { name: /^All/ });
    expect(all().textContent).toBe('All2');
    await act(async () => answerWhole());
    await waitFor(() => expect(all().textContent).toBe('All3'));
    expect(screen.queryByText(/reading the rest/)).toBeNull();
  });

  it('asks for the first screen of rows beside the directory, not after it, and loads once however often it is started', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b'));
    const getDirectory = fake.api.getDirectory;
    let answerDirectory!: () => void;
    const directoryHeld = new Promise<void>((r) => (answerDirectory = r));
    fake.api.getDirectory = async (input) => {
      const directory = await getDirectory(input);
      await directoryHeld;
      return directory;
    };
    const store = setup(fake);
    // As the page does before its first render, and the app's mount again.
    const first = store.getState().init();
    expect(store.getState().init()).toBe(first);
    await waitFor(() =>
      expect(fake.calls.some((c) => c.method === 'listTasks' && (c.input as { limit?: number }).limit !== undefined)).toBe(true),
    );
    expect(fake.count('getDirectory')).toBe(1);
    expect(store.getState().directory).toBeNull();
    answerDirectory();
    await act(async () => first);
    expect(listedIds(store)).toEqual(['a', 'b']);
    // One first screen and one whole list: the first screen asked for early is the one used.
    expect(fake.calls.filter((c) => c.method === 'listTasks').map((c) => (c.input as { limit?: number }).limit)).toEqual([100, undefined]);
    // A store disposed and started again loads again.
    store.getState().dispose();
    await act(async () => store.getState().init());
    expect(fake.count('getDirectory')).toBe(2);
  });

  it('opens a folder from the picker or the recent folders in the desktop app, and reloads the list', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    fake.directory = { root: '/work/one', recent: ['/work/one', '/work/two'], host: 'desktop', read_only: false, recent_read_only: [] };
    const store = setup(fake);
    renderApp(store);
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/work/one'));
    act(() => store.getState().selectTask('a'));
    await waitFor(() => expect(store.getState().detail).not.toBeNull());

    // A cancelled picker changes nothing.
    fireEvent.click(screen.getByRole('button', { name: 'Open folder…' }));
    await waitFor(() => expect(fake.count('chooseDirectory')).toBe(1));
    expect(store.getState().selectedTaskId).toBe('a');

    fake.chosen = '/work/three';
    const listed = fake.count('listTasks');
    fireEvent.click(screen.getByRole('button', { name: 'Open folder…' }));
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/work/three'));
    expect(store.getState().selectedTaskId).toBeNull();
    expect(fake.count('listTasks')).toBeGreaterThan(listed);

    const recent = screen.getByRole('combobox', { name: 'Recent folders' });
    expect(
      within(recent)
        .getAllByRole('option')
        .map((o) => o.getAttribute('value')),
    ).toEqual(['', '/work/one', '/work/two']);
    fireEvent.change(recent, { target: { value: '/work/two' } });
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/work/two'));
    expect(fake.calls.filter((c) => c.method === 'openDirectory').map((c) => c.input)).toEqual([{ path: '/work/two' }]);
  });

  it('opens a folder read-only: says so, offers nothing that runs, and reopens it read-only from the recent folders', async () => {
    const fake = new FakeApi().add(makeCheckpoint('failed-task')).add(
      makeCheckpoint('waiting', {
        status: 'waiting_approval',
        recovery: {
          mode: 'confirm',
          pending_approval: { id: 'approval-1', requested_at: '2026-01-01T00:02:00Z', plan: { rerun_step: 'summarize' } },
        },
      }),
    );
    fake.directory = { root: '/work/one', recent: ['/work/one'], host: 'desktop', read_only: false, recent_read_only: [] };
    const store = setup(fake);
    renderApp(store);
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/work/one'));
    expect(screen.queryByText('Read-only')).toBeNull();

    fake.chosen = '/work/untrusted';
    fireEvent.click(screen.getByRole('button', { name: 'Open read-only…' }));
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/work/untrusted'));
    expect(fake.calls.filter((c) => c.method === 'chooseDirectory').map((c) => c.input)).toEqual([{ readOnly: true }]);
    const badge = screen.getByText('Read-only');
    expect(badge.getAttribute('title')).toMatch(/open read-only: tasks are shown, nothing is run or changed/);

    const newTask = screen.getByRole('button', { name: '+ New task' }) as HTMLButtonElement;
    expect(newTask.disabled).toBe(true);
    expect(newTask.title).toBe(badge.getAttribute('title'));

    act(() => store.getState().selectTask('failed-task'));
    const resume = await screen.findByRole('button', { name: /Resume/ });
    expect((resume as HTMLButtonElement).disabled).toBe(true);
    expect(resume.getAttribute('title')).toMatch(/open read-only/);
    expect(screen.queryByRole('button', { name: /^Edit result/ })).toBeNull();

    act(() => store.getState().selectTask('waiting'));
    const panel = await screen.findByRole('region', { name: 'Resume approval' });
    expect((within(panel).getByRole('button', { name: 'Approve' }) as HTMLButtonElement).disabled).toBe(true);
    expect((within(panel).getByRole('button', { name: 'Reject' }) as HTMLButtonElement).disabled).toBe(true);
    for (const method of ['startTask', 'resumeTask', 'approveResume', 'rejectResume', 'editStepResult'] as const)
      expect(fake.count(method)).toBe(0);

    // The recent folders say which one is read-only, and reopening it keeps it so (the host decides, from what it remembers).
    const recent = screen.getByRole('combobox', { name: 'Recent folders' });
    expect(
      within(recent)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['Recent…', 'one — /work/one']);
    fireEvent.change(recent, { target: { value: '/work/one' } });
    await waitFor(() => expect(screen.getByTestId('directory').textContent).toBe('/work/one'));
    expect(screen.queryByText('Read-only')).toBeNull();
    const again = screen.getByRole('combobox', { name: 'Recent folders' });
    expect(
      within(again)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['Recent…', 'untrusted — /work/untrusted (read-only)']);
    fireEvent.change(again, { target: { value: '/work/untrusted' } });
    await waitFor(() => expect(screen.getByText('Read-only')).toBeTruthy());
    expect(fake.calls.filter((c) => c.method === 'openDirectory').map((c) => c.input)).toEqual([
      { path: '/work/one' },
      { path: '/work/untrusted' },
    ]);
  });

  it('says what to do when no directory is open', async () => {
    const fake = new FakeApi();
    fake.directory = { root: null, recent: ['/work/old'], host: 'desktop', read_only: false, recent_read_only: [] };
    const store = setup(fake);
    renderApp(store);
    const empty = await screen.findByText('No checkpoint directory is open.');
    const box = empty.closest('.empty') as HTMLElement;
    expect(within(box).getByRole('button', { name: 'Open folder…' })).toBeTruthy();
    // The first screen of rows is asked for beside the directory (a host with none open refuses it); nothing more
    // is listed, and no row or error shows.
    expect(fake.count('listTasks')).toBe(1);
    expect(store.getState().tasks).toEqual([]);
    expect(store.getState().tasksState).toBe('idle');
    fireEvent.click(within(box).getByRole('button', { name: '/work/old' }));
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'openDirectory')).toBe(true));
    await waitFor(() => expect(screen.queryByText('No checkpoint directory is open.')).toBeNull());
  });

  it('reloads the list and leaves the open task when the host switches directory', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    act(() => store.getState().selectTask('a'));
    await waitFor(() => expect(store.getState().detail).not.toBeNull());
    const listed = fake.count('listTasks');
    fake.directory = { ...fake.directory, root: '/tmp/other' };
    fake.emit({ type: 'directory-changed', root: '/tmp/other' });
    expect(store.getState().selectedTaskId).toBeNull();
    await waitFor(() => expect(fake.count('listTasks')).toBe(listed + 1));
    await waitFor(() => expect(store.getState().directory?.root).toBe('/tmp/other'));
  });
});

describe('the message history', () => {
  it('lists each message with its role, long ones collapsed until asked', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const long = Array.from({ length: 30 }, (_, i) => `line ${i + 1} of the model's long answer`).join('\n');
    fake.messages.set('a', [
      { role: 'system', content: 'You summarise notes.' },
      { role: 'user', content: 'Summarise checkpoints.md' },
      { role: 'assistant', content: long },
    ]);
    const store = setup(fake);
    renderApp(store);
    act(() => store.getState().selectTask('a'));
    await screen.findByRole('tab', { name: /Messages/ });
    fireEvent.click(screen.getByRole('tab', { name: /Messages/ }));
    const list = await screen.findByRole('list', { name: 'Messages' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('.message-role')?.textContent)).toEqual(['system', 'user', 'assistant']);
    expect(items[1].textContent).toContain('Summarise checkpoints.md');
    expect(within(items[0]).queryByRole('button')).toBeNull();
    const toggle = within(items[2]).getByRole('button', { name: /Show all/ });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(items[2].querySelector('.message-body')?.classList.contains('collapsed')).toBe(true);
    fireEvent.click(toggle);
    expect(within(items[2]).getByRole('button', { name: 'Collapse' }).getAttribute('aria-expanded')).toBe('true');
    expect(items[2].querySelector('.message-body')?.classList.contains('collapsed')).toBe(false);
    expect(fake.calls.find((c) => c.method === 'getMessages')?.input).toEqual({ taskId: 'a', version: 1 });
  });

  it('follows a task running on: the messages shown stay, and only those appended since are fetched', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a', { history: { count: 2, head: `sha256:${'1'.repeat(64)}@1` } }));
    fake.messages.set('a', [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'second' },
    ]);
    const store = setup(fake);
    renderApp(store);
    act(() => store.getState().selectTask('a'));
    fireEvent.click(await screen.findByRole('tab', { name: /Messages/ }));
    const list = await screen.findByRole('list', { name: 'Messages' });
    expect(within(list).getAllByRole('listitem')).toHaveLength(2);

    // Version 2 appends a message; its fetch is held back to see what the tab shows meanwhile.
    let release!: () => void;
    fake.gates.set('getMessages:a', new Promise<void>((r) => (release = r)));
    fake.messages.set('a', [...fake.messages.get('a')!, { role: 'user', content: 'third' }]);
    fake.add(makeCheckpoint('a', { version: 2, history: { count: 3, head: `sha256:${'2'.repeat(64)}@2` } }));
    act(() => fake.emit({ type: 'task-changed', taskId: 'a', version: 2 }));
    await waitFor(() => expect(fake.calls.filter((c) => c.method === 'getMessages')).toHaveLength(2));
    expect(fake.calls.filter((c) => c.method === 'getMessages').at(-1)?.input).toEqual({
      taskId: 'a',
      version: 2,
      after: { head: `sha256:${'1'.repeat(64)}@1`, count: 2 },
    });
    // No spinner while it loads: the two messages stay, still said to be version 1's.
    expect(screen.queryByText('Loading messages…')).toBeNull();
    expect(within(screen.getByRole('list', { name: 'Messages' })).getAllByRole('listitem')).toHaveLength(2);
    expect(screen.getByText(/2 messages at version 1/)).toBeTruthy();
    await act(async () => release());
    await waitFor(() => expect(screen.getByText(/3 messages at version 2/)).toBeTruthy());
    const items = within(screen.getByRole('list', { name: 'Messages' })).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('.message-body')?.textContent)).toEqual(['first', 'second', 'third']);

    // A history the writer replaced comes back whole, and replaces the list.
    fake.gates.delete('getMessages:a');
    fake.rewrittenHistories.add('a');
    fake.messages.set('a', [{ role: 'user', content: 'a fresh start' }]);
    fake.add(makeCheckpoint('a', { version: 3, history: { count: 1, head: `sha256:${'3'.repeat(64)}@3` } }));
    act(() => fake.emit({ type: 'task-changed', taskId: 'a', version: 3 }));
    await waitFor(() => expect(screen.getByText(/1 message at version 3/)).toBeTruthy());
    expect(
      within(screen.getByRole('list', { name: 'Messages' }))
        .getAllByRole('listitem')
        .map((li) => li.querySelector('.message-body')?.textContent),
    ).toEqual(['a fresh start']);
  });
});

describe('an older version as the whole task view', () => {
  it('shows the picked version read-only with a banner, and goes back to the latest', async () => {
    const fake = twoVersions(new FakeApi());
    fake.messages.set('a', [{ role: 'user', content: 'hello' }]);
    const store = setup(fake);
    renderApp(store);
    act(() => store.getState().selectTask('a'));
    const picker = await screen.findByRole('combobox', { name: 'Version shown' });
    expect(
      within(picker)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual([expect.stringMatching(/^v2 \(latest\)/), expect.stringMatching(/^v1 ·/)]);
    expect(screen.queryByRole('status', { name: 'Older version' })).toBeNull();

    fireEvent.change(picker, { target: { value: '1' } });
    const banner = await screen.findByRole('status', { name: 'Older version' });
    expect(banner.textContent).toContain('Viewing version 1 of 2');
    expect(banner.textContent).toContain('status then: failed');
    expect(fake.calls.filter((c) => c.method === 'getTask').at(-1)?.input).toEqual({ taskId: 'a', version: 1 });
    // The failed step of version 1 cannot be edited from history, nor the task resumed.
    fireEvent.click(screen.getByRole('tab', { name: /Plan/ }));
    expect(screen.queryByRole('button', { name: /^Edit result/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Resume/ })).toBeNull();
    // Messages follow the version shown.
    fireEvent.click(screen.getByRole('tab', { name: /Messages/ }));
    await screen.findByRole('list', { name: 'Messages' });
    expect(fake.calls.filter((c) => c.method === 'getMessages').at(-1)?.input).toEqual({ taskId: 'a', version: 1 });

    fireEvent.click(within(banner).getByRole('button', { name: 'Back to latest' }));
    await waitFor(() => expect(screen.queryByRole('status', { name: 'Older version' })).toBeNull());
    expect(store.getState().detail?.version).toBe(2);
    expect(store.getState().viewedVersion).toBeNull();
  });

  it('asks only for the versions written since the last one it lists', async () => {
    const fake = twoVersions(new FakeApi());
    const store = setup(fake);
    await store.getState().init();
    act(() => store.getState().selectTask('a'));
    await waitFor(() => expect(store.getState().history.map((v) => v.version)).toEqual([1, 2]));
    const second = store.getState().history[1];
    fake.add(makeCheckpoint('a', { version: 3, status: 'done', source: { kind: 'runtime' } }));
    act(() => fake.emit({ type: 'task-changed', taskId: 'a', version: 3 }));
    await waitFor(() => expect(store.getState().history.map((v) => v.version)).toEqual([1, 2, 3]));
    expect(fake.calls.filter((c) => c.method === 'getHistory').at(-1)?.input).toEqual({
      taskId: 'a',
      after: { version: 2, updated_at: second.updated_at, bytes: second.bytes },
    });
  });

  it('keeps showing the picked version when a new one arrives', async () => {
    const fake = twoVersions(new FakeApi());
    const store = setup(fake);
    await store.getState().init();
    act(() => store.getState().selectTask('a'));
    await waitFor(() => expect(store.getState().detail?.version).toBe(2));
    act(() => store.getState().viewVersion(1));
    await waitFor(() => expect(store.getState().detail?.version).toBe(1));
    fake.add(makeCheckpoint('a', { version: 3, status: 'done', source: { kind: 'runtime' } }));
    fake.emit({ type: 'task-changed', taskId: 'a', version: 3 });
    await waitFor(() => expect(store.getState().history).toHaveLength(3));
    expect(store.getState().detail?.version).toBe(1);
    expect(store.getState().detail?.latest_version).toBe(3);
  });
});

describe('notices', () => {
  function renderNotices(store: AppStore) {
    return render(
      <StoreContext.Provider value={store}>
        <Notices />
      </StoreContext.Provider>,
    );
  }

  it('dismisses a success by itself after a few seconds and keeps an error until dismissed', () => {
    vi.useFakeTimers();
    const store = setup(new FakeApi());
    renderNotices(store);
    act(() => {
      store.getState().notify('error', 'Could not resume: the lease is held');
      store.getState().notify('success', 'Saved version 3');
    });
    expect(screen.getByRole('status').textContent).toContain('Saved version 3');
    expect(screen.getByRole('alert').textContent).toContain('the lease is held');
    act(() => void vi.advanceTimersByTime(NOTICE_MS + 10));
    expect(screen.queryByRole('status')).toBeNull();
    const alert = screen.getByRole('alert');
    act(() => void vi.advanceTimersByTime(60_000));
    expect(screen.getByRole('alert')).toBe(alert);
    fireEvent.click(within(alert).getByRole('button', { name: 'Dismiss message' }));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('holds a notice while the pointer rests on it', () => {
    vi.useFakeTimers();
    const store = setup(new FakeApi());
    renderNotices(store);
    act(() => store.getState().notify('info', 'Verified 3 artifacts'));
    fireEvent.mouseEnter(screen.getByRole('status'));
    act(() => void vi.advanceTimersByTime(NOTICE_MS * 3));
    expect(screen.getByRole('status')).toBeTruthy();
    fireEvent.mouseLeave(screen.getByRole('status'));
    act(() => void vi.advanceTimersByTime(NOTICE_MS + 10));
    expect(screen.queryByRole('status')).toBeNull();
  });

  it('shows at most three at once and counts the rest', () => {
    const store = setup(new FakeApi());
    renderNotices(store);
    act(() => {
      for (let i = 1; i <= 5; i++) store.getState().notify('error', `failure ${i}`);
    });
    expect(screen.getAllByRole('alert').map((a) => a.textContent)).toEqual(['failure 3×', 'failure 4×', 'failure 5×']);
    expect(screen.getByText('2 older messages')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss all' }));
    expect(screen.queryAllByRole('alert')).toHaveLength(0);
  });
});

describe('the version picker', () => {
  it('names each version by what wrote it: the save boundary, or the kind and its note, cut short when long', async () => {
    const key = 'k'.repeat(60);
    const fake = new FakeApi()
      .add(makeCheckpoint('a', { source: { kind: 'runtime', note: 'step s1 done' } }))
      .add(makeCheckpoint('a', { version: 2, source: { kind: 'runtime', note: `effect http-publish (key ${key}): intent` } }))
      .add(makeCheckpoint('a', { version: 3, source: { kind: 'human-edit', actor: 'ana', note: 'fixed the outline' } }))
      .add(makeCheckpoint('a', { version: 4, source: { kind: 'runtime' } }));
    const store = setup(fake);
    renderApp(store);
    act(() => store.getState().selectTask('a'));
    const picker = await screen.findByRole('combobox', { name: 'Version shown' });
    await waitFor(() => expect(within(picker).getAllByRole('option')).toHaveLength(4));
    const labels = within(picker)
      .getAllByRole('option')
      .map((o) => o.textContent!.split(' · ').slice(0, 2).join(' · '));
    expect(labels).toEqual([
      'v4 (latest) · runtime',
      'v3 · human-edit: fixed the outline',
      `v2 · ${'effect http-publish (key kkkkkkkkkkkkkkkk'.slice(0, 39)}…`,
      'v1 · step s1 done',
    ]);
  });
});
