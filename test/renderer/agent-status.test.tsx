// @vitest-environment jsdom
/**
 * The task's agent in the task view: a missing agent disables Resume and
 * Approve and says why, a module that did not load says what it said, a
 * changed module is announced next to Resume, and the approval panel tells
 * whether the plan runs new agent code. Rendered in jsdom over the in-memory API.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, within } from '@testing-library/react';
import type { TaskAgentStatus } from '../../shared/api/contract.js';
import type { CheckpointInput } from '../../shared/checkpoint/schema.js';
import type { AppStore } from '../../renderer/src/store/app-store.js';
import { disposeStores, newStore, renderApp } from './app-harness.js';
import { FakeApi, makeCheckpoint } from './fake-api.js';

const RECORDED = 'a1'.repeat(32);
const CURRENT = 'b2'.repeat(32);
const agent = { name: 'word-counter', module: 'agents/word-counter.ts', export: 'default', project_root: '.', module_sha256: RECORDED };

const missing: TaskAgentStatus = {
  name: 'word-counter',
  origin: 'module',
  available: false,
  module: 'agents/word-counter.ts',
  recorded_sha256: RECORDED,
  problem: 'the agent module /proj/agents/word-counter.ts cannot be found (moved or deleted?); restore it to resume the task',
};
const changed: TaskAgentStatus = {
  name: 'word-counter',
  origin: 'module',
  available: true,
  module: 'agents/word-counter.ts',
  module_changed: true,
  recorded_sha256: RECORDED,
  current_sha256: CURRENT,
  problem: 'the agent module agents/word-counter.ts changed since the task recorded it; resuming runs the new code',
};
const unchanged: TaskAgentStatus = {
  name: 'word-counter',
  origin: 'module',
  available: true,
  module: 'agents/word-counter.ts',
  recorded_sha256: RECORDED,
  current_sha256: RECORDED,
};

afterEach(disposeStores);

/** Render the app with task `t` (made from `overrides`) selected, its agent reported as `status`. */
async function show(status: TaskAgentStatus, overrides: Partial<CheckpointInput> = {}): Promise<{ fake: FakeApi; store: AppStore }> {
  const fake = new FakeApi().add(makeCheckpoint('t', { agent, ...overrides }));
  fake.agentStatus.set('t', status);
  const store = newStore(fake.api);
  renderApp(store);
  store.getState().selectTask('t');
  await screen.findByRole('article', { name: /Task/ });
  return { fake, store };
}

const awaitingApproval = (plan: Record<string, unknown>): Partial<CheckpointInput> => ({
  status: 'waiting_approval',
  recovery: {
    mode: 'confirm',
    pending_approval: { id: 'approval-1', requested_at: '2026-01-01T00:02:00Z', plan: { rerun_step: 'summarize', ...plan } },
  },
});

describe('an agent that cannot be found', () => {
  it('says why, and disables Resume with that reason as its description', async () => {
    const { fake } = await show(missing);
    const notice = screen.getByRole('alert', { name: 'Agent unavailable' });
    expect(notice.textContent).toContain('/proj/agents/word-counter.ts cannot be found (moved or deleted?)');
    expect(notice.textContent).toContain('the task is untouched');

    const resume = screen.getByRole('button', { name: /Resume/, description: /cannot be found.*the task is untouched/ });
    expect(resume).toHaveProperty('disabled', true);
    fireEvent.click(resume);
    expect(fake.count('resumeTask')).toBe(0);
    expect(screen.getByTestId('agent-tag').textContent).toBe('agent: word-counter (agents/word-counter.ts) · unavailable');
  });

  it('disables Approve in confirm mode, with the same reason', async () => {
    const { fake } = await show(missing, awaitingApproval({}));
    const panel = screen.getByRole('region', { name: 'Resume approval' });
    const approve = within(panel).getByRole('button', { name: 'Approve', description: /cannot be found/ });
    expect(approve).toHaveProperty('disabled', true);
    fireEvent.click(approve);
    expect(fake.count('approveResume')).toBe(0);
    // Rejecting needs no agent: a human can still halt the task.
    expect(within(panel).getByRole('button', { name: 'Reject' })).toHaveProperty('disabled', false);
  });

  it('is not raised for a finished task, whose agent will not run again', async () => {
    await show(missing, {
      status: 'done',
      plan: [{ id: 'read', name: 'read notes', status: 'done', attempts: 1 }],
      current_step: 1,
      total_steps: 1,
    });
    expect(screen.queryByRole('alert', { name: 'Agent unavailable' })).toBeNull();
    expect(screen.getByTestId('agent-tag').textContent).toContain('unavailable');
  });
});

describe('a task another program wrote', () => {
  const foreign: TaskAgentStatus = {
    name: 'python-word-count',
    origin: 'foreign',
    available: false,
    problem:
      'the task was written by another program (agent "python-word-count"): it can be inspected, diffed and verified here, not resumed from Waystation',
  };

  it('says so instead of waiting for the agent to come back, and disables Resume', async () => {
    const { fake } = await show(foreign, { agent: { name: 'python-word-count' } });
    const notice = screen.getByRole('alert', { name: 'Agent unavailable' });
    expect(notice.textContent).toContain('written by another program');
    expect(notice.textContent).not.toContain('until the agent is back');
    const resume = screen.getByRole('button', { name: /Resume/, description: /written by another program/ });
    expect(resume).toHaveProperty('disabled', true);
    fireEvent.click(resume);
    expect(fake.count('resumeTask')).toBe(0);
    expect(screen.getByTestId('agent-tag').textContent).toBe('agent: python-word-count (another program) · unavailable');
  });
});

describe('an agent module that did not load at the last resume', () => {
  it('shows what the load said and leaves Resume on, to try again once fixed', async () => {
    const { fake } = await show({
      ...unchanged,
      load_problem:
        'cannot resume task t: the agent module /proj/agents/word-counter.ts fails to load: broken by an edit. The task was left untouched.',
    });
    const notice = screen.getByRole('alert', { name: 'Agent module does not load' });
    expect(notice.textContent).toContain('fails to load: broken by an edit');
    const resume = screen.getByRole('button', { name: /Resume/, description: /fails to load/ });
    expect(resume).toHaveProperty('disabled', false);
    fireEvent.click(resume);
    await vi.waitFor(() => expect(fake.count('resumeTask')).toBe(1));
  });
});

describe('a changed agent module', () => {
  it('is announced next to Resume with both hashes, and Resume still runs', async () => {
    const { fake } = await show(changed);
    const note = screen.getByRole('note', { name: 'Agent module changed' });
    expect(note.textContent).toBe(
      `The agent module agents/word-counter.ts changed since this task last ran (sha256 ${RECORDED.slice(0, 12)}… → ${CURRENT.slice(0, 12)}…); resuming runs the new code.`,
    );
    const resume = screen.getByRole('button', { name: /Resume/, description: /changed since this task last ran/ });
    expect(resume).toHaveProperty('disabled', false);
    fireEvent.click(resume);
    await vi.waitFor(() => expect(fake.count('resumeTask')).toBe(1));
  });

  it('needs no notice when the module is as recorded', async () => {
    await show(unchanged);
    expect(screen.queryByRole('note', { name: 'Agent module changed' })).toBeNull();
    expect(screen.queryByRole('alert', { name: /Agent/ })).toBeNull();
    expect(screen.getByRole('button', { name: /Resume/ }).getAttribute('aria-describedby')).toBeNull();
  });
});

describe('the resume plan in confirm mode', () => {
  const moduleLine = () => within(screen.getByRole('region', { name: 'Resume approval' })).queryByTestId('plan-agent-module');

  it('lists a module that changed since the last run as part of the plan', async () => {
    await show(changed, awaitingApproval({ module_changed: true }));
    expect(moduleLine()?.textContent).toBe(
      `changed since the last run (sha256 ${RECORDED.slice(0, 12)}… → ${CURRENT.slice(0, 12)}…): the remaining steps run with the new code`,
    );
    expect(screen.getByRole('button', { name: 'Approve' })).toHaveProperty('disabled', false);
  });

  it('says when the module changed after the plan was made: approving prepares a new plan', async () => {
    await show(changed, awaitingApproval({}));
    expect(moduleLine()?.textContent).toMatch(/^changed since the plan was made .*approving prepares a new plan/);
  });

  it('says when the module went back to the recorded code after the plan was made', async () => {
    await show(unchanged, awaitingApproval({ module_changed: true }));
    expect(moduleLine()?.textContent).toContain('now back to the code the task last ran: approving prepares a new plan instead');
  });

  it('has no module line when the module plays no part', async () => {
    await show(unchanged, awaitingApproval({}));
    expect(moduleLine()).toBeNull();
  });
});
