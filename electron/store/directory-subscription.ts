/**
 * A subscription to a checkpoint directory's changes: chokidar watches each
 * task's event log (`<task>/events.jsonl`, appended by every save), and each
 * change delivers the lines appended since the last delivery.
 *
 * What was delivered is kept as a byte offset per log, so a burst that
 * chokidar coalesces into one event still delivers every event once, in
 * order. A log that shrank was replaced (a task removed and written anew) and
 * is read again from its start.
 */
import path from 'node:path';
import { watch } from 'chokidar';
import { EVENTS_FILE, scanEventLog } from './event-log.js';
import type { StoreFs } from './store-fs.js';
import type { StoreChange, StoreSubscription, TaskEvent } from './store-types.js';

/** Folders of a task that never hold its event log; chokidar need not read them. */
const UNWATCHED = new Set(['versions', 'blobs', 'lease']);

/** Watch `root` and call `onChange` with each task's newly appended events. */
export async function subscribeDirectory(
  fs: StoreFs,
  root: string,
  onChange: (change: StoreChange) => void,
  onError?: (err: Error) => void,
): Promise<StoreSubscription> {
  const offsets = new Map<string, { end: number; ino?: number }>();
  // One read at a time per log, so two change events never deliver the same lines.
  const reading = new Map<string, Promise<void>>();

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
      scan = await scanEventLog(fs, path.dirname(file), (e) => void events.push(e), { from: held?.end ?? 0, ino: held?.ino });
    } catch {
      return; // removed meanwhile: nothing to deliver
    }
    if (!scan) return;
    offsets.set(file, { end: scan.end, ino: scan.ino });
    if (events.length > 0) onChange({ task_id: taskId, events });
  };

  const changed = (file: string, size?: number, initial = false) => {
    const taskId = taskOf(file);
    if (taskId === null) return;
    if (initial) {
      // What was in a log before the subscription began is not news.
      offsets.set(file, { end: size ?? 0 });
      return;
    }
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
  watcher.on('add', (file, stats) => changed(file, stats?.size, !ready));
  watcher.on('change', (file) => changed(file));
  watcher.on('error', (err) => onError?.(err instanceof Error ? err : new Error(String(err))));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  ready = true;
  return {
    async close() {
      await watcher.close();
      await Promise.all(reading.values());
    },
  };
}
