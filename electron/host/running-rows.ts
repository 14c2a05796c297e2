/**
 * The rows of an open directory shown running, asked again while it stays
 * open. Only a live lease shows a task running (task-state.ts), and a runner
 * that dies without letting it go (killed, its machine gone) changes no file:
 * the watcher hears nothing, and every inspector open on the directory would
 * show the task running until something else about it changed. Its lease,
 * read again, says it stopped at once for a process of this machine that is
 * gone, and once its heartbeat is stale for another machine's.
 *
 * The kept list announces a row that no longer shows running
 * (KeptTaskList's onRunEnded), whoever asked it again: this pass, or a listing
 * that came first.
 */
import type { SerialQueue } from './serial-queue.js';

/** How often the running rows are asked again, at most: a dead runner is shown stopped within about this. */
export const RUNNING_RECHECK_MS = 2_000;

/**
 * A pass is waited for this many times its own length before the next: rows running by the thousand (each a lease
 * read) then take a bounded share of the host, at the cost of noticing later.
 */
const PASS_SHARE = 4;

export interface RunningRowsOptions {
  /** Summarize the rows shown running again (KeptTaskList.recheckRunning). */
  recheck: () => Promise<void>;
  /** The directory's queue: a pass runs between the watcher's batches, never across one. */
  queue: SerialQueue;
  isOpen: () => boolean;
  everyMs?: number;
}

/** Ask the running rows again every `everyMs` (or more, see PASS_SHARE) until `stop`. */
export function watchRunningRows(opts: RunningRowsOptions): { stop: () => void } {
  const every = opts.everyMs ?? RUNNING_RECHECK_MS;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(pass, ms);
    // A host with nothing else to do exits: this is no reason to stay.
    timer.unref();
  };
  const pass = async () => {
    timer = null;
    const started = performance.now();
    try {
      await opts.queue.run(() => (opts.isOpen() && !stopped ? opts.recheck() : Promise.resolve()));
    } catch {
      // A read that failed (a database away for a moment) is tried at the next pass; the watcher reports what it can.
    }
    schedule(Math.max(every, PASS_SHARE * (performance.now() - started)));
  };
  schedule(every);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
