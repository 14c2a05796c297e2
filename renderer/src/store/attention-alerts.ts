/**
 * Telling a person when a task starts needing them: when it starts waiting
 * for them, and when a run they may have left alone ends without finishing
 * (it failed, or it stopped with nothing driving it: a runner killed, a
 * machine gone). A desktop notification through the main process in the
 * Electron app, the browser's Notification in browser mode once the person
 * allowed it, and the count of waiting tasks in the window title either way.
 *
 * Only a change seen live is announced: tasks already waiting or stopped when
 * the list first loads are counted in the title or listed, not notified; a
 * run this window was asked to stop is not announced as stopped.
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

/** A run that ended without finishing: shown running before, failed or interrupted now. */
const ENDED_UNFINISHED: ReadonlySet<DisplayStatus> = new Set<DisplayStatus>(['failed', 'interrupted']);

/**
 * The tasks of `next` shown running in `prev` that now show failed or interrupted. A LangGraph thread shown
 * interrupted is not among them: its running was a guess from its newest checkpoint's age, and a node that works for
 * long shows interrupted for a while with its run well alive (its failure is recorded, and is news).
 */
export function newlyStopped(prev: readonly TaskSummary[], next: readonly TaskSummary[]): TaskSummary[] {
  const before = new Map(prev.map((t) => [t.task_id, t.display_status]));
  return next.filter(
    (t) =>
      ENDED_UNFINISHED.has(t.display_status) &&
      before.get(t.task_id) === 'running' &&
      !(t.format === 'langgraph' && t.display_status === 'interrupted'),
  );
}

/** How many tasks wait for a person. */
export function waitingCount(tasks: readonly TaskSummary[]): number {
  return tasks.filter((t) => WAITING.has(t.display_status)).length;
}

/** The window title with the count of waiting tasks in front, as mail clients badge unread mail. */
export function titleWithCount(count: number, base = 'Waystation'): string {
  return count > 0 ? `(${count}) ${base}` : base;
}

/** What a notification says of a task now waiting, or now stopped before its end (newlyStopped). */
export function alertText(t: TaskSummary): { title: string; body: string } {
  const name = t.task_name && t.task_name !== t.agent_name ? `${t.task_name} (${t.task_id})` : t.task_id;
  switch (t.display_status) {
    case 'waiting_approval':
      return { title: `${name} waits for your approval`, body: 'A resume plan is ready: open the task to approve or reject it.' };
    case 'failed':
      return { title: `${name} failed`, body: t.phase ? `At: ${t.phase}` : 'Open the task to see its error.' };
    case 'interrupted':
      return {
        title: `${name} stopped before it finished`,
        body: 'Nothing drives it now (its run ended, or its process is gone): open the task to see where it stands and resume it.',
      };
    default:
      return { title: `${name} waits for a human`, body: t.phase ? `Stopped at: ${t.phase}` : 'Open the task to see what it needs.' };
  }
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
  // The runs this window asked to stop (task id -> the request's time), until they are seen to end: the store
  // forgets a request once the runner's exit is heard, which may come before the row that shows the task stopped,
  // and keeps one made of a run it did not start; a request seen to end is not taken again.
  const stopsAsked = new Map<string, string>();
  const stopsEnded = new Map<string, string>();
  return store.subscribe((state, prev) => {
    for (const [id, request] of Object.entries(state.stopRequests)) if (stopsEnded.get(id) !== request.at) stopsAsked.set(id, request.at);
    if (state.tasks === prev.tasks) return;
    // The first listing of a directory is what was there already, not news.
    if (prev.tasksState !== 'ready' || state.directory?.root !== prev.directory?.root) return;
    const stopped = newlyStopped(prev.tasks, state.tasks).filter((t) => !stopsAsked.has(t.task_id));
    for (const t of state.tasks) {
      const asked = stopsAsked.get(t.task_id);
      if (asked === undefined || t.display_status === 'running') continue;
      stopsEnded.set(t.task_id, asked);
      stopsAsked.delete(t.task_id);
    }
    for (const t of [...newlyWaiting(prev.tasks, state.tasks), ...stopped]) {
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
