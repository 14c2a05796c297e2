/**
 * Human-confirmed mode: the resume plan a task is waiting on, with Approve
 * and Reject. Rejecting needs a reason, which is recorded with the decision.
 */
import { useId, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { TaskAgentStatus } from '../../../shared/api/contract.js';
import type { Checkpoint, PendingApproval, ResumePlan } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';
import { agentBlockReason, shortSha } from './agent-status.js';
import { formatTime } from './format.js';

/**
 * The plan's agent-module line, or null when the module plays no part.
 *
 * The plan records whether the module had changed when it was made; the
 * agent status says how the module stands now. When they disagree, approving
 * does not run this plan: the runtime prepares a new one for the module as it
 * is, so the line says that instead of promising what the plan lists.
 */
function moduleLine(plan: ResumePlan, status: TaskAgentStatus | null | undefined): string | null {
  const changedNow = Boolean(status?.available && status.module_changed);
  const hashes =
    status?.recorded_sha256 && status.current_sha256
      ? ` (sha256 ${shortSha(status.recorded_sha256)} → ${shortSha(status.current_sha256)})`
      : '';
  if (plan.module_changed) {
    if (status?.origin === 'module' && status.available && !changedNow) {
      return 'changed when the plan was made, but now back to the code the task last ran: approving prepares a new plan instead';
    }
    return `changed since the last run${hashes}: the remaining steps run with the new code`;
  }
  if (changedNow)
    return `changed since the plan was made${hashes}: approving prepares a new plan that includes the change instead of running this one`;
  return null;
}

export function ApprovalPanel({
  checkpoint,
  pending,
  blocked,
  agentStatus = null,
  agentNoteId,
}: {
  checkpoint: Checkpoint;
  pending: PendingApproval;
  /** Why neither Approve nor Reject can be used now (the host out of reach, a read-only directory or task), or null. */
  blocked: string | null;
  /** The task's agent as it stands now; an unavailable agent disables Approve. */
  agentStatus?: TaskAgentStatus | null;
  /** The id of the notice that explains the agent's state, read out as Approve's description. */
  agentNoteId?: string;
}) {
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | null>(null);
  const taskId = checkpoint.task_id;
  const { approving, rejecting } = useAppStore(
    useShallow((s) => ({ approving: Boolean(s.busy[`approve:${taskId}`]), rejecting: Boolean(s.busy[`reject:${taskId}`]) })),
  );
  const approve = useAppStore((s) => s.approve);
  const reject = useAppStore((s) => s.reject);
  const plan = pending.plan;
  const stepName = (id: string | null) => (id ? (checkpoint.plan.find((s) => s.id === id)?.name ?? id) : null);
  const effect = (id: string) => {
    const e = checkpoint.side_effects.find((x) => x.id === id);
    return e ? `${e.type} · ${e.idempotency_key} (${e.status})` : id;
  };
  const busy = approving || rejecting;
  const blockedNoteId = useId();
  const agentBlocked = agentBlockReason(agentStatus);
  // A disabled button says why, in its title and in the note it is described by.
  const approveBlocked = blocked ?? agentBlocked;
  const approveDescribedBy = [blocked ? blockedNoteId : null, agentNoteId].filter(Boolean).join(' ') || undefined;
  const module = moduleLine(plan, agentStatus);

  return (
    <section className="approval" aria-label="Resume approval">
      <header>
        <span className="badge tone-warn">
          <span className="badge-icon" aria-hidden="true">
            ⚑
          </span>
          Approval needed
        </span>
        <span className="muted small">requested {formatTime(pending.requested_at)}</span>
      </header>
      <div className="approval-body">
        <div>
          <p>The task is in human-confirmed mode. Resuming it will do the following:</p>
          <dl className="kv">
            <dt>Rerun step</dt>
            <dd>{stepName(plan.rerun_step) ?? <span className="muted">none</span>}</dd>
            <dt>Probe effects</dt>
            <dd>
              {plan.probe_effects.length ? (
                <ul className="plain">
                  {plan.probe_effects.map((id) => (
                    <li key={id}>{effect(id)}</li>
                  ))}
                </ul>
              ) : (
                <span className="muted">none</span>
              )}
            </dd>
            <dt>Retry effects</dt>
            <dd>
              {plan.retry_effects.length ? (
                <ul className="plain">
                  {plan.retry_effects.map((id) => (
                    <li key={id}>{effect(id)}</li>
                  ))}
                </ul>
              ) : (
                <span className="muted">none</span>
              )}
            </dd>
            {(plan.redo_effects ?? []).length > 0 && (
              <>
                {/* Chosen by a person when rerunning from a step: a repeat, under a new key, of an effect that was done. */}
                <dt>Perform again, under a new key</dt>
                <dd>
                  <ul className="plain">
                    {(plan.redo_effects ?? []).map((id) => (
                      <li key={id}>{effect(id)}</li>
                    ))}
                  </ul>
                </dd>
              </>
            )}
            <dt>Drift found</dt>
            <dd>
              {plan.drift.length ? (
                <ul className="plain">
                  {plan.drift.map((d) => (
                    <li key={d}>{d}</li>
                  ))}
                </ul>
              ) : (
                <span className="muted">none</span>
              )}
            </dd>
            {module && (
              <>
                <dt>Agent module</dt>
                <dd className="warn-text" data-testid="plan-agent-module">
                  {module}
                </dd>
              </>
            )}
          </dl>
        </div>
        <div className="approval-actions">
          {blocked && (
            <p id={blockedNoteId} className="muted small approval-blocked" role="note">
              {blocked}.
            </p>
          )}
          <button
            type="button"
            className="primary"
            disabled={busy || approveBlocked !== null}
            aria-describedby={approveDescribedBy}
            title={approveBlocked ?? undefined}
            onClick={() => void approve(taskId)}
          >
            {approving ? 'Approving…' : 'Approve'}
          </button>
          <div className="reject-box">
            <label htmlFor="reject-reason">Reason for rejecting</label>
            <textarea
              id="reject-reason"
              rows={2}
              value={reason}
              aria-invalid={reasonError ? true : undefined}
              aria-describedby={reasonError ? 'reject-reason-error' : undefined}
              onChange={(e) => {
                setReason(e.target.value);
                setReasonError(null);
              }}
              placeholder="Why should this resume not happen?"
            />
            {reasonError && (
              <p id="reject-reason-error" role="alert" className="error-text">
                {reasonError}
              </p>
            )}
            <button
              type="button"
              className="danger"
              disabled={busy || blocked !== null}
              aria-describedby={blocked ? blockedNoteId : undefined}
              title={blocked ?? undefined}
              onClick={() => {
                if (!reason.trim()) {
                  setReasonError('A reason is required to reject a resume.');
                  return;
                }
                void reject(taskId, reason.trim());
              }}
            >
              {rejecting ? 'Rejecting…' : 'Reject'}
            </button>
          </div>
        </div>
      </div>
    </section>
  );
}
