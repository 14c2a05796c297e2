/**
 * Status badges: an icon and a word, never colour alone, so the status reads
 * the same in both themes, in grayscale and to a screen reader.
 */
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';

type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'muted' | 'run';

const DISPLAY: Record<DisplayStatus, { label: string; icon: string; tone: Tone }> = {
  running: { label: 'Running', icon: '▶', tone: 'run' },
  interrupted: { label: 'Interrupted', icon: '‖', tone: 'warn' },
  failed: { label: 'Failed', icon: '✕', tone: 'bad' },
  waiting_approval: { label: 'Waiting for approval', icon: '⚑', tone: 'warn' },
  waiting_human: { label: 'Waiting for a human', icon: '☛', tone: 'warn' },
  halted: { label: 'Halted', icon: '■', tone: 'muted' },
  done: { label: 'Done', icon: '✓', tone: 'ok' },
  drifted: { label: 'Drifted', icon: '≠', tone: 'warn' },
  unreadable: { label: 'Unreadable', icon: '⚠', tone: 'bad' },
};

const GENERIC: Record<string, { label: string; icon: string; tone: Tone }> = {
  pending: { label: 'Pending', icon: '○', tone: 'muted' },
  running: { label: 'Running', icon: '▶', tone: 'run' },
  done: { label: 'Done', icon: '✓', tone: 'ok' },
  failed: { label: 'Failed', icon: '✕', tone: 'bad' },
  skipped: { label: 'Skipped', icon: '↷', tone: 'muted' },
  not_started: { label: 'Not started', icon: '○', tone: 'muted' },
  intent: { label: 'Intent recorded', icon: '◔', tone: 'info' },
  uncertain: { label: 'Uncertain', icon: '?', tone: 'warn' },
  ok: { label: 'OK', icon: '✓', tone: 'ok' },
  missing: { label: 'Missing', icon: '✕', tone: 'bad' },
  modified: { label: 'Modified', icon: '≠', tone: 'warn' },
  'outside-root': { label: 'Outside root', icon: '⛔', tone: 'bad' },
  unreadable: { label: 'Unreadable', icon: '⚠', tone: 'bad' },
  unverified: { label: 'Not verified', icon: '…', tone: 'muted' },
};

/** The badge for a task's display status. */
export function TaskStatusBadge({ status }: { status: DisplayStatus }) {
  const d = DISPLAY[status];
  return (
    <span className={`badge tone-${d.tone}`} data-status={status}>
      <span className="badge-icon" aria-hidden="true">
        {d.icon}
      </span>
      {d.label}
    </span>
  );
}

/** The badge for a step, side-effect or artifact-check status; unknown values are shown as they are. */
export function StatusBadge({ status }: { status: string }) {
  const d = GENERIC[status] ?? { label: status, icon: '•', tone: 'muted' as Tone };
  return (
    <span className={`badge tone-${d.tone}`} data-status={status}>
      <span className="badge-icon" aria-hidden="true">
        {d.icon}
      </span>
      {d.label}
    </span>
  );
}

/** The human label of a display status, for filters and announcements. */
export function displayStatusLabel(status: DisplayStatus): string {
  return DISPLAY[status].label;
}
