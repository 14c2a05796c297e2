/**
 * Which changes of the task list are news a person is told of: a run shown running that failed or stopped with
 * nothing driving it, as the list's rows say it.
 */
import { describe, expect, it } from 'vitest';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import type { DisplayStatus } from '../../shared/checkpoint/task-state.js';
import { alertText, newlyStopped } from '../../renderer/src/store/attention-alerts.js';

function row(task_id: string, display_status: DisplayStatus, format: TaskSummary['format'] = 'waystation'): TaskSummary {
  return {
    task_id,
    task_name: null,
    version: 2,
    status: display_status === 'interrupted' ? 'running' : display_status === 'running' ? 'running' : 'failed',
    display_status,
    phase: null,
    step_counts: { pending: 1, running: 0, done: 1, failed: 0, skipped: 0 },
    current_step: 1,
    total_steps: 2,
    mode: 'manual',
    agent_name: null,
    updated_at: null,
    format,
    read_only: format === 'langgraph',
    location: task_id,
    problems: [],
  };
}

describe('newlyStopped', () => {
  it('finds the runs shown running that now fail or stop, and nothing else', () => {
    const prev = [
      row('killed', 'running'),
      row('breaks', 'running'),
      row('finishes', 'running'),
      row('earlier', 'interrupted'),
      row('thread-fails', 'running', 'langgraph'),
      row('thread-quiet', 'running', 'langgraph'),
    ];
    const next = [
      row('killed', 'interrupted'),
      row('breaks', 'failed'),
      row('finishes', 'done'),
      row('earlier', 'interrupted'),
      row('thread-fails', 'failed', 'langgraph'),
      // Its newest checkpoint grew old: a breakpoint, a dead process, or a node still at work; not told.
      row('thread-quiet', 'interrupted', 'langgraph'),
      row('new', 'interrupted'),
    ];
    expect(newlyStopped(prev, next).map((t) => t.task_id)).toEqual(['killed', 'breaks', 'thread-fails']);
  });

  it('says what happened in the notification', () => {
    expect(alertText(row('killed', 'interrupted')).title).toBe('killed stopped before it finished');
    expect(alertText({ ...row('breaks', 'failed'), phase: 'calling the API' })).toEqual({
      title: 'breaks failed',
      body: 'At: calling the API',
    });
    expect(alertText(row('breaks', 'failed')).body).toBe('Open the task to see its error.');
  });
});
