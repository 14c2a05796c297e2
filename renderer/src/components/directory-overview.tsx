/**
 * Above the task list: the open directory at a glance. Tasks by status (each
 * a filter), tokens and cost summed over the tasks, and the slowest steps,
 * each opening its task at that step. The counts come from the list itself; the figures
 * from the store's overview (getOverview, asked again once changes settle).
 */
import { useMemo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';
import { useAppStore } from '../store/app-store.js';
import { countByFilter } from '../store/task-filter.js';
import { TaskStatusBadge } from './status-badge.js';
import { formatCount, formatDuration } from './format.js';

const ORDER: DisplayStatus[] = [
  'waiting_approval',
  'waiting_human',
  'failed',
  'interrupted',
  'drifted',
  'unreadable',
  'running',
  'halted',
  'done',
];

export function DirectoryOverview() {
  const { tasks, root, status, figures, problem } = useAppStore(
    useShallow((s) => ({
      tasks: s.tasks,
      root: s.directory?.root ?? null,
      status: s.filter.status,
      figures: s.overview,
      problem: s.overviewError,
    })),
  );
  const setFilter = useAppStore((s) => s.setFilter);
  const openStep = useAppStore((s) => s.openStep);
  const counts = useMemo(() => countByFilter(tasks), [tasks]);

  if (!root || tasks.length === 0) return null;
  const o = figures?.root === root ? figures.figures : null;
  const present = ORDER.filter((s) => (counts[s] ?? 0) > 0);
  return (
    <details className="overview" open>
      <summary>Overview</summary>
      <div className="overview-statuses" role="group" aria-label="Tasks by status">
        {present.map((s) => (
          <button
            key={s}
            type="button"
            className="overview-status"
            aria-pressed={status === s}
            onClick={() => setFilter({ status: status === s ? 'all' : s })}
          >
            <TaskStatusBadge status={s} /> <span className="overview-count">{counts[s]}</span>
          </button>
        ))}
      </div>
      {problem && <p className="error-text small">The figures could not be read: {problem}</p>}
      {o && (
        <>
          <p className="overview-figures small" aria-label="Tokens and cost over the directory">
            <span>
              {formatCount(o.tokens_in)} in · {formatCount(o.tokens_out)} out tokens
            </span>
            <span>${o.cost_usd.toFixed(4)}</span>
            <span className="muted">
              over{' '}
              {o.tasks_read === o.tasks_total
                ? `${o.tasks_total} tasks`
                : `${o.tasks_read} of ${o.tasks_total} tasks (the rest unreadable)`}
            </span>
          </p>
          {o.slowest_steps.length > 0 && (
            <div className="overview-slowest">
              <span className="muted small">Slowest steps</span>
              <ol className="plain" aria-label="Slowest steps">
                {o.slowest_steps.slice(0, 3).map((s) => (
                  <li key={`${s.task_id}:${s.step_id}`}>
                    <button
                      type="button"
                      className="link overview-step"
                      title={`${s.task_id} · ${s.step_name} (${s.step_id}), ${s.status}`}
                      onClick={() => openStep(s.task_id, s.step_id)}
                    >
                      <span className="overview-step-time">{formatDuration(s.elapsed_ms)}</span> {s.step_name}{' '}
                      <span className="muted">in {s.task_id}</span>
                    </button>
                  </li>
                ))}
              </ol>
            </div>
          )}
        </>
      )}
    </details>
  );
}
