/**
 * A subscription to a checkpoint directory's changes: chokidar watches each
 * task's event log (`<task>/events.jsonl`, appended by every save), and each
 * change delivers the lines appended since the last delivery.
 *
 * What was delivered is kept as a mark per log (event-log.ts, LogMark), so a
 * burst that chokidar coalesces into one event still delivers every event
 * once, in order. A log that shrank, or is another file, or no longer holds
 * the bytes the mark kept, was replaced (a task removed and written anew) and
 * is read again from its start.
 */
import type { Stats } from 'node:fs';
import path from 'node:path';
import { watch } from 'chokidar';
import { BLOBS_DIR } from './blob-store.js';
import { EVENTS_FILE, scanEventLog, type LogMark } from './event-log.js';
import { LEASE_DIR } from './file-lease.js';
import type { StoreFs } from './store-fs.js';
import type { StoreChange, StoreSubscription, TaskEvent } from './store-types.js';
import { VERSIONS_DIR } from './version-file.js';

/** How long chokidar keeps quiet about a file after passing on a change of it (its `_throttle` of `change`). */
const CHOKIDAR_CHANGE_WINDOW_MS = 50;

/** Folders of a task that never hold its event log; chokidar need not read them. */
const UNWATCHED = new Set([VERSIONS_DIR, BLOBS_DIR, LEASE_DIR]);

/** Watch `root` and call `onChange` with each task's newly appended events. */
export async function subscribeDirectory(
  fs: StoreFs,
  root: string,
  onChange: (change: StoreChange) => void,
  onError?: (err: Error) => void,
): Promise<StoreSubscription> {
  const offsets = new Map<string, LogMark>();
  // One read at a time per log, so two change events never deliver the same lines.
  const reading = new Map<string, Promise<void>>();
  // The look after chokidar's window, per log (see `changed`).
  const trailing = new Map<string, NodeJS.Timeout>();

  const taskOf = (file: string): string | null => {
    const rel = path.relative(root, file).split(path.sep);
    return rel.length === 2 && rel[1] === EVENTS_FILE ? rel[0] : null;
  };

  const deliver = async (file: string, taskId: string): Promise<void> => {
    // Only what was appended since the last delivery is read: a log of a million lines costs nothing more per change.
    const held = offsets.get(file);
    const events: TaskEvent[] = [];
    let scan;
    try {
      scan = await scanEventLog(fs, path.dirname(file), (e) => void events.push(e), { after: held });
    } catch {
      return; // removed meanwhile: nothing to deliver
    }
    if (!scan) return;
    offsets.set(file, scan.mark);
    if (events.length > 0) onChange({ task_id: taskId, events });
  };

  const changed = (file: string, stats?: Stats, initial = false) => {
    const taskId = taskOf(file);
    if (taskId === null) return;
    if (initial) {
      // What was in a log before the subscription began is not news (its last bytes are not read for 10,000 logs).
      if (stats) offsets.set(file, { end: stats.size, ino: stats.ino, last: null });
      return;
    }
    queueDelivery(file, taskId);
    // chokidar passes on the first change of a file in 50 ms and drops the rest (its throttle calls nothing after
    // the window): a look once the window is over delivers what was appended after the change it passed on.
    clearTimeout(trailing.get(file));
    trailing.set(
      file,
      setTimeout(() => {
        trailing.delete(file);
        queueDelivery(file, taskId);
      }, CHOKIDAR_CHANGE_WINDOW_MS + 10),
    );
  };

  const queueDelivery = (file: string, taskId: string) => {
    const prev = reading.get(file) ?? Promise.resolve();
    const next = prev.then(() => deliver(file, taskId));
    reading.set(file, next);
    void next.finally(() => {
      if (reading.get(file) === next) reading.delete(file);
    });
  };

  let ready = false;
  const watcher = watch(root, {
    depth: 1,
    ignoreInitial: false,
    alwaysStat: true,
    ignored: (p: string) => {
      const rel = path.relative(root, p).split(path.sep);
      return (rel.length === 2 && UNWATCHED.has(rel[1])) || rel.some((part) => part.startsWith('.'));
    },
  });
  watcher.on('add', (file, stats) => changed(file, stats, !ready));
  watcher.on('change', (file) => changed(file));
  watcher.on('error', (err) => onError?.(err instanceof Error ? err : new Error(String(err))));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  ready = true;
  return {
    async close() {
      await watcher.close();
      for (const timer of trailing.values()) clearTimeout(timer);
      trailing.clear();
      await Promise.all(reading.values());
    },
  };
}
