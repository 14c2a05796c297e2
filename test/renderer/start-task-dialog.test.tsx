// @vitest-environment jsdom
/**
 * The New-task dialog lists every agent the directory offers, including the
 * ones that cannot be started (a registered module that does not load, a bad
 * waystation.config.json) with their reason; it lists them again each time it
 * opens, and the store reloads that list when the host announces the same
 * folder again because its configuration changed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { act } from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import type { AgentInfo, WaystationApi } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import { StartTaskDialog } from '../../renderer/src/components/start-task-dialog.js';
import { StoreContext, type AppStore } from '../../renderer/src/store/app-store.js';
import { disposeStores, newStore } from './app-harness.js';
import { FakeApi } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const builtin: AgentInfo = {
  name: 'md-summarizer',
  description: 'Summarizes markdown',
  options_schema: { type: 'object', properties: {} },
  origin: 'builtin',
};
const broken: AgentInfo = {
  name: 'my-agent',
  description: '',
  options_schema: {},
  origin: 'registered',
  problem: './agents/my-agent.ts threw while loading: SyntaxError: Unexpected token',
};
const fine: AgentInfo = {
  name: 'word-counter',
  description: 'Counts words',
  options_schema: { type: 'object', properties: {} },
  origin: 'registered',
};

/** The fake host, answering listAgents with whatever `agents` holds at the time of the call. */
function hostWith(fake: FakeApi, agents: { current: AgentInfo[] }): WaystationApi {
  return {
    ...fake.api,
    listAgents: async (i) => {
      fake.calls.push({ method: 'listAgents', input: i });
      return agents.current;
    },
  };
}

const setup = newStore;
afterEach(disposeStores);

async function openDialog(agents: AgentInfo[]): Promise<AppStore> {
  const store = setup(hostWith(new FakeApi(), { current: agents }));
  await act(() => store.getState().init());
  render(
    <StoreContext.Provider value={store}>
      <StartTaskDialog />
    </StoreContext.Provider>,
  );
  act(() => store.getState().setStartDialogOpen(true));
  // jsdom has no modal dialogs (showModal does nothing), so queries below look inside the closed <dialog> with `hidden`.
  return store;
}

describe('the New-task dialog', () => {
  it('shows a registered agent that does not load, with its reason, and does not let it be chosen', async () => {
    await openDialog([builtin, broken, fine]);
    const select = screen.getByRole('combobox', { name: /^Agent/, hidden: true }) as HTMLSelectElement;
    const options = within(select).getAllByRole('option', { hidden: true }) as HTMLOptionElement[];
    expect(options.map((o) => [o.textContent, o.disabled])).toEqual([
      ['md-summarizer', false],
      ['word-counter', false],
      ['my-agent (cannot be started)', true],
    ]);
    expect(options[2].title).toBe(broken.problem);
    const reasons = screen.getByRole('list', { name: 'Agents that cannot be started', hidden: true });
    expect(reasons.textContent).toContain(`my-agent: ${broken.problem}`);
    // What is selected, and what Start would start, is a startable agent.
    expect(select.value).toBe('md-summarizer');
    expect((screen.getByRole('button', { name: 'Start task', hidden: true }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('says a URL option is not a URL as it is typed, and starts nothing until it is one', async () => {
    const withUrl: AgentInfo = {
      ...builtin,
      options_schema: { type: 'object', properties: { 'publish-url': { type: 'string', format: 'uri' } } },
    };
    await openDialog([withUrl]);
    const field = screen.getByRole('textbox', { name: /^publish-url/, hidden: true });
    const start = () => screen.getByRole('button', { name: 'Start task', hidden: true }) as HTMLButtonElement;
    fireEvent.change(field, { target: { value: 'not a url' } });
    const errors = screen.getByRole('list', { name: 'Option errors', hidden: true });
    expect(errors.textContent).toContain('must be a URL');
    expect(start().disabled).toBe(true);
    fireEvent.change(field, { target: { value: 'http://127.0.0.1:8080/publish' } });
    expect(screen.queryByRole('list', { name: 'Option errors', hidden: true })).toBeNull();
    expect(start().disabled).toBe(false);
  });

  it('keeps itself open with what was typed and says why, when the host refuses the start', async () => {
    const fake = new FakeApi();
    const reason =
      'cannot read the input folder /data/ck/notes ("notes" is read relative to /data/ck): it does not exist; no task was created';
    const api: WaystationApi = {
      ...hostWith(fake, { current: [builtin] }),
      startTask: async () => {
        throw new ApiError('failed', reason);
      },
    };
    const store = setup(api);
    await act(() => store.getState().init());
    render(
      <StoreContext.Provider value={store}>
        <StartTaskDialog />
      </StoreContext.Provider>,
    );
    act(() => store.getState().setStartDialogOpen(true));
    fireEvent.change(screen.getByRole('textbox', { name: /^Task id/, hidden: true }), { target: { value: 'my-notes' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Start task', hidden: true }));
    });
    const why = await screen.findByRole('alert', { name: 'Why the task did not start', hidden: true });
    expect(why.textContent).toContain(reason);
    expect(store.getState().startDialogOpen).toBe(true);
    expect((screen.getByRole('textbox', { name: /^Task id/, hidden: true }) as HTMLInputElement).value).toBe('my-notes');
    // Said in the dialog, where the values to change are; not again in a notice.
    expect(store.getState().notices).toEqual([]);
  });

  it('asks for the agents again each time it opens, so an edited module shows its new options', async () => {
    const fake = new FakeApi();
    const agents = { current: [builtin, fine] };
    const store = setup(hostWith(fake, agents));
    await act(() => store.getState().init());
    render(
      <StoreContext.Provider value={store}>
        <StartTaskDialog />
      </StoreContext.Provider>,
    );
    const asked = () => fake.calls.filter((c) => c.method === 'listAgents').length;
    expect(asked()).toBe(1);

    // The module was edited while the dialog was closed: a new option, a new description.
    agents.current = [
      builtin,
      {
        ...fine,
        description: 'Counts words, per section',
        options_schema: { type: 'object', properties: { per_section: { type: 'boolean', title: 'Per section' } } },
      },
    ];
    await act(async () => store.getState().setStartDialogOpen(true));
    await vi.waitFor(() => expect(asked()).toBe(2));
    await vi.waitFor(() =>
      expect(store.getState().agents.find((a) => a.name === 'word-counter')?.description).toBe('Counts words, per section'),
    );
    const select = screen.getByRole('combobox', { name: /^Agent/, hidden: true });
    act(() => void fireEvent.change(select, { target: { value: 'word-counter' } }));
    expect(screen.getByRole('checkbox', { name: 'Per section', hidden: true })).toBeTruthy();

    // Closing asks nothing; opening again asks again.
    await act(async () => store.getState().setStartDialogOpen(false));
    expect(asked()).toBe(2);
    await act(async () => store.getState().setStartDialogOpen(true));
    await vi.waitFor(() => expect(asked()).toBe(3));
  });

  it('says why nothing can be started when the configuration itself is bad', async () => {
    const badConfig: AgentInfo = {
      name: 'waystation.config.json',
      description: 'the agents registered for this directory',
      options_schema: {},
      origin: 'registered',
      problem: '/tmp/fake/waystation.config.json is not valid JSON (Unexpected end of JSON input); no registered agent is available',
    };
    await openDialog([badConfig]);
    expect(screen.getByText('No agent can be started: fix the problems below.')).toBeTruthy();
    expect(screen.getByRole('list', { name: 'Agents that cannot be started', hidden: true }).textContent).toContain('is not valid JSON');
    expect((screen.getByRole('button', { name: 'Start task', hidden: true }) as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('the store and the agent list', () => {
  it('reloads the agents when the host announces the same folder again (its waystation.config.json changed)', async () => {
    const fake = new FakeApi();
    const agents = { current: [builtin] };
    const store = setup(hostWith(fake, agents));
    await store.getState().init();
    store.getState().selectTask('kept');
    expect(store.getState().agents.map((a) => a.name)).toEqual(['md-summarizer']);

    agents.current = [builtin, fine];
    fake.emit({ type: 'directory-changed', root: '/tmp/fake' });
    await vi.waitFor(() => expect(store.getState().agents.map((a) => a.name)).toEqual(['md-summarizer', 'word-counter']));
    // The same folder: the open task stays open.
    expect(store.getState().selectedTaskId).toBe('kept');
  });

  it('reloads the agents and closes the open task when another folder is opened', async () => {
    const fake = new FakeApi();
    const agents = { current: [builtin, fine] };
    const store = setup(hostWith(fake, agents));
    await store.getState().init();
    store.getState().selectTask('kept');

    agents.current = [builtin];
    fake.directory = { ...fake.directory, root: '/tmp/other' };
    fake.emit({ type: 'directory-changed', root: '/tmp/other' });
    await vi.waitFor(() => expect(store.getState().agents.map((a) => a.name)).toEqual(['md-summarizer']));
    expect(store.getState().selectedTaskId).toBeNull();
  });
});
