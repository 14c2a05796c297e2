/**
 * Resuming a task written in one of the source articles' formats imports it
 * first. That writes a new Waystation task beside the file, so the page says
 * what will happen, and asks, before anything is written.
 */
import type { TaskDetail } from '../../../shared/api/contract.js';

/** Whether resuming this task imports it first: a task read from another format. */
export function resumeImports(detail: TaskDetail): boolean {
  return detail.summary.format !== 'waystation';
}

export function ImportConfirm({ detail, onConfirm, onCancel }: { detail: TaskDetail; onConfirm(): void; onCancel(): void }) {
  const cp = detail.checkpoint;
  const next = cp?.plan.find((s) => s.status !== 'done' && s.status !== 'skipped');
  const done = cp ? cp.plan.filter((s) => s.status === 'done' || s.status === 'skipped').length : 0;
  const agent = detail.agent_status?.name;
  return (
    <section className="import-confirm" role="region" aria-label="Import before resuming">
      <h2 className="section-title">Resuming imports this task first</h2>
      <ul>
        <li>
          <span className="mono">{detail.summary.location}</span> ({detail.summary.format}) is read as it is and written as a new Waystation
          task in this directory; the file itself is not changed.
        </li>
        <li>
          {agent
            ? `The task is handed to agent ${agent}.`
            : 'The task is handed to the built-in agent that recognises its format; when none does, nothing is written and the reason is shown.'}{' '}
          The {done} finished step{done === 1 ? '' : 's'} keep their results and are not run again; step names stay as recorded.
        </li>
        {next && cp && (
          <li>
            {/* Not "at step NAME": a step's name often says "step" itself (the first article's are "step 3"). */}
            The run continues at <strong>{next.name || next.id}</strong>, step {cp.plan.indexOf(next) + 1} of {cp.plan.length}.
          </li>
        )}
      </ul>
      <div className="row-actions">
        <button type="button" className="primary" onClick={onConfirm}>
          Import and resume
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </section>
  );
}
