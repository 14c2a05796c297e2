// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import { DiffView } from '../../renderer/src/components/diff-view.js';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import { summarizeLangGraphChange } from '../../shared/diff/langgraph-change.js';
import type { DiffResult } from '../../shared/api/contract.js';
import { makeCheckpoint } from './fake-api.js';

afterEach(cleanup);

const a = makeCheckpoint('thread', { version: 2 });
const b = makeCheckpoint('thread', { version: 5 });

function diff(langgraph?: DiffResult['langgraph']): DiffResult {
  return { a: 2, b: 5, summary: summarizeChange(a, b), entries: structuredDiff(a, b), ...(langgraph ? { langgraph } : {}) };
}

describe("the diff of two LangGraph checkpoints, in LangGraph's words", () => {
  it('says which messages were added and removed, which channels changed, and the next nodes', () => {
    const change = summarizeLangGraphChange(
      { checkpoint_id: 'c2', next: ['agent'], channels: { draft: 'Hi', city: 'Paris' } },
      { checkpoint_id: 'c5', next: [], channels: { draft: 'Dear team', tone: 'warm' } },
      [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: 'Sunny' },
      ],
      [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: 'It is sunny in Paris.' },
        { role: 'user', content: 'Thanks' },
      ],
    );
    render(<DiffView diff={diff(change)} />);
    const words = screen.getByRole('region', { name: 'LangGraph changes from version 2 to version 5' });
    const added = within(words).getByRole('list', { name: 'Messages added' });
    expect(
      within(added)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['assistant: It is sunny in Paris.', 'user: Thanks']);
    expect(within(words).getByRole('list', { name: 'Messages removed' }).textContent).toBe('assistant: Sunny');
    expect(words.textContent).toContain('Channels addedtone');
    expect(words.textContent).toContain('Channels changeddraft');
    expect(words.textContent).toContain('Channels removedcity');
    expect(words.textContent).toContain('Next nodesagent → none (done)');
  });

  it('is not shown for two versions of a Waystation task', () => {
    render(<DiffView diff={diff()} />);
    expect(screen.queryByRole('region', { name: /LangGraph changes/ })).toBeNull();
    expect(screen.getByRole('region', { name: 'Summary of changes from version 2 to version 5' })).toBeTruthy();
  });
});
