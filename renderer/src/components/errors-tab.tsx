/** The recorded errors: what failed, what fixed it, how the fix was verified. */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { formatTime } from './format.js';

export function ErrorsTab({ checkpoint }: { checkpoint: Checkpoint }) {
  if (checkpoint.errors.length === 0) return <p className="empty-inline">No errors recorded for this task.</p>;
  return (
    <ol className="error-log" aria-label="Recorded errors">
      {[...checkpoint.errors].reverse().map((e, i) => (
        <li key={`${e.at}-${i}`} className="error-entry">
          <div className="error-entry-head">
            <span className="badge tone-bad">
              <span className="badge-icon" aria-hidden="true">
                ✕
              </span>
              Error
            </span>
            {e.step_id && <span className="mono">step {e.step_id}</span>}
            <span className="spacer" />
            <time className="muted" dateTime={e.at}>
              {formatTime(e.at)}
            </time>
          </div>
          <dl className="kv">
            <dt>What</dt>
            <dd>{e.what}</dd>
            <dt>Fix</dt>
            <dd>{e.fix ?? <span className="muted">not fixed yet</span>}</dd>
            <dt>Verified by</dt>
            <dd>{e.verification ?? <span className="muted">—</span>}</dd>
          </dl>
        </li>
      ))}
    </ol>
  );
}
