/** Display formatting shared by the views: compact, stable, locale-neutral where it matters. */

/** `1.2 s`, `340 ms`, `2 min 5 s`; an em dash when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const min = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${min} min${s ? ` ${s} s` : ''}`;
}

/** `12.3k` style counts for tokens. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * Dates and times in one form in every view, year first, in local time
 * (`2026-12-06 03:12:45`), built by hand: the first Intl.DateTimeFormat a page
 * makes loads its locale's data, 40 to 60 ms in Chromium here, and the task
 * list's first rows (whose tooltips give the exact time) waited for it.
 */
const two = (n: number) => String(n).padStart(2, '0');
const localDate = (d: Date) => `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;

/** `3 min ago`; the exact time goes in a title attribute. */
export function formatRelative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return localDate(new Date(t));
}

/** Local date and time, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = new Date(t);
  return `${localDate(d)} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** Byte sizes: `512 B`, `4.1 KB`. */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Milliseconds between two timestamps, or null when either is missing. */
export function between(start: string | null | undefined, end: string | null | undefined): number | null {
  if (!start || !end) return null;
  const d = Date.parse(end) - Date.parse(start);
  return Number.isFinite(d) && d >= 0 ? d : null;
}

/**
 * The name a task is listed under.
 *
 * Agents often name every task after themselves; then the id is what tells
 * tasks apart, so it goes first.
 */
export function taskLabel(task: { task_id: string; task_name: string | null; agent_name: string | null }): string {
  if (!task.task_name || task.task_name === task.agent_name) return task.task_id;
  return task.task_name;
}

/**
 * A checkpoint's `current_step` (an index into the plan, from 0) as the plan
 * numbers its steps, from 1: `step 3 of 4`; past the last step, `end of the
 * plan`. `total` unknown: the number alone.
 */
export function stepNumber(index: number, total?: number | null): string {
  if (total === undefined || total === null || total <= 0) return `step ${index + 1}`;
  return index >= total ? 'end of the plan' : `step ${index + 1} of ${total}`;
}
