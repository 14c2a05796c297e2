/**
 * Reading a task's event log again and again as it grows (a host following
 * a run, `waystation tail --follow`, the runner relaying events): each read
 * goes through only what was appended since the one before, and the newest
 * events are kept to answer from. A request for events older than those kept
 * streams the log once (bounded by MAX_EVENT_LOG_BYTES).
 */
import { MAX_EVENT_LOG_BYTES, readEventLog, scanEventLog, type LogMark } from './event-log.js';
import type { StoreFs } from './store-fs.js';
import type { TaskEvent } from './store-types.js';

/** Events kept per log: above the most a caller asks for at once (EVENTS_PAGE). */
export const KEPT_EVENTS = 4096;
/** Logs followed at once; the least recently read is let go (a later read of it starts over). */
const FOLLOWED_LOGS = 64;

interface FollowedLog {
  /** Where the last read ended: the byte after its last complete line, in that file. */
  mark: LogMark;
  /** The newest events read, oldest first, at most KEPT_EVENTS. */
  recent: TaskEvent[];
  /** True while `recent` holds every event of the log. */
  complete: boolean;
}

/** Append to a window of the newest `keep`, trimming in batches. */
function pushKept(list: TaskEvent[], e: TaskEvent, keep: number): boolean {
  list.push(e);
  if (list.length <= keep * 2) return false;
  list.splice(0, list.length - keep);
  return true;
}

export class EventCursor {
  private readonly logs = new Map<string, FollowedLog>();

  constructor(
    private readonly fs: StoreFs,
    private readonly opts: { keep?: number; maxBytes?: number } = {},
  ) {}

  /**
   * The events after id `afterId`, oldest first; with `last`, only the newest
   * `last` of them.
   */
  async read(taskDir: string, afterId: number, last?: number): Promise<TaskEvent[]> {
    const keep = Math.max(this.opts.keep ?? KEPT_EVENTS, last ?? 0);
    const maxBytes = this.opts.maxBytes ?? MAX_EVENT_LOG_BYTES;
    const held = this.logs.get(taskDir);
    const fresh: TaskEvent[] = [];
    let trimmed = false;
    const scan = await scanEventLog(this.fs, taskDir, (e) => void (pushKept(fresh, e, keep) && (trimmed = true)), {
      after: held?.mark,
      maxBytes,
    });
    if (!scan) {
      this.logs.delete(taskDir);
      return [];
    }
    let log: FollowedLog;
    if (held && !scan.restarted) {
      const recent = held.recent.concat(fresh);
      const cut = Math.max(0, recent.length - keep);
      log = {
        mark: scan.mark,
        recent: recent.slice(cut),
        complete: held.complete && !trimmed && cut === 0 && scan.skippedBytes === 0,
      };
    } else {
      const cut = Math.max(0, fresh.length - keep);
      log = { mark: scan.mark, recent: fresh.slice(cut), complete: !trimmed && cut === 0 && scan.skippedBytes === 0 };
    }
    this.logs.delete(taskDir);
    this.logs.set(taskDir, log);
    if (this.logs.size > FOLLOWED_LOGS) this.logs.delete(this.logs.keys().next().value!);
    const first = log.recent[0];
    if (log.complete || (first && afterId >= first.id - 1)) {
      const after = log.recent.filter((e) => e.id > afterId);
      return last !== undefined ? after.slice(Math.max(0, after.length - last)) : after;
    }
    // Older than the window: one pass over the log, keeping no more than asked for.
    if (last === undefined) return (await readEventLog(this.fs, taskDir, { afterId, maxBytes })).events;
    const out: TaskEvent[] = [];
    await scanEventLog(this.fs, taskDir, (e) => void (e.id > afterId && pushKept(out, e, last)), { maxBytes });
    return out.slice(Math.max(0, out.length - last));
  }
}
