// @vitest-environment jsdom
/**
 * A database holding LangGraph's checkpointer tables beside Waystation's schema opens as the Waystation store: the
 * toolbar says that its LangGraph threads are not shown, and how to get them back, as the reading commands do.
 * Rendered in jsdom over the in-memory API.
 */
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { disposeStores, newStore, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => disposeStores());

const URL_SHOWN = 'postgres://me@db.example.com:5432/agents';

/** The app over a database of one task; `alsoLangGraph` as the host reports it. */
async function openDatabase(alsoLangGraph: boolean | undefined) {
  const fake = new FakeApi().add(makeCheckpoint('t1'));
  fake.directory = { ...fake.directory, root: URL_SHOWN, ...(alsoLangGraph === undefined ? {} : { also_holds_langgraph: alsoLangGraph }) };
  const store = newStore(fake.api);
  renderApp(store);
  await waitFor(() => expect(store.getState().tasksState).toBe('ready'));
  return store;
}

describe('a database that also holds LangGraph’s checkpointer tables', () => {
  it('says in the toolbar that its LangGraph threads are not shown, and on asking, how to get them back', async () => {
    await openDatabase(true);
    const toolbar = screen.getByRole('banner');
    fireEvent.click(within(toolbar).getByRole('button', { name: 'LangGraph threads not shown' }));
    const dialog = screen.getByRole('dialog', { name: 'This database also holds LangGraph threads' });
    expect(dialog.textContent).toContain(`${URL_SHOWN} holds LangGraph's checkpointer tables beside Waystation's`);
    expect(dialog.textContent).toContain(`(waystation copy ${URL_SHOWN} DIR)`);
    expect(dialog.textContent).toContain('docs/POSTGRES.md, “A LangGraph database”');
    act(() => fireEvent.click(within(dialog).getByRole('button', { name: 'Close' })));
    expect(screen.queryByRole('heading', { name: 'This database also holds LangGraph threads' })).toBeNull();
  });

  it('is not said of a store of Waystation’s alone, nor by a host that predates the note', async () => {
    await openDatabase(false);
    expect(screen.queryByRole('button', { name: 'LangGraph threads not shown' })).toBeNull();
    disposeStores();
    await openDatabase(undefined);
    expect(screen.queryByRole('button', { name: 'LangGraph threads not shown' })).toBeNull();
  });
});
