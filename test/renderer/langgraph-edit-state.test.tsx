// @vitest-environment jsdom
/**
 * "Edit state" on a LangGraph thread a run may be driving (its newest checkpoint young, so shown running): the
 * dialog says, before anything is previewed, that the run's next checkpoint would follow its own and not the edit.
 * Rendered in jsdom over the in-memory API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/react';
import type { LeaseInfo, TaskDetail } from '../../shared/api/contract.js';
import { LangGraphEditState } from '../../renderer/src/components/langgraph-edit-state.js';
import { StoreContext } from '../../renderer/src/store/app-store.js';
import { disposeStores, newStore } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => disposeStores());

/** A thread's newest version as the host sends it, with `lease` as the LangGraph source reads it. */
async function threadDetail(lease: LeaseInfo): Promise<TaskDetail> {
  const fake = new FakeApi().add(makeCheckpoint('thread-1'));
  const detail = await fake.api.getTask({ taskId: 'thread-1' });
  const checkpoint = {
    ...detail.checkpoint!,
    langgraph: { checkpoint_id: '1f0d3c9a-0000-6000-8000-000000000001', channels: { draft: 'hi' } },
  };
  return { ...detail, checkpoint, lease };
}

function openDialog(detail: TaskDetail) {
  const store = newStore(new FakeApi().api);
  render(
    <StoreContext.Provider value={store}>
      <LangGraphEditState detail={detail} />
    </StoreContext.Provider>,
  );
  fireEvent.click(screen.getByRole('button', { name: 'Edit state…' }));
}

describe('Edit state on a LangGraph thread', () => {
  it('says a run may be driving the thread, and when its newest checkpoint was taken', async () => {
    openDialog(await threadDetail({ held: true, owner: 'a LangGraph run', since: '2026-12-07T16:15:02.000Z' }));
    const note = screen.getByRole('note', { hidden: true });
    expect(note.textContent).toMatch(/^A LangGraph run may be driving this thread: its newest checkpoint was taken at /);
    expect(note.textContent).toContain("The run's next checkpoint follows its own, not this edit");
    expect(note.textContent).toContain('Write once the thread shows interrupted or done.');
  });

  it('says nothing of a run when nothing drives the thread', async () => {
    openDialog(await threadDetail({ held: false }));
    expect(screen.getByRole('textbox', { name: 'Channel values', hidden: true })).toBeTruthy();
    expect(screen.queryByRole('note', { hidden: true })).toBeNull();
  });
});
