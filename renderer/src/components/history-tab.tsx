/** Every version with its source and time; pick any two to diff. */
import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../store/app-store.js';
import { DiffView } from './diff-view.js';
import { formatBytes, formatTime } from './format.js';

export function HistoryTab() {
  const { history, historyState, diff } = useAppStore(
    useShallow((s) => ({ history: s.history, historyState: s.historyState, diff: s.diff })),
  );
  const setDiffPair = useAppStore((s) => s.setDiffPair);

  if (historyState === 'loading' || (historyState === 'idle' && history.length === 0)) {
    return (
      <p role="status" className="muted">
        <span className="spinner" aria-hidden="true" /> Loading history…
      </p>
    );
  }
  if (history.length === 0) return <p className="empty-inline">No versions: this task has no readable history.</p>;

  const newestFirst = [...history].reverse();
  return (
    <div className="history">
      <p className="muted small">Pick a version in each column to compare them.{history.length > 1 && ' '}</p>
      {history.length > 1 && (
        <div className="row-actions">
          <button type="button" onClick={() => setDiffPair(history[history.length - 2].version, history[history.length - 1].version)}>
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
                  <td className="mono">v{v.version}</td>
                  <td>
                    <span className={`tag source-${v.source.kind}`}>{v.source.kind}</span>
                    {v.source.actor && <span className="muted small"> {v.source.actor}</span>}
                    {(v.source.note || v.source.edit) && (
                      <div className="muted small note">{v.source.note ?? `edited step ${v.source.edit!.step_id}`}</div>
                    )}
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
          {diff.result && diff.state !== 'error' && <DiffView diff={diff.result} />}
        </div>
      </div>
    </div>
  );
}
