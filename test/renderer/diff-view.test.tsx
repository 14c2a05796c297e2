// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { DiffView } from '../../renderer/src/components/diff-view.js';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import type { DiffResult } from '../../shared/api/contract.js';
import { makeCheckpoint } from './fake-api.js';

afterEach(cleanup);

function diffOf(a: ReturnType<typeof makeCheckpoint>, b: ReturnType<typeof makeCheckpoint>): DiffResult {
  return { a: a.version, b: b.version, summary: summarizeChange(a, b), entries: structuredDiff(a, b) };
}

const v1 = makeCheckpoint('t');
const v2 = makeCheckpoint('t', {
  version: 2,
  status: 'done',
  phase: 'published',
  plan: [
    { id: 'read', name: 'read notes', status: 'done', attempts: 1 },
    { id: 'summarize', name: 'summarize', status: 'done', attempts: 3, result: { summary: 'ok' } },
  ],
  side_effects: [{ id: 'e1', type: 'http_post', status: 'done', idempotency_key: 't-e1' }],
  run: { created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:05:00Z', tokens_in: 120, tokens_out: 40 },
  source: { kind: 'human-edit', actor: 'ana', note: 'fixed the summary' },
});

describe('DiffView', () => {
  it('says what the change means: status, phase, step transitions, ledger and spend', () => {
    render(<DiffView diff={diffOf(v1, v2)} />);
    const summary = screen.getByRole('region', { name: 'Summary of changes from version 1 to version 2' });
    expect(summary.textContent).toContain('written by human-edit (ana): fixed the summary');
    const transitions = within(summary).getByRole('list', { name: 'Step transitions' });
    const item = within(transitions).getByText('summarize').closest('li')!;
    expect(item.textContent).toMatch(/Failed.*→.*Done/);
    expect(summary.textContent).toContain('summarizing');
    expect(summary.textContent).toContain('published');
    expect(summary.textContent).toMatch(/added\s*http_post/);
    expect(summary.textContent).toContain('tokens +120 in, +40 out');
  });

  it('shows the resume hints with the open directory in place of <DIR>, quoted for a shell', () => {
    const hinted = makeCheckpoint('t', { version: 2, resume_hint: 'stopped by ana; continue with `waystation resume <DIR> t`' });
    render(<DiffView diff={diffOf(v1, hinted)} root="/tmp/my notes" />);
    const summary = screen.getByRole('region', { name: 'Summary of changes from version 1 to version 2' });
    expect(summary.textContent).toContain("continue with `waystation resume '/tmp/my notes' t`");
    expect(summary.textContent).not.toContain('<DIR>');
  });

  it('numbers the current step from 1, as the plan table does', () => {
    // current_step is an index: 0 is the plan's step 1.
    const first = makeCheckpoint('t', { current_step: 0 });
    const second = makeCheckpoint('t', { version: 2, current_step: 1 });
    const done = makeCheckpoint('t', { version: 3, current_step: 2, status: 'done' });
    const currentStep = () => {
      const summary = screen.getByRole('region', { name: /^Summary of changes/ });
      return within(summary).getByText('Current step').nextElementSibling!.textContent;
    };
    render(<DiffView diff={diffOf(first, second)} steps={2} />);
    expect(currentStep()).toBe('step 1 of 2→step 2 of 2');
    cleanup();
    render(<DiffView diff={diffOf(second, done)} steps={2} />);
    expect(currentStep()).toBe('step 2 of 2→end of the plan');
    cleanup();
    render(<DiffView diff={diffOf(first, second)} />);
    expect(currentStep()).toBe('step 1→step 2');
  });

  it('lists each changed field with both versions side by side', () => {
    render(<DiffView diff={diffOf(v1, v2)} />);
    const table = screen.getByRole('table', { name: 'Changes from version 1 to version 2' });
    const row = within(table).getByText('/plan/1/status').closest('tr')!;
    const cells = within(row).getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['/plan/1/status', '"failed"', '"done"']);
  });

  it('hides timestamp noise until asked, and filters by path', () => {
    render(<DiffView diff={diffOf(v1, v2)} />);
    const table = () => screen.queryByRole('table', { name: 'Changes from version 1 to version 2' });
    expect(within(table()!).queryByText('/run/updated_at')).toBeNull();
    fireEvent.click(screen.getByRole('checkbox', { name: 'Show timestamps' }));
    expect(within(table()!).getByText('/run/updated_at')).toBeTruthy();

    fireEvent.change(screen.getByRole('searchbox', { name: 'Filter changed paths' }), { target: { value: 'side_effects' } });
    const paths = within(table()!)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.firstElementChild?.textContent);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p?.startsWith('/side_effects'))).toBe(true);
  });

  it('says so when two versions are identical', () => {
    render(<DiffView diff={diffOf(v1, v1)} />);
    expect(screen.getByText('The two versions are identical.')).toBeTruthy();
    expect(screen.getByText(/No meaningful change/)).toBeTruthy();
  });
});
