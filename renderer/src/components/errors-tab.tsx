/** The errors: current failures of the plan's steps first, then the recorded log (what failed, what fixed it, how it was checked). */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { currentFailures, isRecovered } from '../store/current-failures.js';
import { formatTime } from './format.js';

export function ErrorsTab({ checkpoint }: { checkpoint: Checkpoint }) {
  const current = currentFailures(checkpoint);
  const allRecovered = current.length === 0 && checkpoint.errors.every((e) => isRecovered(checkpoint, e));
  if (checkpoint.errors.length === 0 && current.length === 0) return <p className="empty-inline">No errors recorded for this task.</p>;
  return (
    <>
      {current.length > 0 && (
        <section aria-labelledby="current-failures-title">
          <h3 id="current-failures-title" className="section-title">
            Current failure{current.length === 1 ? '' : 's'}
          </h3>
          <ol className="error-log" aria-label="Current failures">
            {current.map((f) => (
              <li key={f.step_id} className="error-entry">
                <div className="error-entry-head">
                  <span className="badge tone-bad">
                    <span className="badge-icon" aria-hidden="true">
                      ✕
                    </span>
                    Failed
                  </span>
                  <span>
                    step <strong>{f.step_name}</strong> <span className="mono muted">{f.step_id}</span>
                  </span>
                  <span className="spacer" />
                  {f.at && (
                    <time className="muted" dateTime={f.at}>
                      {formatTime(f.at)}
                    </time>
                  )}
                </div>
                <dl className="kv">
                  <dt>What</dt>
                  <dd>
                    {f.kind && <strong>{f.kind}: </strong>}
                    {f.message}
                  </dd>
                  <dt>Fix</dt>
                  <dd>
                    <span className="muted">not fixed yet: edit the step&apos;s result in the Plan tab, or resume to run it again</span>
                  </dd>
                </dl>
              </li>
            ))}
          </ol>
        </section>
      )}
      {checkpoint.errors.length > 0 && (
        <section>
          {current.length > 0 && <h3 className="section-title">Recorded errors</h3>}
          {allRecovered && (
            <p className="muted small">
              {checkpoint.status === 'done' ? 'The task finished' : 'The task got past them'}: these are errors of earlier attempts, kept in
              its log.
            </p>
          )}
          <ol className="error-log" aria-label="Recorded errors">
            {[...checkpoint.errors].reverse().map((e, i) => (
              <li key={`${e.at}-${i}`} className={`error-entry${isRecovered(checkpoint, e) ? ' recovered' : ''}`}>
                <div className="error-entry-head">
                  {isRecovered(checkpoint, e) ? (
                    <span className="badge tone-muted" title="An earlier attempt's error: the task got past it">
                      <span className="badge-icon" aria-hidden="true">
                        ↺
                      </span>
                      Earlier error
                    </span>
                  ) : (
                    <span className="badge tone-bad">
                      <span className="badge-icon" aria-hidden="true">
                        ✕
                      </span>
                      Error
                    </span>
                  )}
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
                  <dd>
                    {e.fix ?? (
                      <span className="muted">
                        {isRecovered(checkpoint, e) ? 'none recorded; a later attempt got past it' : 'not fixed yet'}
                      </span>
                    )}
                  </dd>
                  <dt>Verified by</dt>
                  <dd>{e.verification ?? <span className="muted">—</span>}</dd>
                </dl>
              </li>
            ))}
          </ol>
        </section>
      )}
    </>
  );
}
