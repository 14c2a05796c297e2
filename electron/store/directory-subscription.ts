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
import { EVENTS_FILE, parseEvents } from './event-log.js';
import type { StoreFs } from './store-fs.js';
import type { StoreChange, StoreSubscription } from './store-types.js';

/** Folders of a task that never hold its event log; chokidar need not read them. */
const UNWATCHED = new Set(['versions', 'blobs', 'lease']);

/** Watch `root` and call `onChange` with each task's newly appended events. */
export async function subscribeDirectory(
  fs: StoreFs,
  root: string,
  onChange: (change: StoreChange) => void,
  onError?: (err: Error) => void,
): Promise<StoreSubscription> {
  const offsets = new Map<string, number>();
  // One read at a time per log, so two change events never deliver the same lines.
  const reading = new Map<string, Promise<void>>();

  const taskOf = (file: string): string | null => {
    const rel = path.relative(root, file).split(path.sep);
    return rel.length === 2 && rel[1] === EVENTS_FILE ? rel[0] : null;
  };

  const deliver = async (file: string, taskId: string): Promise<void> => {
    let bytes: Buffer;
    try {
      const handle = await fs.open(file, 'r');
      try {
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch {
      return; // removed meanwhile: nothing to deliver
    }
    let from = offsets.get(file) ?? 0;
    if (bytes.length < from) from = 0;
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end <= from) return;
    offsets.set(file, end);
    const { events } = parseEvents(bytes.subarray(from, end).toString('utf8'));
    if (events.length > 0) onChange({ task_id: taskId, events });
  };

  const changed = (file: string, size?: number, initial = false) => {
    const taskId = taskOf(file);
    if (taskId === null) return;
    if (initial) {
      // What was in a log before the subscription began is not news.
      offsets.set(file, size ?? 0);
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
