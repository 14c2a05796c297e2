/** The main pane: one task's header, approval, live activity, and its tabs. */
import { useId, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { TaskDetail } from '../../../shared/api/contract.js';
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';
import type { VersionSource } from '../../../shared/checkpoint/schema.js';
import { useAppStore } from '../store/app-store.js';
import { NOTHING_TO_START, readOnlyReason } from '../store/read-only.js';
import { hostUnreachableReason } from '../store/action-block.js';
import type { TabId } from '../store/store-types.js';
import { StatusBadge, TaskStatusBadge } from './status-badge.js';
import { currentFailures, hasStandingErrors } from '../store/current-failures.js';
import { fillDirectory } from '../../../shared/checkpoint/fill-directory.js';
import { isUntouchedFork } from '../../../shared/checkpoint/untouched-fork.js';
import { Tabs, type TabDef } from './tabs.js';
import { PlanTab } from './plan-tab.js';
import { ArtifactsTab } from './artifacts-tab.js';
import { EffectsTab } from './effects-tab.js';
import { ErrorsTab } from './errors-tab.js';
import { RunTab } from './run-tab.js';
import { HistoryTab } from './history-tab.js';
import { MessagesTab } from './messages-tab.js';
import { EventsTab } from './events-tab.js';
import { ImportConfirm, resumeImports } from './import-confirm.js';
import { LangGraphEditState } from './langgraph-edit-state.js';
import { ApprovalPanel } from './approval-panel.js';
import { ActivityFeed } from './activity-feed.js';
import { AgentNotice, AgentTag, agentBlockReason } from './agent-status.js';
import { formatRelative, formatTime, taskLabel } from './format.js';
import { HeldForkNote, StopButton, StoppedNote } from './stop-control.js';
import { ForkDialog } from './fork-dialog.js';
import { RewindDialog } from './rewind-dialog.js';

// Not halted: a rejected resume plan ends the task (fork it or rerun a step), and the host refuses its resume.
const RESUMABLE: ReadonlySet<DisplayStatus> = new Set<DisplayStatus>(['failed', 'interrupted', 'drifted', 'waiting_human']);

export function TaskView() {
  const { detail, detailState, detailError, selectedTaskId } = useAppStore(
    useShallow((s) => ({ detail: s.detail, detailState: s.detailState, detailError: s.detailError, selectedTaskId: s.selectedTaskId })),
  );
  if (!selectedTaskId) return <NoSelection />;
  if (!detail) {
    if (detailState === 'waiting') {
      return (
        <div className="main-empty" role="status">
          <h1>
            <span className="spinner" aria-hidden="true" /> Waiting for {selectedTaskId}…
          </h1>
          <p className="muted">It is not in the directory yet: it opens here as soon as its first version is written.</p>
        </div>
      );
    }
    return detailState === 'error' ? (
      <div className="main-empty" role="alert">
        <h1>Could not open {selectedTaskId}</h1>
        <p>{detailError}</p>
      </div>
    ) : (
      <div className="main-empty" role="status">
        <span className="spinner" aria-hidden="true" /> Loading {selectedTaskId}…
      </div>
    );
  }
  // Keyed by task: what a person started in one task's view (an import to confirm) does not carry over to the next.
  return <TaskDetailView key={detail.summary.task_id} detail={detail} />;
}

function NoSelection() {
  const hasTasks = useAppStore((s) => s.tasks.length > 0);
  const refused = useAppStore((s) => (s.connection === 'refused' ? (s.connectionProblem?.reason ?? '') : null));
  const noDirectory = useAppStore((s) => s.directory !== null && s.directory.root === null);
  const setStartDialogOpen = useAppStore((s) => s.setStartDialogOpen);
  const readOnly = useAppStore((s) => readOnlyReason(s.directory) !== null);
  if (refused !== null) {
    // Not an empty directory: a page the host does not let in. Retrying cannot help; the host's own URL does.
    return (
      <div className="main-empty" role="alert">
        <h1>This page is not let in</h1>
        <p>
          The Waystation host refuses this page's token. It makes a new one each time it starts: open the URL it printed when it started (
          <code>waystation serve</code> prints it, with <code>?token=</code>), or reload the desktop window.
        </p>
        <p className="muted small">{refused}</p>
      </div>
    );
  }
  if (noDirectory) {
    return (
      <div className="main-empty">
        <h1>Open a checkpoint directory</h1>
        <p className="muted">Waystation shows the tasks of one checkpoint directory at a time: choose one on the left to begin.</p>
      </div>
    );
  }
  return (
    <div className="main-empty">
      <h1>{hasTasks ? 'Select a task' : 'Nothing here yet'}</h1>
      <p className="muted">
        {hasTasks
          ? 'Pick a task on the left (↑/↓ to move, / to search) to see its plan, artifacts, side effects and history.'
          : readOnly
            ? NOTHING_TO_START
            : 'Start a task from one of the available agents and watch it run here.'}
      </p>
      {!readOnly && (
        <button type="button" className="primary" onClick={() => setStartDialogOpen(true)}>
          New task
        </button>
      )}
    </div>
  );
}

function TaskDetailView({ detail }: { detail: TaskDetail }) {
  const { tab, resuming, loadingVersion, runnerActive, messages, history, historyReady } = useAppStore(
    useShallow((s) => ({
      tab: s.tab,
      resuming: Boolean(s.busy[`resume:${detail.summary.task_id}`]),
      loadingVersion: s.detailState === 'loading',
      // A runner this host started is at work (or an approval or resume was just sent): nothing else is offered meanwhile.
      runnerActive:
        Boolean(s.runners[detail.summary.task_id]) ||
        Boolean(s.busy[`resume:${detail.summary.task_id}`] ?? s.busy[`approve:${detail.summary.task_id}`]),
      messages: s.messages,
      history: s.history,
      historyReady: s.historyState === 'ready',
    })),
  );
  const setTab = useAppStore((s) => s.setTab);
  const resume = useAppStore((s) => s.resume);
  const directoryReadOnly = useAppStore((s) => readOnlyReason(s.directory));
  // The host out of reach: what is shown is what was last read, and nothing can be done to it until it is back.
  const hostBlocked = useAppStore((s) => hostUnreachableReason(s));
  const directoryRoot = useAppStore((s) => s.directory?.root ?? null);
  const viewVersion = useAppStore((s) => s.viewVersion);
  const cp = detail.checkpoint;
  const summary = detail.summary;
  const taskId = summary.task_id;
  // An older version is history: shown whole, acted on never.
  const viewingOld = detail.version !== null && detail.latest_version !== null && detail.version !== detail.latest_version;
  const pending = viewingOld ? null : (cp?.recovery.pending_approval ?? null);
  const status = summary.display_status;
  // A task whose checkpoint says done has nothing to resume, whatever its display status (a drifted
  // done task needs its files looked at, not a run); a task a runner is driving has its runner.
  const running = detail.lease.held || runnerActive || status === 'running';
  const canResume = !viewingOld && cp !== null && cp.status !== 'done' && RESUMABLE.has(status) && !pending && !running;
  const agentNoteId = useId();
  // Resuming a task of another format imports it: asked about first, per task opened.
  const [confirmingImport, setConfirmingImport] = useState(false);
  // The version being forked, while the fork dialog is open.
  const [forking, setForking] = useState<number | null>(null);
  // Going back writes: never from an older version's view of the header, a read-only directory, or a file of another format.
  const writable = cp !== null && !detail.read_only && directoryReadOnly === null;
  const canStop = writable && !viewingOld && running;
  // Why Approve and Reject cannot be used, said beside them: the host, the directory, or the task's own format.
  const approvalBlocked =
    hostBlocked ??
    directoryReadOnly ??
    (detail.read_only ? `This task is read as it is from a file in the ${summary.format} format: nothing in it is changed here` : null);
  // A step recorded running is not running when nothing drives the task: the run was cut off there.
  const stepsInterrupted = !viewingOld && !running;
  const agent = detail.agent_status;
  // The agent notice matters only where a resume or an approval is on offer; a done task's old module is history.
  const showAgentNotice = !viewingOld && cp !== null && (RESUMABLE.has(status) || pending !== null);
  const agentBlocked = agentBlockReason(agent);
  const agentNoticed = showAgentNotice && (agentBlocked !== null || Boolean(agent?.load_problem) || Boolean(agent?.module_changed));
  const errorCount = cp ? cp.errors.length + currentFailures(cp).length : 0;
  // The count is what the panel lists: the messages loaded for this version once they are, the recorded count until then.
  const messagesShown = messages.state === 'ready' && messages.taskId === taskId && messages.version === detail.version;
  const messageCount = messagesShown ? messages.items.length : (cp?.history.count ?? 0);
  const doneSteps = cp ? cp.plan.filter((s) => s.status === 'done' || s.status === 'skipped').length : 0;
  const total = cp ? cp.total_steps || cp.plan.length : 0;

  const tabs: TabDef<TabId>[] = cp
    ? [
        { id: 'plan', label: 'Plan', count: cp.plan.length, alert: cp.plan.some((s) => s.status === 'failed') },
        { id: 'artifacts', label: 'Artifacts', count: cp.artifacts.length, alert: status === 'drifted' },
        {
          id: 'effects',
          label: 'Side effects',
          count: cp.side_effects.length,
          alert: cp.side_effects.some((e) => e.status === 'uncertain'),
        },
        // Errors of earlier attempts the task got past are counted, not raised as an alarm.
        { id: 'errors', label: 'Errors', count: errorCount, alert: hasStandingErrors(cp) },
        { id: 'run', label: 'Run' },
        { id: 'messages', label: 'Messages', count: messageCount || undefined },
        { id: 'history', label: 'History', count: historyReady ? history.length : undefined },
        { id: 'events', label: 'Events' },
      ]
    : [];

  return (
    <article className="task-view" aria-label={`Task ${taskLabel(summary)}`}>
      <header className="task-header">
        <div className="task-title-row">
          {/* Focusable from script: where focus lands when a dialog took away the control that opened it. */}
          {/* Cut to one line with an ellipsis when long: its title reads it whole. */}
          <h1 className="task-title" tabIndex={-1} title={taskLabel(summary)}>
            {taskLabel(summary)}
          </h1>
          {/* The header speaks of the version shown: an older one had its own status. */}
          {viewingOld && cp ? <StatusBadge status={cp.status} /> : <TaskStatusBadge status={status} />}
          <span className="spacer" />
          <LangGraphEditState detail={detail} />
          {canStop && <StopButton taskId={taskId} blocked={hostBlocked} />}
          {canResume && (
            <button
              type="button"
              className="primary"
              disabled={resuming || agentBlocked !== null || directoryReadOnly !== null || hostBlocked !== null}
              aria-busy={resuming}
              aria-describedby={agentNoticed ? agentNoteId : undefined}
              title={hostBlocked ?? directoryReadOnly ?? agentBlocked ?? undefined}
              aria-expanded={resumeImports(detail) ? confirmingImport : undefined}
              onClick={() => (resumeImports(detail) ? setConfirmingImport(true) : void resume(taskId))}
            >
              {resuming ? (
                <>
                  <span className="spinner" aria-hidden="true" /> Resuming…
                </>
              ) : (
                '▶ Resume'
              )}
            </button>
          )}
        </div>
        <div className="task-meta">
          {/* An id of 128 characters with no break in it wraps rather than push the pane sideways. */}
          <span className="mono wrap-anywhere">{taskId}</span>
          {detail.version !== null && <VersionPicker detail={detail} />}
          {writable && detail.version !== null && (
            <button
              type="button"
              className="link"
              aria-haspopup="dialog"
              disabled={hostBlocked !== null}
              title={hostBlocked ?? `Fork a new task from version ${detail.version}`}
              onClick={() => setForking(detail.version)}
            >
              Fork from this version…
            </button>
          )}
          {summary.mode && <span className="tag">mode: {summary.mode}</span>}
          <AgentTag status={agent} fallbackName={summary.agent_name} />
          {detail.read_only && <span className="tag warn">read-only ({summary.format})</span>}
          {detail.lease.held && (
            <span className="tag run" title={detail.lease.since ? `since ${formatTime(detail.lease.since)}` : undefined}>
              driven by {detail.lease.owner ?? 'a runner'}
              {detail.lease.pid ? ` (pid ${detail.lease.pid})` : ''}
            </span>
          )}
          {summary.updated_at && <span title={formatTime(summary.updated_at)}>updated {formatRelative(summary.updated_at)}</span>}
        </div>
        {cp && (
          <div className="task-progress-row">
            <span className="phase">
              <span className="muted">Phase</span> {cp.phase || '—'}
            </span>
            <div
              className="progress"
              role="progressbar"
              aria-label="Plan progress"
              aria-valuemin={0}
              aria-valuemax={total}
              aria-valuenow={doneSteps}
              aria-valuetext={`${doneSteps} of ${total} steps done`}
            >
              <div className="progress-fill" style={{ width: `${total ? (doneSteps / total) * 100 : 0}%` }} />
            </div>
            <span className="mono small">
              {doneSteps}/{total}
            </span>
          </div>
        )}
        {!viewingOld && cp?.status === 'running' && cp.forked_from && isUntouchedFork(cp) ? (
          // Held by the fork itself, until a version of its own is written (a stop an earlier build recorded there too).
          <HeldForkNote forkedFrom={cp.forked_from} by={cp.source.actor} at={cp.run.created_at} />
        ) : (
          !viewingOld && cp?.recovery.stopped && <StoppedNote stopped={cp.recovery.stopped} />
        )}
        {showAgentNotice && <AgentNotice status={agent} id={agentNoteId} />}
        {canResume && confirmingImport && (
          <ImportConfirm
            detail={detail}
            onCancel={() => setConfirmingImport(false)}
            onConfirm={() => {
              setConfirmingImport(false);
              void resume(taskId);
            }}
          />
        )}
      </header>

      {viewingOld && cp && (
        <div className="version-banner" role="status" aria-label="Older version">
          <span>
            <strong>
              Viewing version {detail.version} of {detail.latest_version}
            </strong>{' '}
            <span className="muted">
              (read-only; written {formatTime(cp.run.updated_at)}, status then: {cp.status.replace(/_/g, ' ')})
            </span>
          </span>
          <span className="spacer" />
          <button type="button" className="primary" onClick={() => viewVersion(null)} disabled={loadingVersion}>
            Back to latest
          </button>
        </div>
      )}

      {detail.problems.length > 0 && <Problems detail={detail} />}

      {cp && (
        <>
          <dl className="kv goal-kv">
            <dt>Goal</dt>
            <dd>{cp.goal || <span className="muted">—</span>}</dd>
            <dt>Resume hint</dt>
            <dd>{cp.resume_hint ? fillDirectory(cp.resume_hint, directoryRoot) : <span className="muted">—</span>}</dd>
          </dl>
          {pending && (
            <ApprovalPanel
              checkpoint={cp}
              pending={pending}
              blocked={approvalBlocked}
              agentStatus={agent}
              agentNoteId={agentNoticed ? agentNoteId : undefined}
            />
          )}
          {cp.recovery.decisions.length > 0 && <Decisions checkpoint={cp} />}
          <section className="activity-box" aria-labelledby="activity-title">
            <h2 id="activity-title" className="activity-title">
              Live activity
            </h2>
            <ActivityFeed taskId={taskId} />
          </section>
          <Tabs tabs={tabs} active={tab} onChange={setTab} label="Task sections">
            {tab === 'plan' && (
              <PlanTab
                checkpoint={cp}
                readOnly={detail.read_only || viewingOld || directoryReadOnly !== null || hostBlocked !== null || running}
                interrupted={stepsInterrupted}
              />
            )}
            {tab === 'artifacts' && <ArtifactsTab checkpoint={cp} blocked={hostBlocked} />}
            {tab === 'effects' && <EffectsTab checkpoint={cp} />}
            {tab === 'errors' && <ErrorsTab checkpoint={cp} />}
            {tab === 'run' && <RunTab checkpoint={cp} />}
            {tab === 'messages' && <MessagesTab />}
            {tab === 'history' && <HistoryTab onFork={writable && hostBlocked === null ? setForking : null} />}
            {tab === 'events' && <EventsTab taskId={taskId} />}
          </Tabs>
        </>
      )}
      <ForkDialog taskId={taskId} version={forking} onClose={() => setForking(null)} />
      <RewindDialog />
    </article>
  );
}

/** Which version the view shows: every version of the task, newest first, the latest marked. */
function VersionPicker({ detail }: { detail: TaskDetail }) {
  const history = useAppStore((s) => s.history);
  const viewVersion = useAppStore((s) => s.viewVersion);
  const latest = detail.latest_version;
  // The history may lag a version behind a live task; the versions the detail names are always offered.
  const versions = new Set<number>(history.map((v) => v.version));
  if (detail.version !== null) versions.add(detail.version);
  if (latest !== null) versions.add(latest);
  const byVersion = new Map(history.map((v) => [v.version, v]));
  const ordered = [...versions].sort((a, b) => b - a);
  if (ordered.length <= 1) return <span title="the only version">v{detail.version}</span>;
  return (
    <label className="version-select">
      <span className="visually-hidden">Version shown</span>
      <select aria-label="Version shown" value={detail.version ?? ''} onChange={(e) => viewVersion(Number(e.target.value))}>
        {ordered.map((v) => {
          const entry = byVersion.get(v);
          return (
            <option key={v} value={v}>
              v{v}
              {v === latest ? ' (latest)' : ''}
              {entry ? ` · ${versionLabel(entry.source)} · ${formatTime(entry.updated_at)}` : ''}
            </option>
          );
        })}
      </select>
    </label>
  );
}

/** Longest a version's note runs in the picker before it is cut: the select is as wide as its widest option. */
const PICKER_NOTE_CHARS = 40;

/** What wrote a version, for the picker: the runtime's note alone (the save boundary), else the kind and its note. */
function versionLabel(source: VersionSource): string {
  const said = source.note ? (source.kind === 'runtime' ? source.note : `${source.kind}: ${source.note}`) : source.kind;
  return said.length > PICKER_NOTE_CHARS ? `${said.slice(0, PICKER_NOTE_CHARS - 1)}…` : said;
}

/** Past approval decisions, newest first: who approved or rejected which resume, and why. */
function Decisions({ checkpoint }: { checkpoint: NonNullable<TaskDetail['checkpoint']> }) {
  const decisions = [...checkpoint.recovery.decisions].reverse();
  return (
    <section className="decisions" aria-label="Approval decisions">
      <ul className="plain">
        {decisions.map((d) => (
          <li key={`${d.approval_id}-${d.at}`}>
            <span className={`badge ${d.decision === 'approved' ? 'tone-ok' : 'tone-bad'}`}>
              <span className="badge-icon" aria-hidden="true">
                {d.decision === 'approved' ? '✓' : '✕'}
              </span>
              {d.decision === 'approved' ? 'Approved' : 'Rejected'}
            </span>{' '}
            by {d.by} <span className="muted small">{formatTime(d.at)}</span>
            {d.reason && <span className="decision-reason">: “{d.reason}”</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Problems({ detail }: { detail: TaskDetail }) {
  const errors = detail.problems.some((p) => p.severity === 'error');
  return (
    <section
      className={`problems ${errors ? 'problems-error' : 'problems-warn'}`}
      role={errors ? 'alert' : 'note'}
      aria-label="Problems with this task's files"
    >
      <h2 className="section-title">{detail.checkpoint ? 'Problems found' : 'This task cannot be read'}</h2>
      <ul className="plain">
        {detail.problems.map((p, i) => (
          <li key={`${p.file}-${p.reason}-${i}`}>
            <span className={`badge ${p.severity === 'error' ? 'tone-bad' : 'tone-warn'}`}>
              <span className="badge-icon" aria-hidden="true">
                ⚠
              </span>
              {p.reason}
            </span>{' '}
            <span className="mono">{p.file}</span>: {p.message}
          </li>
        ))}
      </ul>
      {!detail.checkpoint && (
        <p className="muted small">Nothing was changed on disk. Fix or remove the file; the list updates by itself.</p>
      )}
    </section>
  );
}
