/**
 * Every version with its source and time; pick any two to diff. Forks link
 * both ways (the task this one was forked from, the tasks forked from it),
 * versions written by going back (a fork, a rerun from a step, a stop) are
 * marked, and any version can be forked into a new task.
 */
import { useMemo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { VersionEntry } from '../../../shared/api/contract.js';
import { useAppStore } from '../store/app-store.js';
import { forkChildren, forkParent, type ForkLink } from '../store/fork-links.js';
import { ForkIcon } from './fork-icon.js';
import { DiffView } from './diff-view.js';
import { formatBytes, formatTime } from './format.js';

/** `onFork`: open the fork dialog for a version; null where nothing may be written. */
export function HistoryTab({ onFork }: { onFork: ((version: number) => void) | null }) {
  const { history, historyState, diff, taskId, checkpoint, tasks } = useAppStore(
    useShallow((s) => ({
      history: s.history,
      historyState: s.historyState,
      diff: s.diff,
      taskId: s.selectedTaskId,
      checkpoint: s.detail?.checkpoint ?? null,
      tasks: s.tasks,
    })),
  );
  const setDiffPair = useAppStore((s) => s.setDiffPair);
  const selectTask = useAppStore((s) => s.selectTask);
  const directoryRoot = useAppStore((s) => s.directory?.root ?? null);
  const parent = checkpoint ? forkParent(checkpoint) : null;
  const children = useMemo(() => (taskId ? forkChildren(taskId, tasks) : []), [taskId, tasks]);
  const childrenAt = useMemo(() => {
    const by = new Map<number, ForkLink[]>();
    for (const c of children) by.set(c.version, [...(by.get(c.version) ?? []), c]);
    return by;
  }, [children]);

  if (historyState === 'loading' || (historyState === 'idle' && history.length === 0)) {
    return (
      <p role="status" className="muted">
        <span className="spinner" aria-hidden="true" /> Loading history…
      </p>
    );
  }
  if (history.length === 0) return <p className="empty-inline">No versions: this task has no readable history.</p>;

  const newestFirst = [...history].reverse();
  const open = (id: string) => selectTask(id);
  return (
    <div className="history">
      {(parent || children.length > 0) && (
        <nav className="fork-links" aria-label="Forks">
          {parent && (
            <p>
              <span className="tag source-fork">
                <ForkIcon /> fork
              </span>{' '}
              Forked from{' '}
              <button type="button" className="link mono wrap-anywhere" onClick={() => open(parent.task_id)}>
                {parent.task_id}
              </button>{' '}
              at version {parent.version}
            </p>
          )}
          {children.length > 0 && (
            <p>
              <span className="tag source-fork">
                <ForkIcon /> forks
              </span>{' '}
              Forked into{' '}
              {children.map((c, i) => (
                <span key={c.task_id}>
                  {i > 0 && ', '}
                  <button type="button" className="link mono wrap-anywhere" onClick={() => open(c.task_id)}>
                    {c.task_id}
                  </button>{' '}
                  <span className="muted small">(from v{c.version})</span>
                </span>
              ))}
            </p>
          )}
        </nav>
      )}
      <p className="muted small">Pick a version in each column to compare them.{history.length > 1 && ' '}</p>
      {history.length > 1 && (
        <div className="row-actions">
          <button
            type="button"
            onClick={() => setDiffPair(history[history.length - 2].version, history[history.length - 1].version, { latest: true })}
          >
            Compare latest with previous
          </button>
        </div>
      )}
      <div className="history-layout">
        <div className="history-versions">
          <table className="grid compact" aria-label="Versions">
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Version</th>
                <th scope="col">Source</th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {newestFirst.map((v) => (
                <tr key={v.version} className={v.version === diff.a || v.version === diff.b ? 'picked' : undefined}>
                  <td>
                    <input
                      type="radio"
                      name="diff-a"
                      aria-label={`Diff from version ${v.version}`}
                      checked={diff.a === v.version}
                      onChange={() => setDiffPair(v.version, diff.b)}
                    />
                  </td>
                  <td>
                    <input
                      type="radio"
                      name="diff-b"
                      aria-label={`Diff to version ${v.version}`}
                      checked={diff.b === v.version}
                      onChange={() => setDiffPair(diff.a, v.version)}
                    />
                  </td>
                  <td>
                    <span className="mono">v{v.version}</span>
                    {onFork && (
                      <div>
                        <button
                          type="button"
                          className="link small"
                          aria-haspopup="dialog"
                          aria-label={`Fork from version ${v.version}`}
                          onClick={() => onFork(v.version)}
                        >
                          <ForkIcon /> Fork
                        </button>
                      </div>
                    )}
                  </td>
                  <td>
                    <SourceCell entry={v} />
                    {(childrenAt.get(v.version) ?? []).map((c) => (
                      <div key={c.task_id} className="small note">
                        <ForkIcon /> forked into{' '}
                        <button type="button" className="link mono wrap-anywhere" onClick={() => open(c.task_id)}>
                          {c.task_id}
                        </button>
                      </div>
                    ))}
                  </td>
                  <td className="small" title={`${formatBytes(v.bytes)} on disk`}>
                    <time dateTime={v.updated_at}>{formatTime(v.updated_at)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="history-diff" aria-live="polite">
          {diff.state === 'idle' && diff.result === null && (diff.a === null || diff.b === null) && (
            <p className="empty-inline">Pick a “from” and a “to” version to see what changed between them.</p>
          )}
          {diff.state === 'loading' && (
            <p role="status" className="muted">
              <span className="spinner" aria-hidden="true" /> Computing the diff…
            </p>
          )}
          {diff.state === 'error' && (
            <p role="alert" className="error-text">
              Could not diff these versions: {diff.error}
            </p>
          )}
          {diff.state === 'idle' && diff.a !== null && diff.a === diff.b && <p className="muted">Pick two different versions.</p>}
          {diff.result && diff.state !== 'error' && (
            <DiffView
              diff={diff.result}
              root={directoryRoot}
              steps={checkpoint ? checkpoint.total_steps || checkpoint.plan.length : null}
            />
          )}
        </div>
      </div>
    </div>
  );
}

/** What wrote a version: its kind, who, and for the ways back what they went back to. */
function SourceCell({ entry }: { entry: VersionEntry }) {
  const src = entry.source;
  const marked = src.kind === 'fork' || src.kind === 'rewind' || src.kind === 'stop';
  const what =
    src.kind === 'fork' && src.forked_from
      ? `forked from ${src.forked_from.task_id} v${src.forked_from.version}`
      : src.kind === 'rewind' && src.rewind
        ? `rerun from ${src.rewind.step_id}${src.rewind.redo.length ? `, redo ${src.rewind.redo.join(', ')} under new keys` : ', every side effect kept'}`
        : src.kind === 'stop'
          ? 'stopped by a person'
          : null;
  const note = src.note ?? (src.edit ? `edited step ${src.edit.step_id}` : null);
  return (
    <>
      <span className={`tag source-${src.kind}`}>
        {marked &&
          (src.kind === 'fork' ? (
            <>
              <ForkIcon />{' '}
            </>
          ) : (
            <span aria-hidden="true">{src.kind === 'rewind' ? '↺ ' : '■ '}</span>
          ))}
        {src.kind}
      </span>
      {src.actor && <span className="muted small"> {src.actor}</span>}
      {what && <div className="small note marked-note">{what}</div>}
      {note && note !== what && <div className="muted small note">{note}</div>}
    </>
  );
}
