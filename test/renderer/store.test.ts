// @vitest-environment jsdom
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAppStore, type AppStore } from '../../renderer/src/store/app-store.js';
import { filterTasks, needsAttention } from '../../renderer/src/store/task-filter.js';
import { listedIds } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

let stores: AppStore[] = [];
function setup(api: FakeApi) {
  const store = createAppStore(api.api);
  stores.push(store);
  return store;
}
afterEach(() => {
  for (const s of stores) s.getState().dispose();
  stores = [];
});

describe('the renderer store', () => {
  it('loads the directory and every task on init, then reports live', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b', { status: 'done' }));
    const store = setup(fake);
    await store.getState().init();
    const s = store.getState();
    expect(s.connection).toBe('live');
    expect(s.directory?.root).toBe('/tmp/fake');
    expect(listedIds(store)).toEqual(['a', 'b']);
    expect(s.agents.map((a) => a.name)).toEqual(['md-summarizer']);
  });

  it('refreshes the list and the open task when the host reports a new version, without mutating old data', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    store.getState().selectTask('a');
    await vi.waitFor(() => expect(store.getState().detail?.version).toBe(1));
    const before = store.getState().detail!;
    const tasksBefore = store.getState().tasks;

    fake.add(makeCheckpoint('a', { version: 2, status: 'done', source: { kind: 'runtime' } }));
    const listCalls = fake.count('listTasks');
    // A burst of events for the same change collapses into one reload.
    fake.emit({ type: 'task-changed', taskId: 'a', version: 2 });
    fake.emit({ type: 'task-changed', taskId: 'a', version: 2 });
    fake.emit({ type: 'task-event', taskId: 'a', event: { id: 9, type: 'version', at: '2026-01-01T00:02:00Z', version: 2 } });

    await vi.waitFor(() => expect(store.getState().detail?.version).toBe(2));
    await vi.waitFor(() => expect(store.getState().tasks[0].display_status).toBe('done'));
    expect(fake.count('listTasks') - listCalls).toBe(1);
    expect(store.getState().history.map((v) => v.version)).toEqual([1, 2]);
    expect(before.version).toBe(1);
    expect(before.checkpoint?.status).toBe('failed');
    expect(tasksBefore[0].display_status).toBe('failed');
    expect(store.getState().lastEventId).toBe(3);
    expect(store.getState().activity.a.map((e) => e.text)).toContain('version 2 written');
  });

  it('replaces only the changed row when the event carries it, with no new listing', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b')).add(makeCheckpoint('c'));
    const store = setup(fake);
    await store.getState().init();
    const before = store.getState().tasks;
    const listCalls = fake.count('listTasks');

    fake.add(makeCheckpoint('b', { version: 2, status: 'done', source: { kind: 'runtime' } }));
    const older = { ...fake.summaryOf('b'), display_status: 'running' as const };
    // A burst for one task: the last row sent wins, once.
    fake.emit({ type: 'task-changed', taskId: 'b', version: 2, summary: older });
    fake.emit({ type: 'task-changed', taskId: 'b', version: 2, summary: fake.summaryOf('b') });

    await vi.waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === 'b')?.display_status).toBe('done'));
    const after = store.getState().tasks;
    expect(fake.count('listTasks')).toBe(listCalls);
    expect(after.map((t) => t.task_id)).toEqual(before.map((t) => t.task_id));
    expect(after.find((t) => t.task_id === 'b')?.version).toBe(2);
    // The other rows are the very same objects: nothing else re-renders.
    for (const id of ['a', 'c']) expect(after.find((t) => t.task_id === id)).toBe(before.find((t) => t.task_id === id));
    expect(before.find((t) => t.task_id === 'b')?.display_status).toBe('failed');
  });

  it('adds a row for a task it had not listed, and relists when a change comes without a row', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    const listCalls = fake.count('listTasks');
    fake.add(makeCheckpoint('new'));
    fake.emit({ type: 'task-changed', taskId: 'new', version: 1, summary: fake.summaryOf('new') });
    await vi.waitFor(() => expect(listedIds(store)).toEqual(['a', 'new']));
    expect(fake.count('listTasks')).toBe(listCalls);

    fake.add(makeCheckpoint('a', { version: 2, status: 'done', source: { kind: 'runtime' } }));
    fake.emit({ type: 'task-changed', taskId: 'a', version: null });
    await vi.waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === 'a')?.display_status).toBe('done'));
    expect(fake.count('listTasks')).toBe(listCalls + 1);
  });

  it('shows a first screen of rows on a first load, says the rest is being read, then shows every task', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b')).add(makeCheckpoint('c'));
    const store = setup(fake);
    // The first screen answers at once; the whole list waits, as on a host still reading a large directory.
    const answerWhole = fake.holdListing('whole list', 2);
    const loading = store.getState().loadTasks();
    await vi.waitFor(() => expect(store.getState().tasks).toHaveLength(2));
    expect(store.getState().tasksState).toBe('loading');
    expect(fake.calls.filter((c) => c.method === 'listTasks').map((c) => c.input)).toEqual([{ limit: 100 }, {}]);
    answerWhole();
    await loading;
    expect(store.getState().tasksState).toBe('ready');
    expect(listedIds(store)).toEqual(['a', 'b', 'c']);
    // A refresh of a list already shown asks for the whole list alone.
    await store.getState().loadTasks();
    expect(fake.calls.filter((c) => c.method === 'listTasks').map((c) => c.input)).toEqual([{ limit: 100 }, {}, {}]);
  });

  it('keeps the whole list when a first screen answers after it', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b'));
    const store = setup(fake);
    const answerFirst = fake.holdListing('first screen', 1);
    await store.getState().loadTasks();
    answerFirst();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.getState().tasks).toHaveLength(2);
    expect(store.getState().tasksState).toBe('ready');
  });

  it('keeps a row that arrived while a full listing was in flight', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('b'));
    const store = setup(fake);
    await store.getState().init();
    // A listing read before the change answers after it: the row sent with the change must survive it.
    const stale = await fake.api.listTasks({});
    let answer!: (tasks: typeof stale) => void;
    const listTasks = fake.api.listTasks;
    fake.api.listTasks = () => new Promise((resolve) => (answer = resolve));
    const loading = store.getState().loadTasks();
    fake.add(makeCheckpoint('b', { version: 2, status: 'done', source: { kind: 'runtime' } }));
    store.getState().patchTasks([fake.summaryOf('b')]);
    answer(stale);
    await loading;
    fake.api.listTasks = listTasks;
    expect(store.getState().tasks.find((t) => t.task_id === 'b')?.display_status).toBe('done');
    expect(listedIds(store)).toEqual(['a', 'b']);
  });

  it('sends the version an edit was opened on, and shows the refusal when the task moved on', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    store.getState().selectTask('a');
    await vi.waitFor(() => expect(store.getState().detail?.version).toBe(1));
    fake.add(makeCheckpoint('a', { version: 2, source: { kind: 'runtime' } }));
    const refused = await store.getState().editStep('a', 'summarize', { summary: 'by hand' }, 1);
    expect(refused.ok).toBe(false);
    expect(refused.errors.join(' ')).toMatch(/moved on to version 2 since version 1/);
    expect(fake.tasks.get('a')).toHaveLength(2);
    const saved = await store.getState().editStep('a', 'summarize', { summary: 'by hand' }, 2);
    expect(saved).toMatchObject({ ok: true, version: 3 });
    expect(
      fake.calls.filter((c) => c.method === 'editStepResult').map((c) => (c.input as { expectedVersion?: number }).expectedVersion),
    ).toEqual([1, 2]);
  });

  it('drops a slow answer for a task the user already left', async () => {
    const fake = new FakeApi().add(makeCheckpoint('slow')).add(makeCheckpoint('fast'));
    let release!: () => void;
    fake.gates.set('getTask:slow', new Promise<void>((r) => (release = r)));
    const store = setup(fake);
    await store.getState().init();
    store.getState().selectTask('slow');
    store.getState().selectTask('fast');
    await vi.waitFor(() => expect(store.getState().detail?.summary.task_id).toBe('fast'));
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.getState().detail?.summary.task_id).toBe('fast');
  });

  it('never sends an edit that fails the step schema, and sends a valid one', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    store.getState().selectTask('a');
    await vi.waitFor(() => expect(store.getState().detail).not.toBeNull());

    const bad = await store.getState().editStep('a', 'summarize', { summary: '' });
    expect(bad.ok).toBe(false);
    expect(bad.errors).toEqual(['$.summary: must be at least 1 character long']);
    expect(fake.count('editStepResult')).toBe(0);

    const good = await store.getState().editStep('a', 'summarize', { summary: 'All good.' });
    expect(good).toMatchObject({ ok: true, version: 2 });
    expect(fake.count('editStepResult')).toBe(1);
    await vi.waitFor(() => expect(store.getState().detail?.version).toBe(2));
    expect(store.getState().busy).toEqual({});
  });

  it('refuses to reject a resume without a reason', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    expect(await store.getState().reject('a', '   ')).toBe(false);
    expect(fake.count('rejectResume')).toBe(0);
    expect(store.getState().notices.at(-1)?.text).toMatch(/reason is required/);
    expect(await store.getState().reject('a', 'wrong plan')).toBe(true);
    expect(fake.calls.find((c) => c.method === 'rejectResume')?.input).toEqual({ taskId: 'a', reason: 'wrong plan' });
  });

  it('shows a message about the directory itself, which no task feed would show, as an error notice', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = setup(fake);
    await store.getState().init();
    const listed = fake.count('listTasks');
    fake.emit({ type: 'directory-notice', root: '/tmp/x', detail: 'watching /tmp/x: the directory watcher stopped' });
    expect(store.getState().notices.at(-1)).toMatchObject({ kind: 'error', text: 'watching /tmp/x: the directory watcher stopped' });
    expect(store.getState().activity['']).toBeUndefined();
    expect(fake.count('listTasks')).toBe(listed);
  });

  it('diffs older to newer whichever order the versions are picked in', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a')).add(makeCheckpoint('a', { version: 2, status: 'done' }));
    const store = setup(fake);
    await store.getState().init();
    store.getState().selectTask('a');
    await vi.waitFor(() => expect(store.getState().history).toHaveLength(2));
    store.getState().setDiffPair(2, 1);
    await vi.waitFor(() => expect(store.getState().diff.state).toBe('ready'));
    expect(store.getState().diff.result?.summary.status).toEqual({ from: 'failed', to: 'done' });
    expect(fake.calls.find((c) => c.method === 'diffVersions')?.input).toEqual({ taskId: 'a', a: 1, b: 2 });
  });
});

describe('task filtering', () => {
  const fake = new FakeApi();
  beforeAll(() => {
    for (const cp of [
      makeCheckpoint('ok', { status: 'done', task_name: 'Publish docs', run: { created_at: 'x', updated_at: '2026-01-03T00:00:00Z' } }),
      makeCheckpoint('broken', { status: 'failed', run: { created_at: 'x', updated_at: '2026-01-02T00:00:00Z' } }),
      makeCheckpoint('asks', { status: 'waiting_approval', run: { created_at: 'x', updated_at: '2026-01-01T00:00:00Z' } }),
    ])
      fake.add(cp);
  });

  it('shows what needs attention, most urgent first', async () => {
    const tasks = await fake.api.listTasks({});
    const attention = filterTasks(tasks, { status: 'attention', query: '' });
    expect(attention.map((t) => t.task_id)).toEqual(['asks', 'broken']);
    expect(tasks.filter(needsAttention)).toHaveLength(2);
  });

  it('matches every search word against name, id and phase', async () => {
    const tasks = await fake.api.listTasks({});
    expect(filterTasks(tasks, { status: 'all', query: 'publish DOCS' }).map((t) => t.task_id)).toEqual(['ok']);
    expect(filterTasks(tasks, { status: 'all', query: 'summarizing' })).toHaveLength(3);
    expect(filterTasks(tasks, { status: 'done', query: '' }).map((t) => t.task_id)).toEqual(['ok']);
  });
});
