/**
 * Status badges: an icon and a word, never colour alone, so the status reads
 * the same in both themes, in grayscale and to a screen reader.
 */
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';

type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'muted' | 'run';
interface Look {
  label: string;
  icon: string;
  tone: Tone;
}

const DISPLAY: Record<DisplayStatus, Look> = {
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

// A step, an effect or a check in the same state as a task looks like the task's badge.
const GENERIC: Record<string, Look> = {
  pending: { label: 'Pending', icon: '○', tone: 'muted' },
  running: DISPLAY.running,
  // A step recorded running in a task nothing drives now: the run was cut off there.
  interrupted: DISPLAY.interrupted,
  done: DISPLAY.done,
  failed: DISPLAY.failed,
  skipped: { label: 'Skipped', icon: '↷', tone: 'muted' },
  not_started: { label: 'Not started', icon: '○', tone: 'muted' },
  intent: { label: 'Intent recorded', icon: '◔', tone: 'info' },
  uncertain: { label: 'Uncertain', icon: '?', tone: 'warn' },
  ok: { label: 'OK', icon: '✓', tone: 'ok' },
  missing: { label: 'Missing', icon: '✕', tone: 'bad' },
  modified: { label: 'Modified', icon: '≠', tone: 'warn' },
  'outside-root': { label: 'Outside root', icon: '⛔', tone: 'bad' },
  unreadable: DISPLAY.unreadable,
  unverified: { label: 'Not verified', icon: '…', tone: 'muted' },
};

/** The badge for a task's display status. */
export function TaskStatusBadge({ status }: { status: DisplayStatus }) {
  return <Badge status={status} look={DISPLAY[status]} />;
}

/** The badge for a step, side-effect or artifact-check status; unknown values are shown as they are. */
export function StatusBadge({ status }: { status: string }) {
  return <Badge status={status} look={GENERIC[status] ?? { label: status, icon: '•', tone: 'muted' }} />;
}

function Badge({ status, look }: { status: string; look: Look }) {
  return (
    <span className={`badge tone-${look.tone}`} data-status={status}>
      <span className="badge-icon" aria-hidden="true">
        {look.icon}
      </span>
      {look.label}
    </span>
  );
}

/** The human label of a display status, for filters and announcements. */
export function displayStatusLabel(status: DisplayStatus): string {
  return DISPLAY[status].label;
}
