/**
 * Telling a person when a task starts waiting for them: a desktop
 * notification through the main process in the Electron app, the browser's
 * Notification in browser mode once the person allowed it, and the count of
 * waiting tasks in the window title either way.
 *
 * Only a change seen live is announced: tasks already waiting when the list
 * first loads are counted in the title, not notified.
 */
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import type { DisplayStatus } from '../../../shared/checkpoint/task-state.js';
import type { AppStore } from './app-store.js';

const WAITING: ReadonlySet<DisplayStatus> = new Set<DisplayStatus>(['waiting_approval', 'waiting_human']);

/** The tasks of `next` that wait for a person now and did not in `prev` (tasks new to the list included). */
export function newlyWaiting(prev: readonly TaskSummary[], next: readonly TaskSummary[]): TaskSummary[] {
  const before = new Map(prev.map((t) => [t.task_id, t.display_status]));
  return next.filter((t) => WAITING.has(t.display_status) && !WAITING.has(before.get(t.task_id) ?? 'done'));
}

/** How many tasks wait for a person. */
export function waitingCount(tasks: readonly TaskSummary[]): number {
  return tasks.filter((t) => WAITING.has(t.display_status)).length;
}

/** The window title with the count of waiting tasks in front, as mail clients badge unread mail. */
export function titleWithCount(count: number, base = 'Waystation'): string {
  return count > 0 ? `(${count}) ${base}` : base;
}

/** What a notification says of a task now waiting. */
export function alertText(t: TaskSummary): { title: string; body: string } {
  const name = t.task_name && t.task_name !== t.agent_name ? `${t.task_name} (${t.task_id})` : t.task_id;
  return t.display_status === 'waiting_approval'
    ? { title: `${name} waits for your approval`, body: 'A resume plan is ready: open the task to approve or reject it.' }
    : { title: `${name} waits for a human`, body: t.phase ? `Stopped at: ${t.phase}` : 'Open the task to see what it needs.' };
}

/** The browser's Notification, where the page has one. */
function browserNotification(): typeof Notification | null {
  return typeof globalThis.Notification === 'function' ? globalThis.Notification : null;
}

/**
 * Watch the store's task list and alert on tasks that start waiting.
 *
 * The desktop host shows the notification itself (`showNotification` answers
 * `shown: true`); otherwise the browser's is used when permission was
 * granted. Returns the function that stops watching.
 */
export function watchAttention(store: AppStore): () => void {
  return store.subscribe((state, prev) => {
    if (state.tasks === prev.tasks) return;
    // The first listing of a directory is what was there already, not news.
    if (prev.tasksState !== 'ready' || state.directory?.root !== prev.directory?.root) return;
    for (const t of newlyWaiting(prev.tasks, state.tasks)) {
      const text = alertText(t);
      void state.api.showNotification({ ...text, taskId: t.task_id }).then(
        ({ shown }) => {
          if (shown) return;
          const N = browserNotification();
          if (!N || N.permission !== 'granted') return;
          const n = new N(text.title, { body: text.body, tag: `waystation-${t.task_id}` });
          n.onclick = () => {
            globalThis.focus?.();
            store.getState().selectTask(t.task_id);
          };
        },
        () => undefined,
      );
    }
  });
}
