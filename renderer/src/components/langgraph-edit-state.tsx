/**
 * "Edit state" on a checkpoint of a LangGraph thread: new values for some of
 * its channels, written as one new checkpoint the way LangGraph's
 * updateState writes one. The one write Waystation makes to a LangGraph
 * checkpointer, so it goes in two steps: the values are previewed (nothing
 * written) and the dialog shows what the write will be, then a second button
 * writes it.
 */
import { useEffect, useRef, useState } from 'react';
import type { TaskDetail, ThreadEditPlan } from '../../../shared/api/contract.js';
import { useAppStore } from '../store/app-store.js';
import { errorText } from '../store/error-text.js';
import { formatTime } from './format.js';

interface LangGraphView {
  checkpoint_id: string;
  channels: Record<string, unknown>;
}

/** The LangGraph part of the version shown, or null for a Waystation task. */
function langGraphOf(detail: TaskDetail): LangGraphView | null {
  const lg = (detail.checkpoint as { langgraph?: Partial<LangGraphView> } | null)?.langgraph;
  if (!lg || typeof lg.checkpoint_id !== 'string') return null;
  return { checkpoint_id: lg.checkpoint_id, channels: typeof lg.channels === 'object' && lg.channels ? lg.channels : {} };
}

/** The channels a person may set, with their values at this checkpoint: LangGraph's own bookkeeping left out. */
const editable = (channels: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(channels).filter(([name]) => !name.startsWith('branch:') && !name.startsWith('__')));

function parseValues(text: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return `Not JSON: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return 'Give a JSON object of channel names to their new values, e.g. {"draft": "Hello"}.';
  if (Object.keys(parsed).length === 0) return 'Name at least one channel to set.';
  return parsed as Record<string, unknown>;
}

/** The button and its dialog; renders nothing for a task that is not a LangGraph thread. */
export function LangGraphEditState({ detail }: { detail: TaskDetail }) {
  const lg = langGraphOf(detail);
  const api = useAppStore((s) => s.api);
  const notify = useAppStore((s) => s.notify);
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [plan, setPlan] = useState<ThreadEditPlan | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close();
  }, [open]);

  if (!lg || detail.version === null) return null;
  const version = detail.version;
  const taskId = detail.summary.task_id;

  const start = () => {
    setText(JSON.stringify(editable(lg.channels), null, 2));
    setPlan(null);
    setFailure(null);
    setOpen(true);
  };

  const preview = async () => {
    const values = parseValues(text);
    if (typeof values === 'string') return setFailure(values);
    setBusy(true);
    setFailure(null);
    try {
      setPlan(await api.previewThreadEdit({ taskId, version, values }));
    } catch (err) {
      setFailure(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const write = async () => {
    if (!plan) return;
    setBusy(true);
    setFailure(null);
    try {
      const result = await api.editThreadState({ taskId, version, values: plan.values, expectedCheckpointId: plan.parent.checkpoint_id });
      notify('success', result.message, taskId);
      setOpen(false);
    } catch (err) {
      setFailure(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <button type="button" onClick={start} title="Write a new checkpoint on this thread from this one, with new channel values">
        Edit state…
      </button>
      <dialog ref={dialog} className="dialog" aria-labelledby="lg-edit-title" onClose={() => setOpen(false)}>
        <h2 id="lg-edit-title">Edit state of version {version}</h2>
        {!plan ? (
          <>
            <p className="muted">
              New values for the thread&apos;s channels, as JSON (messages as {'{"role": "user", "content": "..."}'}). The channels you
              leave out keep their values. Nothing is written until you confirm.
            </p>
            {detail.lease.held && (
              <p className="warn-text" role="note">
                A LangGraph run may be driving this thread: its newest checkpoint was taken
                {detail.lease.since ? ` at ${formatTime(detail.lease.since)}` : ' moments ago'}. The run&apos;s next checkpoint follows its
                own, not this edit, and invoking the graph then carries on from that one. Write once the thread shows interrupted or done.
              </p>
            )}
            <label htmlFor="lg-edit-values">Channel values</label>
            <textarea
              id="lg-edit-values"
              className="mono"
              rows={12}
              spellCheck={false}
              value={text}
              onChange={(e) => {
                setText(e.target.value);
                setFailure(null);
              }}
            />
          </>
        ) : (
          <section aria-label="What will be written">
            <p>
              Writes <strong>one new checkpoint</strong> on thread <span className="mono">{plan.thread_id}</span>
              {plan.checkpoint_ns && (
                <>
                  {' '}
                  (namespace <span className="mono">{plan.checkpoint_ns}</span>)
                </>
              )}{' '}
              in <span className="mono">{plan.where}</span>; no existing checkpoint is changed.
            </p>
            <dl className="kv">
              <div className="kv-row">
                <dt>Parent</dt>
                <dd>
                  version {plan.parent.version} <span className="mono small">{plan.parent.checkpoint_id}</span>
                </dd>
              </div>
              <div className="kv-row">
                <dt>Metadata</dt>
                <dd>
                  source update, step {plan.step} ({plan.serde} serde)
                </dd>
              </div>
              {plan.channels.map((c) => (
                <div className="kv-row" key={c.name}>
                  <dt>Channel {c.name}</dt>
                  <dd>
                    version {JSON.stringify(c.from)} → {JSON.stringify(c.to)}
                  </dd>
                </div>
              ))}
            </dl>
            <pre className="mono small" aria-label="Values written">
              {JSON.stringify(plan.values, null, 2)}
            </pre>
            <p className="muted">Invoking the graph on the thread afterwards carries on from the new checkpoint.</p>
          </section>
        )}
        {failure && (
          <p role="alert" className="error-text">
            {failure}
          </p>
        )}
        <div className="row-actions">
          {!plan ? (
            <button type="button" className="primary" disabled={busy} onClick={() => void preview()}>
              Preview
            </button>
          ) : (
            <>
              <button type="button" className="primary" disabled={busy} aria-busy={busy} onClick={() => void write()}>
                Write checkpoint
              </button>
              <button type="button" disabled={busy} onClick={() => setPlan(null)}>
                Back
              </button>
            </>
          )}
          <button type="button" disabled={busy} onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}
