/**
 * New checkpoints of an open LangGraph source, reported per thread as they
 * appear.
 *
 * SQLite: the folder of the file is watched (fs.watch) for changes to the
 * file and its `-wal`, which every commit touches, with a poll every few
 * seconds as a safety net for file systems that drop events. PostgreSQL
 * offers nothing to LISTEN on (PostgresSaver creates no trigger, and adding
 * one would be a write), so the source is polled: one query of a count and a
 * maximum per thread each second. Either way a change is told from each
 * thread's mark (its checkpoints, newest id and writes), so only the threads
 * that changed are reported.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LangGraphSource } from './langgraph-source.js';

/** What changed about one thread (its task location is its task id). */
export interface ThreadChange {
  location: string;
  kind: 'changed' | 'removed';
  paths: string[];
}

export interface LangGraphWatcher {
  readonly root: string;
  readonly ready: Promise<void>;
  /** Nothing to do: every thread is watched through the one file or database. */
  watchAgain(locations: readonly string[]): void;
  close(): Promise<void>;
}

export interface LangGraphWatchOptions {
  /** How often the source is asked for its threads' marks when no file event came (ms). */
  pollMs?: number;
  /** Events of the file coalesce for this long (ms). */
  quietMs?: number;
  onError?: (err: Error) => void;
}

/** Watch `source` (a SQLite file at `file`, or a database when `file` is null); see the module comment. */
export function watchLangGraph(
  source: LangGraphSource,
  file: string | null,
  onChanges: (changes: ThreadChange[]) => void,
  opts: LangGraphWatchOptions = {},
): LangGraphWatcher {
  let marks: Map<string, string> | null = null;
  let closed = false;
  let checking: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;

  const check = () => {
    checking = checking.then(async () => {
      if (closed) return;
      try {
        const now = await source.threadMarks();
        const before = marks;
        marks = now;
        if (!before) return;
        const changes: ThreadChange[] = [];
        for (const [id, mark] of now) if (before.get(id) !== mark) changes.push({ location: id, kind: 'changed', paths: [] });
        for (const id of before.keys()) if (!now.has(id)) changes.push({ location: id, kind: 'removed', paths: [] });
        if (changes.length > 0 && !closed) onChanges(changes);
      } catch (err) {
        opts.onError?.(err instanceof Error ? err : new Error(String(err)));
      }
    });
    return checking;
  };
  const soon = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = null;
      void check();
    }, opts.quietMs ?? 100);
  };

  let fsWatcher: fs.FSWatcher | null = null;
  if (file) {
    const names = new Set([path.basename(file), `${path.basename(file)}-wal`]);
    try {
      fsWatcher = fs.watch(path.dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || names.has(String(name))) soon();
      });
      fsWatcher.on('error', (err) => opts.onError?.(err));
    } catch (err) {
      opts.onError?.(err instanceof Error ? err : new Error(String(err)));
    }
  }
  const poll = setInterval(() => void check(), opts.pollMs ?? (file ? 3000 : 1000));
  poll.unref();

  return {
    root: source.root,
    ready: check(),
    watchAgain() {},
    async close() {
      closed = true;
      clearInterval(poll);
      if (timer) clearTimeout(timer);
      fsWatcher?.close();
      await checking;
    },
  };
}
