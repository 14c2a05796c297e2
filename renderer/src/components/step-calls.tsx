/** A step's model calls in the Plan tab: prompt, reply, tokens, latency, retries and errors, call by call. */
import { useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { Checkpoint, PlanStep } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';
import { stepModelCalls } from '../store/step-calls.js';
import { formatCount, formatDuration } from './format.js';
import { ValueView } from './json-view.js';

export function StepCalls({ checkpoint, step }: { checkpoint: Checkpoint; step: PlanStep }) {
  const { messages, loadMessages } = useAppStore(useShallow((s) => ({ messages: s.messages, loadMessages: s.loadMessages })));
  useEffect(() => {
    void loadMessages();
  }, [loadMessages, checkpoint.version]);
  const label = step.name || step.id;
  const ready = messages.state === 'ready' && messages.taskId === checkpoint.task_id && messages.version === checkpoint.version;
  if (!ready && messages.state !== 'error') {
    return (
      <p role="status" className="muted">
        <span className="spinner" aria-hidden="true" /> Loading the model calls…
      </p>
    );
  }
  const calls = stepModelCalls(checkpoint, ready ? messages.items : [], step.id);
  return (
    <section className="step-calls" aria-label={`Model calls of step ${label}`}>
      {messages.state === 'error' && (
        <p role="alert" className="error-text">
          The recorded messages could not be read ({messages.error}); the figures below come from the run&apos;s call log.
        </p>
      )}
      {calls.length === 0 ? (
        <p className="muted">No model call recorded for this step.</p>
      ) : (
        <ol className="plain">
          {calls.map((c) => (
            <li key={c.index} className={`step-call${c.error ? ' step-call-failed' : ''}`}>
              <div className="step-call-head">
                <strong>Call {c.index}</strong>
                {c.model && <span className="tag">{c.model}</span>}
                <span className="metric">
                  {formatCount(c.tokens_in)} → {formatCount(c.tokens_out)} tok
                </span>
                <span className="metric">{c.latency_ms === null ? 'reused from the checkpoint' : formatDuration(c.latency_ms)}</span>
                {c.cost_usd !== null && <span className="metric">${c.cost_usd.toFixed(4)}</span>}
                {c.retries > 0 && (
                  <span className="metric" title={c.retry_reasons.join('; ')}>
                    {c.retries} {c.retries === 1 ? 'retry' : 'retries'}
                  </span>
                )}
              </div>
              {c.error && (
                <p className="step-error" role="note">
                  <strong>failed:</strong> {c.error}
                </p>
              )}
              {c.retry_reasons.length > 0 && <p className="muted small">Retried because: {c.retry_reasons.join('; ')}</p>}
              {c.prompt !== null && (
                <details>
                  <summary>Prompt</summary>
                  <ValueView value={c.prompt} label={`Prompt of call ${c.index} of step ${label}`} />
                </details>
              )}
              {c.response !== null && (
                <details open>
                  <summary>Response</summary>
                  <ValueView value={c.response} label={`Response of call ${c.index} of step ${label}`} />
                </details>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
