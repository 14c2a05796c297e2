/**
 * The task's append-only event log, `events.jsonl`: one JSON object a line,
 * ids increasing by one per task.
 */
import path from 'node:path';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import type { TaskEvent } from './store-types.js';
import { errorCode, syncReadsOf, type StoreFileHandle, type StoreFs } from './store-fs.js';

export const EVENTS_FILE = 'events.jsonl';

export function eventsPath(taskDir: string): string {
  return path.join(taskDir, EVENTS_FILE);
}

/**
 * Parse the log: complete lines only, unparseable lines skipped.
 *
 * `endsClean` is false when the last line has no newline: a torn append, which
 * is ignored and which the next writer leaves behind on a line of its own.
 */
export function parseEvents(text: string): { events: TaskEvent[]; endsClean: boolean } {
  const endsClean = text.length === 0 || text.endsWith('\n');
  const lines = text.split('\n');
  // The last piece is '' after a final newline, or the torn tail of an interrupted append.
  lines.pop();
  const events: TaskEvent[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const e = JSON.parse(line) as TaskEvent;
      if (e && typeof e === 'object' && typeof e.id === 'number' && typeof e.type === 'string') events.push(e);
    } catch {
      // A line torn by a crash and then followed by later appends.
    }
  }
  return { events, endsClean };
}

/**
 * The most of a log one read goes through: past it, only its newest part is
 * read (a reader never holds a whole log of gigabytes, nor spends seconds on
 * one), and the task says so (eventLogProblem).
 */
export const MAX_EVENT_LOG_BYTES = 64 * 1024 * 1024;
/** Bytes read per call: a log is streamed through a buffer of this size. */
const CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is no event a writer wrote (events are small); it is skipped unread. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Where a scan of a log ended, for a later scan to read only what was appended since (ScanOptions.after): the offset
 * just past its last complete line, the file's inode, and the log's last bytes before that offset (at most
 * MARK_BYTES; null when they were not read). A log removed and written anew may get the old file's inode number
 * back, and grow past the offset: the bytes there tell it from the log that was read.
 */
export interface LogMark {
  end: number;
  ino: number;
  last: Buffer | null;
}

/** Bytes of a log's end a mark keeps: the end of its last line, which names that event's id and time. */
const MARK_BYTES = 256;

/** Where a scan of the log ended, and what the file was. */
export interface EventScan {
  /** Where a later read of what was appended starts: just past the last complete line. */
  mark: LogMark;
  size: number;
  /** False when the log ends in a line with no newline: a torn append, or one being written. */
  endsClean: boolean;
  /** Bytes at the start of the range left unread because the range was over `maxBytes`. */
  skippedBytes: number;
  /** True when `after` was given but not used (the log is another file, shorter, or other bytes end there): read from its start. */
  restarted: boolean;
}

export interface ScanOptions {
  /** Where an earlier scan of the same log ended: only what was appended since is read, if the log is still that one. */
  after?: LogMark;
  /** Read at most this many bytes, the newest (default MAX_EVENT_LOG_BYTES). */
  maxBytes?: number;
  chunkBytes?: number;
}

/** The task's event log opened for reading; null when it has none yet. */
async function openEventLog(fs: StoreFs, taskDir: string) {
  try {
    return await fs.open(eventsPath(taskDir), 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Stream the log's complete lines from `from` to its end, one event at a time
 * to `onEvent`, in bounded memory (a chunk and the line it cuts); unparseable
 * lines are skipped. Null when there is no log.
 */
export async function scanEventLog(
  fs: StoreFs,
  taskDir: string,
  onEvent: (e: TaskEvent) => void,
  opts: ScanOptions = {},
): Promise<EventScan | null> {
  const handle = await openEventLog(fs, taskDir);
  if (!handle) return null;
  try {
    const st = await handle.stat();
    const maxBytes = opts.maxBytes ?? MAX_EVENT_LOG_BYTES;
    const after = opts.after;
    const resumes = after !== undefined && after.end <= st.size && after.ino === st.ino && (await endsWith(handle, after));
    let start = resumes ? after.end : 0;
    let skippedBytes = 0;
    // Over the limit, the newest part is read, from the first line that starts in it.
    let dropFirst = false;
    if (st.size - start > maxBytes) {
      skippedBytes = st.size - maxBytes - start;
      start = st.size - maxBytes;
      dropFirst = true;
    }
    const chunk = Buffer.alloc(Math.min(opts.chunkBytes ?? CHUNK_BYTES, Math.max(1, st.size - start)));
    let carry: Buffer = Buffer.alloc(0);
    let carryTooLong = false;
    let pos = start;
    let end = start;
    while (pos < st.size) {
      const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, st.size - pos), pos);
      if (bytesRead === 0) break;
      const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      const dataStart = pos - carry.length;
      pos += bytesRead;
      let lineStart = 0;
      for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, lineStart)) {
        if (dropFirst) dropFirst = false;
        else if (!carryTooLong) parseLine(data.subarray(lineStart, nl), onEvent);
        carryTooLong = false;
        lineStart = nl + 1;
        end = dataStart + lineStart;
      }
      const rest = data.subarray(lineStart);
      if (rest.length > MAX_LINE_BYTES) {
        carryTooLong = true;
        carry = Buffer.alloc(0);
      } else {
        // Copied: `chunk` is overwritten by the next read.
        carry = Buffer.from(rest);
      }
    }
    // The bytes before the end, read again only when the scan moved it.
    const last = resumes && end === after.end ? after.last : await bytesAt(handle, end - Math.min(end, MARK_BYTES), end);
    return {
      mark: { end, ino: st.ino, last },
      size: st.size,
      endsClean: end === st.size,
      skippedBytes,
      restarted: after !== undefined && !resumes,
    };
  } finally {
    await handle.close();
  }
}

/** Whether the log's bytes before `mark.end` are still those the mark kept (unknown ones are taken as they are). */
async function endsWith(handle: StoreFileHandle, mark: LogMark): Promise<boolean> {
  if (mark.last === null) return true;
  return (await bytesAt(handle, mark.end - mark.last.length, mark.end)).equals(mark.last);
}

async function bytesAt(handle: StoreFileHandle, from: number, to: number): Promise<Buffer> {
  const out = Buffer.alloc(to - from);
  const { bytesRead } = await handle.read(out, 0, out.length, from);
  return out.subarray(0, bytesRead);
}

function parseLine(bytes: Buffer, onEvent: (e: TaskEvent) => void): void {
  if (bytes.length === 0) return;
  try {
    const e = JSON.parse(bytes.toString('utf8')) as TaskEvent;
    if (e && typeof e === 'object' && typeof e.id === 'number' && typeof e.type === 'string') onEvent(e);
  } catch {
    // A line torn by a crash and then followed by later appends.
  }
}

/** The events of the log after id `afterId`, streamed (see scanEventLog); a missing file is an empty log. */
export async function readEventLog(
  fs: StoreFs,
  taskDir: string,
  opts: ScanOptions & { afterId?: number } = {},
): Promise<{ events: TaskEvent[]; endsClean: boolean; scan: EventScan | null }> {
  const events: TaskEvent[] = [];
  const afterId = opts.afterId ?? 0;
  const scan = await scanEventLog(fs, taskDir, (e) => (e.id > afterId ? void events.push(e) : undefined), opts);
  return { events, endsClean: scan?.endsClean ?? true, scan };
}

/**
 * The end of the log, read backwards from its last byte in growing windows
 * (a few KiB for a healthy log, never more than `maxBytes`): the newest
 * events, the newest first. `want` says when enough were found.
 */
export async function readEventTail(
  fs: StoreFs,
  taskDir: string,
  want: (newestFirst: readonly TaskEvent[]) => boolean,
  maxBytes = MAX_EVENT_LOG_BYTES,
): Promise<{ newestFirst: TaskEvent[]; size: number; tornBytes: number } | null> {
  const handle = await openEventLog(fs, taskDir);
  if (!handle) return null;
  try {
    const { size } = await handle.stat();
    let window = Math.min(size, 64 * 1024);
    for (;;) {
      const bytes = Buffer.alloc(window);
      const { bytesRead } = await handle.read(bytes, 0, window, size - window);
      const text = bytes.subarray(0, bytesRead);
      const lastNl = text.lastIndexOf(0x0a);
      const tornBytes = bytesRead - (lastNl + 1);
      // The window's first line is cut unless the window starts the file.
      const from = window === size ? 0 : text.indexOf(0x0a) + 1;
      const newestFirst: TaskEvent[] = [];
      if (lastNl >= from) {
        const lines = text.subarray(from, lastNl).toString('utf8').split('\n');
        for (let i = lines.length - 1; i >= 0; i--) parseLine(Buffer.from(lines[i]), (e) => void newestFirst.push(e));
      }
      if (want(newestFirst) || window >= Math.min(size, maxBytes)) return { newestFirst, size, tornBytes };
      window = Math.min(size, maxBytes, window * 4);
    }
  } finally {
    await handle.close();
  }
}

/** The task's problem when its log is over the limit one read goes through, or null. */
export async function eventLogProblem(fs: StoreFs, taskDir: string, file: string, maxBytes = MAX_EVENT_LOG_BYTES): Promise<Problem | null> {
  let size: number;
  try {
    // One stat, answered synchronously where the file system can: through the thread pool it cost more than
    // the rest of opening a task (fsp.stat's promise and its trip there and back).
    const sync = syncReadsOf(fs);
    size = (sync ? sync.stat(eventsPath(taskDir)) : await fs.stat(eventsPath(taskDir))).size;
  } catch {
    return null;
  }
  if (size <= maxBytes) return null;
  return {
    ...problem(
      file,
      'too-large',
      `${size} bytes, over the ${maxBytes}-byte limit one read of the event log goes through: only its newest ${maxBytes} bytes are read, so older events are not shown; the checkpoint is not affected`,
    ),
    severity: 'warning',
  };
}

/**
 * Append one event line; returns the bytes appended.
 *
 * Not fsynced: the version files are the durable record, and the log is a
 * feed for watchers; a power cut may lose its last lines, never a version.
 */
export async function appendEventLine(fs: StoreFs, taskDir: string, event: TaskEvent, afterTornLine: boolean): Promise<number> {
  const line = `${afterTornLine ? '\n' : ''}${JSON.stringify(event)}\n`;
  await fs.appendFile(eventsPath(taskDir), line);
  return Buffer.byteLength(line);
}
