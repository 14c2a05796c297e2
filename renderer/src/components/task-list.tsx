/**
 * The left pane: every task in the directory, filtered and searched,
 * virtualised so ten thousand rows scroll as smoothly as ten. Its order holds
 * while a person is in it (list-hold.ts), so a row never moves under a click.
 */
import { useEffect, useMemo, useRef, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useShallow } from 'zustand/react/shallow';
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';
import { useAppStore } from '../store/app-store.js';
import { NOTHING_TO_START, readOnlyReason } from '../store/read-only.js';
import { countByFilter, filterTasks, type StatusFilter, type TaskOrder } from '../store/task-filter.js';
import { TaskStatusBadge, displayStatusLabel } from './status-badge.js';
import { formatRelative, formatTime, taskLabel } from './format.js';
import { NoDirectory } from './directory-controls.js';
import { DirectoryOverview } from './directory-overview.js';
import { useListHold } from './list-hold.js';

const ROW_HEIGHT = 56;
const STATUS_FILTERS: DisplayStatus[] = [
  'running',
  'failed',
  'waiting_approval',
  'waiting_human',
  'interrupted',
  'halted',
  'done',
  'drifted',
  'unreadable',
];

/** DOM id of a task's row, for aria-activedescendant. */
const rowId = (taskId: string) => `task-row-${taskId.replace(/[^A-Za-z0-9_-]/g, '_')}`;

export function TaskList() {
  const { tasks, tasksState, tasksError, filter, selectedTaskId, noDirectory, readOnly } = useAppStore(
    useShallow((s) => ({
      tasks: s.tasks,
      tasksState: s.tasksState,
      tasksError: s.tasksError,
      filter: s.filter,
      selectedTaskId: s.selectedTaskId,
      noDirectory: s.directory !== null && s.directory.root === null,
      readOnly: readOnlyReason(s.directory) !== null,
    })),
  );
  const setFilter = useAppStore((s) => s.setFilter);
  const selectTask = useAppStore((s) => s.selectTask);
  const setStartDialogOpen = useAppStore((s) => s.setStartDialogOpen);

  const live = useMemo(() => filterTasks(tasks, filter), [tasks, filter]);
  const counts = useMemo(() => countByFilter(tasks), [tasks]);
  // What the list shows, and what keys move through: its own order, or the one held while a person is in it.
  const hold = useListHold(live, tasks, filter, tasksState === 'ready');
  const visible = hold.rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  // The virtualizer's API is not memoisable by the compiler; it is only read, never passed down.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: visible.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const activeIndex = visible.findIndex((t) => t.task_id === selectedTaskId);
  useEffect(() => {
    // A live update may move the open task's row (a new version sorts it first): keep it in view.
    if (activeIndex >= 0) virtualizer.scrollToIndex(activeIndex, { align: 'auto' });
  }, [activeIndex, virtualizer]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    hold.keyPressed();
    if (visible.length === 0) return;
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? ROW_HEIGHT * 10) / ROW_HEIGHT) - 1);
    const moves: Record<string, number> = {
      ArrowDown: activeIndex + 1,
      ArrowUp: activeIndex <= 0 ? 0 : activeIndex - 1,
      j: activeIndex + 1,
      k: activeIndex <= 0 ? 0 : activeIndex - 1,
      Home: 0,
      End: visible.length - 1,
      PageDown: activeIndex + page,
      PageUp: activeIndex - page,
    };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const next = Math.min(visible.length - 1, Math.max(0, moves[e.key]));
    selectTask(visible[next].task_id);
    virtualizer.scrollToIndex(next, { align: 'auto' });
  };

  const chip = (value: StatusFilter, label: string) => (
    <button key={value} type="button" className="chip" aria-pressed={filter.status === value} onClick={() => setFilter({ status: value })}>
      {label}
      <span className="chip-count" aria-label={`${counts[value] ?? 0} tasks`}>
        {counts[value] ?? 0}
      </span>
    </button>
  );

  return (
    <section className="task-list" aria-label="Tasks">
      <DirectoryOverview />
      <div className="task-list-tools">
        <input
          type="search"
          className="search"
          placeholder="Search tasks  ( / )"
          aria-label="Search tasks"
          value={filter.query}
          onChange={(e) => setFilter({ query: e.target.value })}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              if (visible.length === 0) return;
              // Into the list with a row active: the open task when it matches the search, else the first match.
              if (activeIndex < 0) selectTask(visible[0].task_id);
              document.getElementById('task-listbox')?.focus();
            }
          }}
        />
        <div className="chips" role="group" aria-label="Filter by status">
          {chip('all', 'All')}
          {chip('attention', 'Needs attention')}
        </div>
        <label className="status-select">
          <span className="visually-hidden">Order</span>
          <select
            aria-label="Order"
            value={filter.order ?? (filter.status === 'attention' ? 'status' : 'updated')}
            onChange={(e) => setFilter({ order: e.target.value as TaskOrder })}
          >
            <option value="updated">Recently updated</option>
            <option value="status">Status</option>
            <option value="name">Name</option>
          </select>
        </label>
        <label className="status-select">
          <span className="visually-hidden">Status filter</span>
          <select
            aria-label="Status filter"
            value={filter.status === 'all' || filter.status === 'attention' ? '' : filter.status}
            onChange={(e) => setFilter({ status: (e.target.value || 'all') as StatusFilter })}
          >
            <option value="">Any status</option>
            {STATUS_FILTERS.map((s) => (
              <option key={s} value={s}>
                {displayStatusLabel(s)} ({counts[s] ?? 0})
              </option>
            ))}
          </select>
        </label>
      </div>

      {noDirectory && <NoDirectory />}
      {!noDirectory && tasksState === 'loading' && tasks.length === 0 && (
        <div className="empty" role="status">
          <span className="spinner" aria-hidden="true" /> Loading tasks…
        </div>
      )}
      {!noDirectory && tasksState === 'loading' && tasks.length > 0 && (
        <div className="list-note" role="status">
          <span className="spinner" aria-hidden="true" /> {tasks.length} task{tasks.length === 1 ? '' : 's'} shown; reading the rest…
        </div>
      )}
      {!noDirectory && tasksState === 'error' && (
        <div className="empty error" role="alert">
          Could not list tasks: {tasksError}
        </div>
      )}
      {!noDirectory && tasksState === 'ready' && tasks.length === 0 && (
        <div className="empty">
          <p>
            <strong>No tasks in this directory.</strong>
          </p>
          {readOnly ? (
            <p>{NOTHING_TO_START}</p>
          ) : (
            <>
              <p>
                Start one with an agent, or run <code>waystation demo DIR</code> and open that folder.
              </p>
              <button type="button" className="primary" onClick={() => setStartDialogOpen(true)}>
                New task
              </button>
            </>
          )}
        </div>
      )}
      {tasks.length > 0 && visible.length === 0 && (
        <div className="empty">
          <p>No task matches this filter.</p>
          <button type="button" onClick={() => setFilter({ status: 'all', query: '' })}>
            Clear filters
          </button>
        </div>
      )}

      <div
        ref={scrollRef}
        id="task-listbox"
        className="task-scroll"
        role="listbox"
        aria-label="Task list"
        tabIndex={0}
        aria-activedescendant={activeIndex >= 0 ? rowId(visible[activeIndex].task_id) : undefined}
        onKeyDown={onKeyDown}
        {...hold.handlers}
        hidden={visible.length === 0}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const task = visible[item.index];
            return (
              <TaskRow
                key={task.task_id}
                task={task}
                top={item.start}
                index={item.index}
                size={visible.length}
                selected={task.task_id === selectedTaskId}
                onSelect={() => selectTask(task.task_id)}
              />
            );
          })}
        </div>
      </div>
      {/* Below the rows, so that its appearing moves none of them. */}
      <div className="task-list-footer" aria-live="polite">
        {live.length === tasks.length ? `${tasks.length} tasks` : `${live.length} of ${tasks.length} tasks`}
        {hold.held && ` · order held while you're in the list${hold.held.added ? ` · ${hold.held.added} new at the end` : ''}`}
      </div>
    </section>
  );
}

interface RowProps {
  task: TaskSummary;
  top: number;
  index: number;
  size: number;
  selected: boolean;
  onSelect(): void;
}

function TaskRow({ task, top, index, size, selected, onSelect }: RowProps) {
  const counts = task.step_counts;
  const done = counts.done + counts.skipped;
  const total = task.total_steps ?? Object.values(counts).reduce((a, b) => a + b, 0);
  const problem = task.problems.find((p) => p.severity === 'error') ?? task.problems[0];
  return (
    <div
      id={rowId(task.task_id)}
      role="option"
      aria-selected={selected}
      aria-setsize={size}
      aria-posinset={index + 1}
      // Named by its content (name, time, status, phase, progress, tags), so what a screen reader
      // announces is what the row shows.
      className={`task-row${selected ? ' selected' : ''}`}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
      onClick={onSelect}
    >
      <div className="task-row-line">
        {/* The title holds the whole id, which a cut row may not show (a 128-character one), and the name beside it. */}
        <span className="task-name" title={rowTitle(task)}>
          {taskLabel(task)}
        </span>
        <span className="task-time" title={formatTime(task.updated_at)}>
          {formatRelative(task.updated_at)}
        </span>
      </div>
      <div className="task-row-line sub">
        <TaskStatusBadge status={task.display_status} />
        {task.display_status === 'unreadable' && problem ? (
          <span className="task-problem" title={problem.message}>
            {problem.file}: {problem.message}
          </span>
        ) : (
          <>
            <span className="task-phase" title={task.phase ? `phase: ${task.phase}` : undefined}>
              {task.phase || '—'}
            </span>
            <span className="task-progress" title={`${done} of ${total} steps done`}>
              {done}/{total}
            </span>
            {task.mode && (
              <span className="tag tag-word" title={`recovery mode: ${task.mode}`}>
                {task.mode}
              </span>
            )}
            {task.agent_name && (
              <span className="tag task-agent" title={`agent: ${task.agent_name}`}>
                {task.agent_name}
              </span>
            )}
            {task.read_only && <span className="tag tag-word">read-only</span>}
          </>
        )}
      </div>
    </div>
  );
}

/** A row's title: its label whole, with the task's id and name where the label is not both. */
function rowTitle(task: { task_id: string; task_name: string | null; agent_name: string | null }): string {
  const label = taskLabel(task);
  if (label !== task.task_id) return `${label} — ${task.task_id}`;
  return task.task_name && task.task_name !== label ? `${label} — ${task.task_name}` : label;
}
