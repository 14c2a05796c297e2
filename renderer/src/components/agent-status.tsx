/**
 * The task's agent as the task view shows it: a tag in the header, and a
 * notice when something about it stands between the task and a resume (the
 * agent cannot be found, its module did not load, or its code changed since
 * the task last ran).
 */
import type { TaskAgentStatus } from '../../../shared/api/contract.js';

/** The first characters of a sha256: enough to tell two hashes apart at a glance. */
export function shortSha(sha: string | undefined): string {
  return sha ? `${sha.slice(0, 12)}…` : '?';
}

/**
 * Why Resume and Approve are refused because of the agent, or null when they are not.
 *
 * A task that records no agent (an imported task) is handed on resume to a
 * built-in agent that recognises it; when none does, the host says so
 * beforehand (`problem`), and that is the reason.
 */
export function agentBlockReason(status: TaskAgentStatus | null | undefined): string | null {
  if (status?.origin === 'none') return status.problem ? `${capitalise(status.problem)}.` : null;
  if (!status || status.available) return null;
  if (status.origin === 'foreign')
    return `${capitalise(status.problem ?? `another program wrote this task under the agent ${status.name ?? ''}`)}.`;
  return `${capitalise(status.problem ?? `the agent ${status.name ?? ''} cannot be found`)}. Nothing runs and the task is untouched until the agent is back.`;
}

/** The changed-module warning shown before a resume; null when the module is as the task recorded it. */
export function moduleChangedText(status: TaskAgentStatus | null | undefined): string | null {
  if (!status?.available || !status.module_changed) return null;
  return (
    `The agent module ${status.module ?? status.name ?? ''} changed since this task last ran ` +
    `(sha256 ${shortSha(status.recorded_sha256)} → ${shortSha(status.current_sha256)}); resuming runs the new code.`
  );
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The header's agent tag: name, where it comes from, and a warning tone when it needs attention. */
export function AgentTag({ status, fallbackName }: { status: TaskAgentStatus | null; fallbackName: string | null | undefined }) {
  const name = status?.name ?? fallbackName;
  if (!name) return status?.origin === 'none' ? <span className="tag">agent: not recorded</span> : null;
  const trouble = status ? !status.available || status.module_changed || status.load_problem : false;
  const where =
    status?.origin === 'module'
      ? (status.module ?? 'module')
      : status?.origin === 'builtin'
        ? 'built-in'
        : status?.origin === 'command'
          ? 'command'
          : status?.origin === 'foreign'
            ? 'another program'
            : null;
  const state = !status
    ? ''
    : !status.available
      ? ' · unavailable'
      : status.load_problem
        ? ' · does not load'
        : status.module_changed
          ? ' · changed'
          : '';
  return (
    <span className={`tag${trouble ? ' warn' : ''}`} data-testid="agent-tag" title={status?.problem ?? status?.load_problem}>
      agent: {name}
      {where ? ` (${where})` : ''}
      {state}
    </span>
  );
}

/**
 * What stands between the task and a resume because of its agent, if
 * anything. `id` lets the Resume and Approve buttons name it as their
 * description, so the reason is read out with the button.
 */
export function AgentNotice({ status, id }: { status: TaskAgentStatus | null; id: string }) {
  const blocked = agentBlockReason(status);
  if (blocked && status?.origin === 'none') {
    // No agent to be unavailable: nothing Waystation has can run this task on. A note, not an alarm: it reads as it is.
    return (
      <section id={id} className="problems problems-warn agent-notice" role="note" aria-label="Cannot be resumed">
        <p>
          <strong>Nothing can resume this task here.</strong> {blocked}
        </p>
      </section>
    );
  }
  if (blocked) {
    return (
      <section id={id} className="problems problems-error agent-notice" role="alert" aria-label="Agent unavailable">
        <p>
          <strong>The agent cannot be started.</strong> {blocked}
        </p>
      </section>
    );
  }
  if (status?.load_problem) {
    return (
      <section id={id} className="problems problems-error agent-notice" role="alert" aria-label="Agent module does not load">
        <p>
          <strong>The agent module did not load at the last attempt.</strong> {status.load_problem}
        </p>
        <p className="muted small">Fix the module and resume again; the task stays as it is until then.</p>
      </section>
    );
  }
  const changed = moduleChangedText(status);
  if (changed) {
    return (
      <section id={id} className="problems problems-warn agent-notice" role="note" aria-label="Agent module changed">
        <p>{changed}</p>
      </section>
    );
  }
  return null;
}
