/**
 * The directory watcher on a thread of its own.
 *
 * Setting up the watches of a large directory (a readdir of the root, a stat
 * and a watch per task folder: a few hundred milliseconds over 10,000 task
 * folders) and mapping a busy directory's events to tasks are work the host's
 * thread need not do while a user waits on its requests. On a worker thread
 * they run beside them; only the coalesced batches, a few per second at most,
 * cross over.
 *
 * The worker runs `watchDirectory` unchanged (directory-watcher-worker.ts);
 * this side gives back the same `DirectoryWatcher`.
 */
import type { DirectoryChange, DirectoryWatcher, DirectoryWatcherOptions } from './directory-watcher.js';
import { messageOf } from '../../shared/api/error-codes.js';
import { startThread } from '../store/start-thread.js';

/** What the watcher thread is started with. */
export interface WatcherThreadData {
  root: string;
  quietMs?: number;
  maxDelayMs?: number;
}

/** Messages from the watcher thread. */
export type WatcherThreadMessage =
  { type: 'ready' } | { type: 'changes'; changes: DirectoryChange[] } | { type: 'error'; message: string } | { type: 'closed' };

/** Messages to the watcher thread. */
export type WatcherThreadCommand = { type: 'watch-again'; locations: string[] } | { type: 'close' };

/**
 * Watch `root` on a worker thread and report changed task locations in
 * coalesced batches, exactly as `watchDirectory` does.
 *
 * If the thread dies, `onError` hears why and no further changes are reported;
 * `ready` and `close` still settle.
 */
export function watchDirectoryInThread(
  root: string,
  onChanges: (changes: DirectoryChange[]) => void,
  options: DirectoryWatcherOptions = {},
): DirectoryWatcher {
  const data: WatcherThreadData = { root, quietMs: options.quietMs, maxDelayMs: options.maxDelayMs };
  const worker = startThread(import.meta.url, 'directory-watcher-worker', data);
  const reportError = (err: Error) => {
    try {
      options.onError?.(err);
    } catch {
      // A failing error handler must not stop the watcher.
    }
  };
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  // Settles when the thread has delivered its last batch (its `closed`), or died.
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  let closing: Promise<void> | null = null;
  let alive = true;

  worker.on('message', (message: WatcherThreadMessage) => {
    if (message.type === 'ready') markReady();
    else if (message.type === 'changes') {
      try {
        onChanges(message.changes);
      } catch {
        // A failing subscriber must not stop the watcher.
      }
    } else if (message.type === 'error') reportError(new Error(message.message));
    else if (message.type === 'closed') markDone();
  });
  worker.on('error', (err) =>
    reportError(
      new Error(
        `the directory watcher of ${root} stopped: ${messageOf(err)}; changes made on disk are no longer shown until the directory is opened again`,
      ),
    ),
  );
  worker.on('exit', () => {
    alive = false;
    markReady();
    markDone();
  });
  // A watcher alone does not keep a process running; whoever opened it closes it.
  worker.unref();

  const send = (command: WatcherThreadCommand) => {
    if (alive) worker.postMessage(command);
  };

  return {
    root,
    ready,
    watchAgain(locations) {
      if (closing || locations.length === 0) return;
      send({ type: 'watch-again', locations: [...locations] });
    },
    close() {
      if (!closing) {
        // The thread flushes what is pending, and its last batch arrives before it exits;
        // until then it keeps the process alive, or a shutdown awaiting this would end mid-way.
        if (alive) worker.ref();
        send({ type: 'close' });
        closing = done;
      }
      return closing;
    },
  };
}
