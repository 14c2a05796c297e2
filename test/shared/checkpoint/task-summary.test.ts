import { describe, expect, it } from 'vitest';
import { hasErrors, mayNeedRecovery, toTaskSummary, TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import { isUntouchedFork } from '../../../shared/checkpoint/untouched-fork.js';
import { problem } from '../../../shared/checkpoint/problem.js';
import { sampleCheckpoint } from './sample-checkpoint.js';

const entry = (overrides = {}) => ({
  task_id: 'task-1',
  location: 'task-1',
  format: 'waystation' as const,
  checkpoint: sampleCheckpoint(),
  read_only: false,
  problems: [],
  ...overrides,
});

describe('toTaskSummary', () => {
  it('copies the listing fields from the checkpoint and validates against the schema', () => {
    const s = toTaskSummary(entry(), { leaseHeld: true });
    expect(TaskSummary.parse(s)).toEqual(s);
    expect(s).toEqual({
      task_id: 'task-1',
      task_name: 'Write the report',
      version: 1,
      status: 'running',
      display_status: 'running',
      phase: 'drafting',
      step_counts: { pending: 1, running: 1, done: 1, failed: 0, skipped: 0 },
      current_step: 1,
      total_steps: 3,
      mode: 'manual',
      agent_name: 'report-writer',
      updated_at: '2026-01-10T10:01:00Z',
      format: 'waystation',
      read_only: false,
      location: 'task-1',
      problems: [],
    });
  });

  it('keeps an unreadable task listed, with nulls and its problems', () => {
    const torn = problem('torn/checkpoint.json', 'truncated', 'the JSON ends early');
    const s = toTaskSummary(entry({ task_id: 'torn', location: 'torn', checkpoint: null, problems: [torn] }));
    expect(TaskSummary.parse(s)).toEqual(s);
    expect(s).toMatchObject({
      display_status: 'unreadable',
      status: null,
      version: null,
      step_counts: { pending: 0, running: 0, done: 0, failed: 0, skipped: 0 },
      current_step: null,
      problems: [torn],
    });
  });

  it('merges extra problems without repeating ones the entry already has', () => {
    const legacy = problem('a.json', 'legacy-format', 'read-only');
    const broken = problem('a.json', 'invariant', 'total_steps is 5 but the plan has 3 steps');
    const s = toTaskSummary(entry({ problems: [legacy] }), { problems: [legacy, broken] });
    expect(s.problems).toEqual([legacy, broken]);
    expect(hasErrors([legacy])).toBe(false);
    expect(hasErrors(s.problems)).toBe(true);
  });

  it("names a fork's parent, so a list finds a task's forks without opening them, and leaves a malformed one out", () => {
    const fork = toTaskSummary(entry({ checkpoint: { ...sampleCheckpoint(), forked_from: { task_id: 'parent', version: 3 } } }));
    expect(TaskSummary.parse(fork)).toEqual(fork);
    expect(fork.forked_from).toEqual({ task_id: 'parent', version: 3 });
    expect(toTaskSummary(entry())).not.toHaveProperty('forked_from');
    for (const bad of [null, { task_id: '', version: 1 }, { task_id: 'p', version: 0 }, { task_id: 'p', version: '2' }, { version: 2 }]) {
      expect(toTaskSummary(entry({ checkpoint: { ...sampleCheckpoint(), forked_from: bad } }))).not.toHaveProperty('forked_from');
    }
  });

  it('shows drift and interrupted runs through display_status', () => {
    expect(toTaskSummary(entry()).display_status).toBe('interrupted');
    expect(toTaskSummary(entry(), { drift: true }).display_status).toBe('drifted');
  });
});

describe('mayNeedRecovery', () => {
  const interrupted = { status: 'running', mode: 'auto', format: 'waystation', read_only: false, agent_name: 'a', version: 1 } as const;

  it('leaves a fork nothing has written to since it was made for a person, and takes it up once something has', () => {
    const fork = { task_id: 'parent', version: 3 };
    expect(mayNeedRecovery(interrupted)).toBe(true);
    expect(isUntouchedFork({ version: 1, forked_from: fork })).toBe(true);
    expect(mayNeedRecovery({ ...interrupted, forked_from: fork })).toBe(false);
    expect(mayNeedRecovery({ ...interrupted, version: 2, forked_from: fork })).toBe(true);
  });
});
