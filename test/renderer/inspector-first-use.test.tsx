// @vitest-environment jsdom
/**
 * What a person trying the inspector for the first time runs into: a task
 * that is not there yet, a host that went away, a failure the Errors tab must
 * show, actions offered only when they can be done, counts that agree with
 * their panels, the list's order, and the event timeline. Rendered in jsdom
 * over the in-memory API.
 */
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { disposeStores, newStore, layOutElements, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

// jsdom lays nothing out: the virtualised list is given a size, so it renders its rows.
layOutElements(600);

afterEach(() => {
  disposeStores();
  globalThis.localStorage?.clear();
  document.title = '';
});

/** The app over `fake`, with `taskId` open once its header shows. */
async function openApp(fake: FakeApi, taskId?: string) {
  const store = newStore(fake.api);
  renderApp(store);
  await screen.findByRole('listbox', { name: 'Task list' });
  if (taskId) {
    act(() => store.getState().selectTask(taskId));
    await screen.findByRole('heading', { level: 1, name: `Task ${taskId}` });
  }
  return store;
}

const tab = (name: RegExp) => screen.getByRole('tab', { name });

describe('a task just started', () => {
  it('is waited for until its first version appears, with no "could not open" on the way', async () => {
    const fake = new FakeApi().add(makeCheckpoint('older'));
    const store = await openApp(fake);
    await act(() => store.getState().startTask({ agent: 'md-summarizer', taskId: 'new-task' }));
    await screen.findByText(/Waiting for new-task/);
    expect(screen.queryByText(/Could not open/)).toBeNull();
    expect(store.getState().detailState).toBe('waiting');

    // Its first version is written; the host says so and the view opens it.
    fake.add(makeCheckpoint('new-task', { status: 'running' }));
    act(() => fake.emit({ type: 'task-changed', taskId: 'new-task', version: 1, summary: fake.summaryOf('new-task') }));
    await screen.findByRole('heading', { level: 1, name: 'Task new-task' });
    expect(screen.queryByText(/Could not open/)).toBeNull();
  });

  it('still says a task that is not there does not exist when it was not just started', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = await openApp(fake);
    act(() => store.getState().selectTask('no-such-task'));
    await screen.findByText(/Could not open no-such-task/);
  });
});

describe('the connection indicator', () => {
  it('turns to disconnected as soon as the stream drops, counts down to the retry, and recovers by itself', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = await openApp(fake);
    const status = () => screen.getByRole('status', { name: /^Connection:/ });
    await waitFor(() => expect(status().textContent).toBe('Live'));

    act(() => fake.streamStatus({ state: 'offline', reason: 'lost the connection to the Waystation host', retryAt: Date.now() + 4000 }));
    expect(status().textContent).toMatch(/^Disconnected · retrying in [34] s$/);
    expect(status().parentElement!.getAttribute('title')).toContain('lost the connection');
    // An answer that was in flight when the stream dropped does not paint it live again.
    await act(() => store.getState().init());
    expect(status().textContent).toMatch(/^Disconnected/);

    const lists = fake.count('listTasks');
    act(() => fake.streamStatus({ state: 'live' }));
    expect(status().textContent).toBe('Live');
    // What happened while it was gone is read again.
    await waitFor(() => expect(fake.count('listTasks')).toBeGreaterThan(lists));
  });
});

describe('a host out of reach while a task is open', () => {
  it('says so over the task, disables what needs the host with the reason, and reads the task again once it is back', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    const store = await openApp(fake, 'a');
    const resume = () => screen.getByRole('button', { name: /Resume/ });
    expect(resume().hasAttribute('disabled')).toBe(false);
    expect(screen.queryByRole('region', { name: 'Connection to the host' })).toBeNull();

    act(() => fake.streamStatus({ state: 'offline', reason: 'lost the connection to the Waystation host', retryAt: Date.now() + 4000 }));
    const note = screen.getByRole('status', { name: 'Connection to the host' });
    expect(note.textContent).toContain('Not connected to the Waystation host');
    expect(note.textContent).toContain('the open task is read again as soon as the host is back');
    expect(resume().hasAttribute('disabled')).toBe(true);
    expect(resume().getAttribute('title')).toMatch(/^Disconnected from the Waystation host \(lost the connection/);
    expect(screen.getByRole('button', { name: /Fork from this version/ }).hasAttribute('disabled')).toBe(true);
    expect(screen.getByRole('button', { name: '+ New task' }).hasAttribute('disabled')).toBe(true);
    // Nothing that writes is offered on the plan meanwhile.
    expect(screen.queryByRole('button', { name: /^Edit result of step / })).toBeNull();
    fireEvent.click(tab(/^Artifacts/));
    expect(screen.getByRole('button', { name: /verify/i }).hasAttribute('disabled')).toBe(true);
    fireEvent.click(tab(/^Plan/));

    // Back: the task is read again, and its actions return.
    fake.add(makeCheckpoint('a', { version: 2, phase: 'read again' }));
    const reads = fake.count('getTask');
    act(() => fake.streamStatus({ state: 'live' }));
    await waitFor(() => expect(fake.count('getTask')).toBeGreaterThan(reads));
    await waitFor(() => expect(store.getState().detail?.version).toBe(2));
    expect(screen.queryByRole('status', { name: 'Connection to the host' })).toBeNull();
    expect(resume().hasAttribute('disabled')).toBe(false);
    expect(screen.getAllByRole('button', { name: /^Edit result of step / }).length).toBeGreaterThan(0);
  });

  it('says a refused page is not let in over the open task too, not only when no task is open', async () => {
    const fake = new FakeApi().add(makeCheckpoint('a'));
    await openApp(fake, 'a');
    act(() => fake.streamStatus({ state: 'refused', reason: "this request's token is not this host's" }));
    const alert = screen.getByRole('alert', { name: 'Connection to the host' });
    expect(alert.textContent).toContain('This page is not let in');
    expect(alert.textContent).toContain('open the URL it printed');
    expect(screen.getByRole('button', { name: /Resume/ }).hasAttribute('disabled')).toBe(true);
  });
});

describe('the Errors tab', () => {
  it('shows a failed step’s current error even when the error log is empty, and counts it', async () => {
    const fake = new FakeApi().add(makeCheckpoint('f', { errors: [] }));
    await openApp(fake, 'f');
    expect(within(tab(/^Errors/)).getByText('1')).toBeTruthy();
    fireEvent.click(tab(/^Errors/));
    const current = screen.getByRole('list', { name: 'Current failures' });
    expect(current.textContent).toContain('model returned invalid JSON');
    expect(current.textContent).toContain('summarize');
    expect(screen.queryByText('No errors recorded for this task.')).toBeNull();
  });
});

describe('errors of earlier attempts', () => {
  it('are counted, not raised as current, once the task got past them', async () => {
    const recovered = makeCheckpoint('r', {
      status: 'done',
      plan: [
        { id: 'read', name: 'read notes', status: 'done', attempts: 1 },
        { id: 'summarize', name: 'summarize', status: 'done', attempts: 2 },
      ],
      current_step: 2,
      errors: [{ at: '2026-01-01T00:00:30Z', step_id: 'summarize', what: 'the model timed out' }],
    });
    const fake = new FakeApi().add(recovered).add(makeCheckpoint('f'));
    const store = await openApp(fake, 'r');
    const count = () => within(tab(/^Errors/)).getByText('1');
    expect(count().className).not.toContain('alert');
    fireEvent.click(tab(/^Errors/));
    const log = screen.getByRole('list', { name: 'Recorded errors' });
    expect(log.textContent).toContain('Earlier error');
    expect(log.textContent).toContain('the model timed out');
    expect(log.textContent).not.toContain('not fixed yet');
    expect(within(log).queryByText('Error')).toBeNull();

    // A task whose step still fails keeps the alarm.
    act(() => store.getState().selectTask('f'));
    await screen.findByRole('heading', { level: 1, name: 'Task f' });
    expect(count().className).toContain('alert');
  });
});

describe('actions offered', () => {
  it('offers no Resume on a task whose checkpoint is done, even when its files drifted', async () => {
    const fake = new FakeApi().add(
      makeCheckpoint('d', {
        status: 'done',
        plan: [{ id: 'read', name: 'read', status: 'done', attempts: 1 }],
        current_step: 0,
        total_steps: 1,
      }),
    );
    fake.drifted.add('d');
    await openApp(fake, 'd');
    expect(screen.getByRole('heading', { level: 1 }).parentElement!.textContent).toContain('Drifted');
    expect(screen.queryByRole('button', { name: /Resume/ })).toBeNull();
  });

  it('withdraws Edit result and Resume while a runner drives the task, and offers them again when it exits', async () => {
    const fake = new FakeApi().add(makeCheckpoint('r'));
    await openApp(fake, 'r');
    expect(screen.getByRole('button', { name: 'Edit result of step summarize' })).toBeTruthy();
    expect(screen.getByRole('button', { name: /Resume/ })).toBeTruthy();
    act(() => fake.emit({ type: 'runner', taskId: 'r', state: 'started', detail: 'pid 42' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Edit result of step summarize' })).toBeNull());
    expect(screen.queryByRole('button', { name: /Resume/ })).toBeNull();
    act(() => fake.emit({ type: 'runner', taskId: 'r', state: 'exited', detail: 'code 1' }));
    await screen.findByRole('button', { name: 'Edit result of step summarize' });
  });
});

describe('a directory not trusted', () => {
  const untrusted = (fake: FakeApi) => {
    fake.directory = { ...fake.directory, read_only: true, untrusted: true };
    return fake;
  };

  it('shows the step an interrupted task was cut off in as interrupted, not running', async () => {
    const fake = untrusted(
      new FakeApi().add(
        makeCheckpoint('cut', {
          status: 'running',
          plan: [
            { id: 'read', name: 'read notes', status: 'done', attempts: 1 },
            { id: 'summarize', name: 'summarize', status: 'running', attempts: 1 },
          ],
          current_step: 1,
        }),
      ),
    );
    await openApp(fake, 'cut');
    expect(screen.getByRole('heading', { level: 1 }).parentElement!.textContent).toContain('Interrupted');
    const steps = screen.getByRole('list', { name: 'Plan steps' });
    const cut = within(steps).getAllByRole('listitem')[1];
    expect(cut.textContent).toContain('Interrupted');
    expect(within(steps).queryByText('Running')).toBeNull();
  });

  it('says why Approve and Reject are disabled', async () => {
    const fake = untrusted(
      new FakeApi().add(
        makeCheckpoint('wait', {
          status: 'waiting_approval',
          recovery: {
            mode: 'confirm',
            pending_approval: { id: 'approval-1', requested_at: '2026-01-01T00:02:00Z', plan: { rerun_step: 'summarize' } },
          },
        }),
      ),
    );
    await openApp(fake, 'wait');
    const panel = screen.getByRole('region', { name: 'Resume approval' });
    const note = within(panel).getByRole('note');
    expect(note.textContent).toContain('This folder is not trusted');
    for (const name of ['Approve', 'Reject']) {
      const button = within(panel).getByRole('button', { name });
      expect(button.hasAttribute('disabled')).toBe(true);
      expect(button.getAttribute('title')).toContain('This folder is not trusted');
      expect(button.getAttribute('aria-describedby')).toContain(note.id);
    }
  });
});

describe('a task in an article’s format', () => {
  it('says what resuming will import and asks first; nothing is sent until the person agrees', async () => {
    const fake = new FakeApi().add(
      makeCheckpoint('seed', {
        status: 'running',
        plan: [
          { id: 'step-1', name: '分析需求', status: 'done', attempts: 1 },
          { id: 'step-2', name: '编写代码', status: 'pending', attempts: 0 },
        ],
        current_step: 1,
        total_steps: 2,
        source: { kind: 'import', imported_from: { path: 'seed.json', format: 'article-task-json' } },
      }),
    );
    fake.formats.set('seed', 'article-task-json');
    await openApp(fake, 'seed');
    expect(screen.getByRole('heading', { level: 1 }).parentElement!.textContent).toContain('Interrupted');
    fireEvent.click(screen.getByRole('button', { name: /Resume/ }));
    const panel = screen.getByRole('region', { name: 'Import before resuming' });
    expect(panel.textContent).toContain('seed.json');
    expect(panel.textContent).toContain('the file itself is not changed');
    expect(panel.textContent).toContain('step names stay as recorded');
    expect(panel.textContent).toContain('continues at 编写代码, step 2 of 2.');
    expect(fake.count('resumeTask')).toBe(0);
    fireEvent.click(within(panel).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('region', { name: 'Import before resuming' })).toBeNull();
    expect(fake.count('resumeTask')).toBe(0);

    fireEvent.click(screen.getByRole('button', { name: /Resume/ }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Import and resume' }));
    });
    expect(fake.count('resumeTask')).toBe(1);
  });

  it('offers no working Resume for a task nothing can resume, and says why beside it', async () => {
    const fake = new FakeApi().add(
      makeCheckpoint('article-two', {
        status: 'running',
        plan: [
          { id: 'p1', name: 'select_topic', status: 'done', attempts: 1 },
          { id: 'p2', name: 'draft_article', status: 'pending', attempts: 0 },
        ],
        current_step: 1,
        total_steps: 2,
      }),
    );
    fake.formats.set('article-two', 'article-checkpoint-json');
    // What the host says of it: no agent recorded, and none of its built-ins recognises the format.
    const why = 'no agent Waystation has recognises this task (article-checkpoint-json format): it can be inspected, not resumed';
    fake.agentStatus.set('article-two', { name: null, origin: 'none', available: false, problem: why });
    await openApp(fake, 'article-two');
    const resume = screen.getByRole('button', { name: /Resume/ });
    expect(resume.hasAttribute('disabled')).toBe(true);
    expect(resume.getAttribute('title')).toContain('No agent Waystation has recognises this task');
    const note = screen.getByRole('note', { name: 'Cannot be resumed' });
    expect(note.textContent).toContain('Nothing can resume this task here.');
    expect(resume.getAttribute('aria-describedby')).toBe(note.id);
    fireEvent.click(resume);
    expect(screen.queryByRole('region', { name: 'Import before resuming' })).toBeNull();
    expect(fake.count('resumeTask')).toBe(0);
  });

  it('names the step a resume continues at without saying "step" twice', async () => {
    const fake = new FakeApi().add(
      makeCheckpoint('legacy', {
        status: 'running',
        plan: [
          { id: 'step-1', name: 'step 1', status: 'done', attempts: 1 },
          { id: 'step-2', name: 'step 2', status: 'done', attempts: 1 },
          { id: 'step-3', name: 'step 3', status: 'pending', attempts: 0 },
        ],
        current_step: 2,
        total_steps: 3,
      }),
    );
    fake.formats.set('legacy', 'article-task-json');
    await openApp(fake, 'legacy');
    fireEvent.click(screen.getByRole('button', { name: /Resume/ }));
    const panel = screen.getByRole('region', { name: 'Import before resuming' });
    expect(panel.textContent).toContain('The run continues at step 3, step 3 of 3.');
    expect(panel.textContent).not.toMatch(/step step/);
  });

  it('resumes a Waystation task at once, with nothing to confirm', async () => {
    const fake = new FakeApi().add(makeCheckpoint('native'));
    await openApp(fake, 'native');
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /Resume/ }));
    });
    expect(fake.count('resumeTask')).toBe(1);
    expect(screen.queryByRole('region', { name: 'Import before resuming' })).toBeNull();
  });
});

describe('counts and headers agree with what is shown', () => {
  it('counts the versions the History tab lists and the messages the Messages tab shows', async () => {
    const fake = new FakeApi().add(makeCheckpoint('h', { version: 3, history: { count: 4, head: null } }));
    fake.messages.set('h', []);
    await openApp(fake, 'h');
    // One version listed (the others are not in the history), so History says 1, not 3.
    await waitFor(() => expect(within(tab(/^History/)).getByText('1')).toBeTruthy());
    fireEvent.click(tab(/^Messages/));
    await screen.findByText(/No messages/);
    expect(within(tab(/^Messages/)).queryByText('4')).toBeNull();
  });

  it('shows the status of the version viewed in the header, not the latest one’s', async () => {
    const fake = new FakeApi()
      .add(makeCheckpoint('v', { version: 1, status: 'failed' }))
      .add(makeCheckpoint('v', { version: 2, status: 'done', source: { kind: 'runtime' } }));
    const store = await openApp(fake, 'v');
    const titleRow = () => screen.getByRole('heading', { level: 1 }).parentElement!;
    expect(titleRow().textContent).toContain('Done');
    act(() => store.getState().viewVersion(1));
    await screen.findByRole('status', { name: 'Older version' });
    await waitFor(() => expect(titleRow().textContent).toContain('Failed'));
    expect(titleRow().textContent).not.toContain('Done');
  });
});

describe('live activity', () => {
  it('lists a version once, drops empty runner lines and runner task-events, and names the real directory in hints', async () => {
    const fake = new FakeApi().add(makeCheckpoint('n', { resume_hint: 'run: waystation resume <DIR> n' }));
    fake.directory = { ...fake.directory, root: '/tmp/my checkpoints' };
    const store = await openApp(fake, 'n');
    expect(screen.getByText("run: waystation resume '/tmp/my checkpoints' n")).toBeTruthy();
    // The log's lines are written as they are heard of here: the timeline keeps them in the order they came.
    const now = () => new Date().toISOString();
    act(() => {
      fake.emit({ type: 'task-changed', taskId: 'n', version: 2 });
      fake.emit({ type: 'task-changed', taskId: 'n', version: 2 });
      fake.emit({ type: 'runner', taskId: 'n', state: 'output', detail: '  ' });
      fake.emit({ type: 'task-event', taskId: 'n', event: { id: 1, type: 'runner', at: now() } });
      fake.emit({ type: 'task-event', taskId: 'n', event: { id: 2, type: 'step-start', at: now(), step_id: 'read' } });
      fake.emit({ type: 'runner', taskId: 'n', state: 'exited', detail: 'next: waystation resume <DIR> n' });
    });
    const lines = store.getState().activity.n.map((e) => e.text);
    expect(lines).toEqual(['version 2 written', 'step read started', 'Runner exited: next: waystation resume <DIR> n']);
    const feed = screen.getByRole('log', { name: 'Live activity' });
    expect(feed.textContent).toContain("waystation resume '/tmp/my checkpoints' n");
    expect(feed.textContent).not.toContain('<DIR>');
  });

  it('lists every version the log records and keeps the timeline in the order things happened, however they arrive', async () => {
    const fake = new FakeApi().add(makeCheckpoint('r', { status: 'running' }));
    const store = await openApp(fake, 'r');
    // The log's times: a few seconds ago, before the runner's line was heard of here.
    const start = Date.now() - 10_000;
    const at = (s: number) => new Date(start + s * 1000).toISOString();
    act(() => {
      // The runner prints as it goes; the watcher hands over the task's log a moment later, three saves in one batch,
      // and the host announces the batch's newest version only, with the row of that version.
      fake.emit({ type: 'runner', taskId: 'r', state: 'output', detail: 'read: done' });
      fake.emit({ type: 'task-event', taskId: 'r', event: { id: 4, type: 'version', at: at(1), version: 2 } });
      fake.emit({ type: 'task-event', taskId: 'r', event: { id: 5, type: 'step-finish', at: at(2), step_id: 'read' } });
      fake.emit({ type: 'task-event', taskId: 'r', event: { id: 6, type: 'version', at: at(3), version: 3 } });
      fake.emit({ type: 'task-event', taskId: 'r', event: { id: 7, type: 'step-start', at: at(4), step_id: 'summarize' } });
      fake.emit({ type: 'task-event', taskId: 'r', event: { id: 8, type: 'version', at: at(5), version: 4 } });
      fake.emit({ type: 'task-changed', taskId: 'r', version: 4, summary: { ...fake.summaryOf('r'), version: 4, updated_at: at(5) } });
    });
    const entries = store.getState().activity.r;
    expect(entries.map((e) => e.text)).toEqual([
      'version 2 written',
      'step read finished',
      'version 3 written',
      'step summarize started',
      'version 4 written',
      'read: done',
    ]);
    const times = entries.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('lists what a host started again reports, though it numbers its events from 1 again', async () => {
    const fake = new FakeApi().add(makeCheckpoint('h', { status: 'running' }));
    const store = await openApp(fake, 'h');
    act(() => {
      fake.emit({ type: 'runner', taskId: 'h', state: 'started', detail: 'resume in process 7' });
      fake.emit({ type: 'runner', taskId: 'h', state: 'output', detail: 'first run: step 1' });
    });
    // The host restarts: its events are numbered from 1 again, and it tells the page to read everything again.
    const directoryReads = fake.count('getDirectory');
    await act(async () => {
      store.getState().handleEvent({ id: 1, type: 'resync', reason: 'event 2 was not issued by this host; reload everything' });
      store.getState().handleEvent({ id: 2, type: 'runner', taskId: 'h', state: 'started', detail: 'resume in process 8' });
      store.getState().handleEvent({ id: 3, type: 'runner', taskId: 'h', state: 'output', detail: 'second run: step 2' });
    });
    await waitFor(() => expect(fake.count('getDirectory')).toBeGreaterThan(directoryReads));
    expect(store.getState().activity.h.map((e) => e.text)).toEqual([
      'Runner started: resume in process 7',
      'first run: step 1',
      'Runner started: resume in process 8',
      'second run: step 2',
    ]);
  });

  it('takes away what was said about a run once its runner exits, and keeps its errors', async () => {
    const fake = new FakeApi().add(makeCheckpoint('s'));
    const store = await openApp(fake, 's');
    act(() => {
      store.getState().notify('success', 's is running in process 7', 's');
      store.getState().notify('error', 'the agent crashed', 's');
      store.getState().notify('success', 'another task started', 'other');
    });
    act(() => fake.emit({ type: 'runner', taskId: 's', state: 'exited', detail: 'code 1' }));
    expect(store.getState().notices.map((n) => n.text)).toEqual(['the agent crashed', 'another task started']);
  });
});

describe('the plan', () => {
  it('marks a step whose result a person edited, with the version of the edit', async () => {
    const fake = new FakeApi().add(makeCheckpoint('e'));
    await openApp(fake, 'e');
    fake.add(
      makeCheckpoint('e', {
        version: 2,
        status: 'halted',
        source: { kind: 'human-edit', actor: 'fay', edit: { step_id: 'summarize', before: null, after: { summary: 'ok' } } },
      }),
    );
    act(() => fake.emit({ type: 'task-changed', taskId: 'e', version: 2 }));
    const mark = await screen.findByText(/edited by fay \(v2\)/);
    expect(mark.closest('li')!.textContent).toContain('summarize');
    expect(screen.getAllByText(/edited by/)).toHaveLength(1);
  });
});

describe('a step’s model calls', () => {
  it('shows each call of the step with its prompt, response, tokens, latency, and the failed call’s error', async () => {
    const fake = new FakeApi().add(
      makeCheckpoint('m', {
        history: { count: 4, head: null },
        run: {
          created_at: '2026-01-01T00:00:00Z',
          updated_at: '2026-01-01T00:01:00Z',
          llm_calls: [
            { step_id: 'read', model: 'gpt-x', tokens_in: 10, tokens_out: 5, latency_ms: 200 },
            {
              step_id: 'summarize',
              model: 'gpt-x',
              tokens_in: 0,
              tokens_out: 0,
              latency_ms: 30_000,
              retries: 2,
              retry_reasons: ['timeout'],
              error: 'the model timed out',
            },
            { step_id: 'summarize', model: 'gpt-x', tokens_in: 120, tokens_out: 40, latency_ms: 1500 },
          ],
        },
      }),
    );
    fake.messages.set('m', [
      { role: 'user', content: 'read the notes', step_id: 'read', call_key: 'k1' },
      { role: 'assistant', content: 'notes read', step_id: 'read', call_key: 'k1' },
      { role: 'user', content: 'Summarise the notes', step_id: 'summarize', call_key: 'k2' },
      { role: 'assistant', content: '{"summary": 3}', step_id: 'summarize', call_key: 'k2', model: 'gpt-x' },
    ]);
    await openApp(fake, 'm');
    fireEvent.click(screen.getByRole('button', { name: 'Show model calls of step summarize' }));
    const calls = await screen.findByRole('region', { name: 'Model calls of step summarize' });
    const items = within(calls).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0].textContent).toContain('the model timed out');
    expect(items[0].textContent).toContain('2 retries');
    expect(items[0].textContent).toContain('30 s');
    expect(items[1].textContent).toContain('120 → 40 tok');
    expect(items[1].textContent).toContain('1.5 s');
    expect(within(items[1]).getByRole('group', { name: 'Prompt of call 2 of step summarize', hidden: true }).textContent).toBe(
      'Summarise the notes',
    );
    expect(within(items[1]).getByRole('group', { name: 'Response of call 2 of step summarize' }).textContent).toBe('{"summary": 3}');
    expect(calls.textContent).not.toContain('notes read');
  });
});

describe('notifications', () => {
  const waitingApproval = (id: string, version: number) =>
    makeCheckpoint(id, {
      version,
      status: 'waiting_approval',
      recovery: {
        mode: 'confirm',
        pending_approval: {
          id: 'ap-1',
          requested_at: '2026-01-01T00:02:00Z',
          plan: { rerun_step: 'summarize', probe_effects: [], retry_effects: [], drift: [] },
        },
      },
    });

  it('notifies through the desktop host when a task starts waiting, not for those already waiting, and counts them in the title', async () => {
    const fake = new FakeApi().add(waitingApproval('already', 1)).add(makeCheckpoint('w'));
    fake.desktopNotifications = true;
    await openApp(fake);
    await waitFor(() => expect(document.title).toBe('(1) Waystation'));
    expect(fake.count('showNotification')).toBe(0);

    fake.add(waitingApproval('w', 2));
    act(() => fake.emit({ type: 'task-changed', taskId: 'w', version: 2, summary: fake.summaryOf('w') }));
    await waitFor(() => expect(fake.count('showNotification')).toBe(1));
    expect(fake.calls.find((c) => c.method === 'showNotification')!.input).toMatchObject({
      title: 'Task w (w) waits for your approval',
      taskId: 'w',
    });
    await waitFor(() => expect(document.title).toBe('(2) Waystation'));
    // The same state again is no news.
    act(() => fake.emit({ type: 'task-changed', taskId: 'w', version: 2, summary: fake.summaryOf('w') }));
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.count('showNotification')).toBe(1);
  });

  it('notifies when a run shown running fails or stops with nothing driving it; not of one stopped before, nor of a stop asked here', async () => {
    const fake = new FakeApi()
      .add(makeCheckpoint('killed', { status: 'running' }))
      .add(makeCheckpoint('breaks', { status: 'running' }))
      .add(makeCheckpoint('asked', { status: 'running' }))
      .add(makeCheckpoint('earlier', { status: 'running' }));
    for (const id of ['killed', 'breaks', 'asked']) fake.driven.add(id);
    fake.desktopNotifications = true;
    const store = await openApp(fake, 'asked');
    await waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === 'killed')?.display_status).toBe('running'));
    // Interrupted when the list loaded: what was there already is not news.
    expect(store.getState().tasks.find((t) => t.task_id === 'earlier')?.display_status).toBe('interrupted');
    const notified = () => fake.calls.filter((c) => c.method === 'showNotification').map((c) => (c.input as { title: string }).title);

    // Its runner killed: no file changes, the host sends the row again (running-rows.ts).
    fake.driven.delete('killed');
    act(() => fake.emit({ type: 'task-changed', taskId: 'killed', version: null, summary: fake.summaryOf('killed') }));
    await waitFor(() => expect(notified()).toEqual(['Task killed (killed) stopped before it finished']));

    fake.add(makeCheckpoint('breaks', { version: 2, status: 'failed', phase: 'calling the API' }));
    fake.driven.delete('breaks');
    act(() => fake.emit({ type: 'task-changed', taskId: 'breaks', version: 2, summary: fake.summaryOf('breaks') }));
    await waitFor(() => expect(notified()).toHaveLength(2));
    expect(fake.calls.filter((c) => c.method === 'showNotification')[1].input).toMatchObject({
      title: 'Task breaks (breaks) failed',
      body: 'At: calling the API',
      taskId: 'breaks',
    });

    // Stopped from this window: the person knows; the runner's exit may be heard before the row changes.
    await act(async () => {
      await store.getState().stopTask('asked');
    });
    expect(store.getState().stopRequests.asked).toBeDefined();
    act(() => store.getState().forgetStop('asked'));
    fake.driven.delete('asked');
    act(() => fake.emit({ type: 'task-changed', taskId: 'asked', version: null, summary: fake.summaryOf('asked') }));
    await waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === 'asked')?.display_status).toBe('interrupted'));
    await new Promise((r) => setTimeout(r, 200));
    expect(notified()).toHaveLength(2);

    // Run again and killed again, after the stop asked here was seen to end: news once more.
    fake.driven.add('asked');
    act(() => fake.emit({ type: 'task-changed', taskId: 'asked', version: null, summary: fake.summaryOf('asked') }));
    await waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === 'asked')?.display_status).toBe('running'));
    fake.driven.delete('asked');
    act(() => fake.emit({ type: 'task-changed', taskId: 'asked', version: null, summary: fake.summaryOf('asked') }));
    await waitFor(() => expect(notified()).toEqual(expect.arrayContaining(['Task asked (asked) stopped before it finished'])));
    expect(notified()).toHaveLength(3);
  });

  it('in a browser, asks for permission on a click and then shows the browser’s notification', async () => {
    const shown: { title: string; body?: string }[] = [];
    class FakeNotification {
      static permission: NotificationPermission = 'default';
      static requestPermission = async () => (FakeNotification.permission = 'granted');
      onclick: (() => void) | null = null;
      constructor(title: string, opts?: { body?: string }) {
        shown.push({ title, body: opts?.body });
      }
    }
    const before = globalThis.Notification;
    (globalThis as { Notification?: unknown }).Notification = FakeNotification;
    try {
      const fake = new FakeApi().add(makeCheckpoint('b'));
      await openApp(fake);
      await act(async () => {
        fireEvent.click(screen.getByRole('button', { name: 'Notify me' }));
      });
      await screen.findByText(/Notifications on/);
      fake.add(waitingApproval('b', 2));
      act(() => fake.emit({ type: 'task-changed', taskId: 'b', version: 2, summary: fake.summaryOf('b') }));
      await waitFor(() => expect(shown).toHaveLength(1));
      expect(shown[0].title).toBe('Task b (b) waits for your approval');
    } finally {
      (globalThis as { Notification?: unknown }).Notification = before;
    }
  });
});

describe('the directory overview', () => {
  it('shows tasks by status, tokens and cost over the directory and the slowest steps, each leading to its tasks', async () => {
    const run = (tokens_in: number, tokens_out: number, cost_usd: number) => ({
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:01:00Z',
      tokens_in,
      tokens_out,
      cost_usd,
    });
    const fake = new FakeApi()
      .add(
        makeCheckpoint('slow', {
          run: run(1000, 200, 0.01),
          plan: [{ id: 'crawl', name: 'crawl the site', status: 'done', attempts: 1, elapsed_ms: 95_000 }],
          current_step: 0,
          total_steps: 1,
          status: 'done',
        }),
      )
      .add(makeCheckpoint('f1', { run: run(500, 100, 0.005) }))
      .add(makeCheckpoint('f2', { run: run(0, 0, 0) }));
    const store = await openApp(fake);
    const byStatus = await screen.findByRole('group', { name: 'Tasks by status' });
    expect(byStatus.textContent).toContain('Failed 2');
    expect(byStatus.textContent).toContain('Done 1');
    const figures = await screen.findByLabelText('Tokens and cost over the directory');
    expect(figures.textContent).toContain('1.5k in · 300 out tokens');
    expect(figures.textContent).toContain('$0.0150');
    expect(figures.textContent).toContain('over 3 tasks');
    const slowest = screen.getByRole('list', { name: 'Slowest steps' });
    expect(within(slowest).getAllByRole('listitem')[0].textContent).toContain('1 min 35 s crawl the site in slow');

    fireEvent.click(within(byStatus).getByRole('button', { name: /Failed/ }));
    expect(store.getState().filter.status).toBe('failed');
    fireEvent.click(within(slowest).getByRole('button', { name: /crawl the site/ }));
    expect(store.getState().selectedTaskId).toBe('slow');
  });

  it('opens a slowest step at that step, in the Plan tab, whichever tab was used last', async () => {
    const fake = new FakeApi().add(makeCheckpoint('other')).add(
      makeCheckpoint('slow', {
        plan: [
          { id: 'fetch', name: 'fetch the pages', status: 'done', attempts: 1, elapsed_ms: 2_000 },
          { id: 'crawl', name: 'crawl the site', status: 'done', attempts: 1, elapsed_ms: 95_000 },
        ],
        current_step: 2,
        status: 'done',
      }),
    );
    const store = await openApp(fake, 'other');
    fireEvent.click(tab(/^Artifacts/));
    const slowest = await screen.findByRole('list', { name: 'Slowest steps' });
    fireEvent.click(within(slowest).getByRole('button', { name: /crawl the site/ }));
    await screen.findByRole('heading', { level: 1, name: 'Task slow' });
    expect(tab(/^Plan/).getAttribute('aria-selected')).toBe('true');
    await waitFor(() => expect((document.activeElement as HTMLElement | null)?.textContent).toContain('crawl the site'));
    expect(document.activeElement?.tagName).toBe('LI');
    expect(store.getState().stepFocus).toBeNull();
  });
});

describe('the task list', () => {
  function three() {
    const fake = new FakeApi();
    for (const [id, name, at] of [
      ['t1', 'charlie', '2026-01-01T00:03:00Z'],
      ['t2', 'alpha', '2026-01-01T00:01:00Z'],
      ['t3', 'bravo', '2026-01-01T00:02:00Z'],
    ]) {
      fake.add(makeCheckpoint(id, { task_name: name, run: { created_at: at, updated_at: at } }));
    }
    return fake;
  }
  const rows = () =>
    within(screen.getByRole('listbox', { name: 'Task list' }))
      .getAllByRole('option')
      .map((r) => r.id);

  it('lets a person order it by name, which a new version does not reorder', async () => {
    const fake = three();
    const store = await openApp(fake);
    await waitFor(() => expect(rows()).toEqual(['task-row-t1', 'task-row-t3', 'task-row-t2']));
    fireEvent.change(screen.getByRole('combobox', { name: 'Order' }), { target: { value: 'name' } });
    expect(rows()).toEqual(['task-row-t2', 'task-row-t3', 'task-row-t1']);
    act(() => store.getState().selectTask('t3'));
    fake.add(makeCheckpoint('t2', { version: 2, task_name: 'alpha', run: { created_at: 'x', updated_at: '2026-01-01T00:09:00Z' } }));
    act(() => fake.emit({ type: 'task-changed', taskId: 't2', version: 2, summary: fake.summaryOf('t2') }));
    await waitFor(() => expect(store.getState().tasks.find((t) => t.task_id === 't2')?.version).toBe(2));
    expect(rows()).toEqual(['task-row-t2', 'task-row-t3', 'task-row-t1']);
  });

  it('moves from a filtered search into the list with the first match active', async () => {
    const fake = three();
    const store = await openApp(fake);
    const search = screen.getByRole('searchbox', { name: 'Search tasks' });
    fireEvent.change(search, { target: { value: 'bravo' } });
    fireEvent.keyDown(search, { key: 'ArrowDown' });
    const list = screen.getByRole('listbox', { name: 'Task list' });
    expect(document.activeElement).toBe(list);
    expect(store.getState().selectedTaskId).toBe('t3');
    expect(list.getAttribute('aria-activedescendant')).toBe('task-row-t3');
  });
});

describe("a host that refuses the page's token", () => {
  it('is not shown as an empty directory: the page says what to open instead, and stops retrying', async () => {
    const fake = new FakeApi().add(makeCheckpoint('listed'));
    await openApp(fake);
    act(() => fake.streamStatus({ state: 'refused', reason: "this request's token is not this host's" }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('This page is not let in');
    expect(alert.textContent).toContain('open the URL it printed');
    expect(screen.queryByText('Select a task')).toBeNull();
    expect(screen.getByRole('status', { name: 'Connection: Not connected: token refused' })).toBeTruthy();
    // A drop reported later by another path does not turn it back into a countdown.
    act(() => fake.streamStatus({ state: 'offline', reason: 'lost', retryAt: Date.now() + 1000 }));
    expect(screen.getByRole('status', { name: 'Connection: Not connected: token refused' })).toBeTruthy();
  });
});

describe('Compare latest with previous', () => {
  it('moves along to the newest two as versions arrive', async () => {
    const fake = new FakeApi()
      .add(makeCheckpoint('moving', { version: 1, phase: 'one' }))
      .add(makeCheckpoint('moving', { version: 2, phase: 'two', source: { kind: 'runtime' } }));
    await openApp(fake, 'moving');
    fireEvent.click(tab(/^History/));
    fireEvent.click(await screen.findByRole('button', { name: 'Compare latest with previous' }));
    const pairs = () =>
      fake.calls.filter((c) => c.method === 'diffVersions').map((c) => [(c.input as { a: number }).a, (c.input as { b: number }).b]);
    await waitFor(() => expect(pairs().at(-1)).toEqual([1, 2]));

    fake.add(makeCheckpoint('moving', { version: 3, phase: 'three', source: { kind: 'runtime' } }));
    act(() => fake.emit({ type: 'task-changed', taskId: 'moving', version: 3 }));
    await waitFor(() => expect(pairs().at(-1)).toEqual([2, 3]));
  });
});

describe('a fork of a version mid-run', () => {
  it('is shown held by the fork, from where, not as a run a person stopped', async () => {
    const at = new Date().toISOString();
    const fake = new FakeApi().add(
      makeCheckpoint('forked', {
        status: 'running',
        source: { kind: 'fork', actor: 'fay', note: 'forked from parent at version 2', forked_from: { task_id: 'parent', version: 2 } },
        forked_from: { task_id: 'parent', version: 2 },
        recovery: {
          mode: 'manual',
          auto_attempts: 0,
          decisions: [],
          pending_approval: null,
          stopped: { by: 'fay', at, reason: 'forked from parent at version 2' },
        },
      }),
    );
    await openApp(fake, 'forked');
    const note = screen.getByRole('note', { name: 'Held after a fork' });
    expect(note.textContent).toContain('forked from parent at version 2 by fay');
    expect(screen.queryByRole('note', { name: 'Stopped by a person' })).toBeNull();
  });

  it('is shown held though it carries no stop, and stopped by whoever stops it afterwards', async () => {
    const fork = { task_id: 'parent', version: 2 };
    const fake = new FakeApi().add(
      makeCheckpoint('forked', {
        status: 'running',
        source: { kind: 'fork', actor: 'fay', note: 'forked from parent at version 2', forked_from: fork },
        forked_from: fork,
      }),
    );
    await openApp(fake, 'forked');
    expect(screen.getByRole('note', { name: 'Held after a fork' }).textContent).toContain('forked from parent at version 2 by fay');

    const at = new Date().toISOString();
    fake.add(
      makeCheckpoint('forked', {
        version: 2,
        status: 'running',
        source: { kind: 'stop', actor: 'gus' },
        forked_from: fork,
        recovery: { mode: 'manual', auto_attempts: 0, decisions: [], pending_approval: null, stopped: { by: 'gus', at } },
      }),
    );
    act(() => fake.emit({ type: 'task-changed', taskId: 'forked', version: 2 }));
    const stopped = await screen.findByRole('note', { name: 'Stopped by a person' });
    expect(stopped.textContent).toContain('by gus');
    expect(screen.queryByRole('note', { name: 'Held after a fork' })).toBeNull();
  });
});

describe('a task removed from the directory while it is shown', () => {
  it('is no longer shown with its actions: the view says it cannot be opened', async () => {
    const fake = new FakeApi().add(makeCheckpoint('gone'));
    await openApp(fake, 'gone');
    await screen.findByRole('heading', { level: 1, name: /gone/ });
    fake.tasks.delete('gone');
    act(() => fake.emit({ type: 'task-removed', taskId: 'gone' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not open gone');
    expect(screen.queryByRole('button', { name: /Fork/ })).toBeNull();
  });
});

describe('the Messages tab of a task folder made anew under the id', () => {
  it('shows the new conversation, though the new task stands at the version the old one did', async () => {
    const first = makeCheckpoint('again', { version: 1, history: { count: 2, head: `sha256:${'a'.repeat(64)}@1` } });
    const fake = new FakeApi().add(first);
    fake.messages.set('again', [
      { role: 'user', content: 'the old question' },
      { role: 'assistant', content: 'the old answer' },
    ]);
    await openApp(fake, 'again');
    fireEvent.click(tab(/^Messages/));
    await screen.findByText('the old answer');

    fake.tasks.set('again', [makeCheckpoint('again', { version: 1, history: { count: 1, head: `sha256:${'b'.repeat(64)}@1` } })]);
    fake.messages.set('again', [{ role: 'user', content: 'the new question' }]);
    fake.rewrittenHistories.add('again');
    act(() => fake.emit({ type: 'task-changed', taskId: 'again', version: 1 }));
    await screen.findByText('the new question');
    expect(screen.queryByText('the old answer')).toBeNull();
  });
});

describe('the Events tab', () => {
  it('shows the event log as a timeline, filters it by type and text, and follows new events live', async () => {
    const fake = new FakeApi().add(makeCheckpoint('ev'));
    fake.events.set('ev', [
      { id: 1, type: 'runner', at: '2026-01-01T00:00:00Z', data: { state: 'started', pid: 7 } },
      { id: 2, type: 'step-start', at: '2026-01-01T00:00:01Z', step_id: 'read' },
      { id: 3, type: 'version', at: '2026-01-01T00:00:02Z', version: 1 },
      { id: 4, type: 'step-start', at: '2026-01-01T00:00:03Z', step_id: 'summarize' },
    ]);
    await openApp(fake, 'ev');
    fireEvent.click(tab(/^Events/));
    const log = await screen.findByRole('log', { name: 'Event timeline' });
    expect(within(log).getAllByRole('listitem')).toHaveLength(4);
    expect(log.textContent).toContain('version 1');
    expect(log.textContent).toContain('"pid":7');

    // Types off and on, and a text filter.
    fireEvent.click(within(screen.getByRole('group', { name: 'Event types shown' })).getByRole('button', { name: /step started/ }));
    expect(within(log).getAllByRole('listitem')).toHaveLength(2);
    fireEvent.click(within(screen.getByRole('group', { name: 'Event types shown' })).getByRole('button', { name: /step started/ }));
    fireEvent.change(screen.getByRole('searchbox', { name: 'Filter events' }), { target: { value: 'summarize' } });
    expect(within(log).getAllByRole('listitem')).toHaveLength(1);
    expect(screen.getByText('1 of 4 events')).toBeTruthy();
    fireEvent.change(screen.getByRole('searchbox', { name: 'Filter events' }), { target: { value: '' } });

    // A new event arrives: what follows the last one held is asked for, with that one again to tell the log goes on.
    const logEvents = fake.events.get('ev')!;
    logEvents.push({ id: 5, type: 'step-finish', at: '2026-01-01T00:00:04Z', step_id: 'summarize' });
    act(() =>
      fake.emit({
        type: 'task-event',
        taskId: 'ev',
        event: { id: 5, type: 'step-finish', at: '2026-01-01T00:00:04Z', step_id: 'summarize' },
      }),
    );
    await waitFor(() => expect(within(log).getAllByRole('listitem')).toHaveLength(5));
    const asked = fake.calls.filter((c) => c.method === 'getEvents').map((c) => (c.input as { after?: number }).after ?? 0);
    expect(asked).toEqual([0, 3]);
    expect(
      within(log)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(expect.arrayContaining([expect.stringContaining('summarize')]));

    // The task removed and run again under its name: a log of its own, whose ids start at 1 again, shown alone.
    fake.events.set('ev', [
      { id: 1, type: 'runner', at: '2026-01-02T00:00:00Z', data: { state: 'started', pid: 8 } },
      { id: 2, type: 'step-start', at: '2026-01-02T00:00:01Z', step_id: 'read' },
      { id: 3, type: 'step-finish', at: '2026-01-02T00:00:02Z', step_id: 'read' },
      { id: 4, type: 'version', at: '2026-01-02T00:00:03Z', version: 1 },
      { id: 5, type: 'step-start', at: '2026-01-02T00:00:04Z', step_id: 'write' },
      { id: 6, type: 'step-finish', at: '2026-01-02T00:00:05Z', step_id: 'write' },
    ]);
    act(() =>
      fake.emit({ type: 'task-event', taskId: 'ev', event: { id: 6, type: 'step-finish', at: '2026-01-02T00:00:05Z', step_id: 'write' } }),
    );
    // Read whole again, the timeline is drawn anew.
    const again = () => screen.getByRole('log', { name: 'Event timeline' });
    await waitFor(() => expect(within(again()).getAllByRole('listitem')).toHaveLength(6));
    expect(again().textContent).toContain('"pid":8');
    expect(again().textContent).not.toContain('"pid":7');
  });
});
