/**
 * The task's append-only event log, `events.jsonl`: one JSON object a line,
 * ids increasing by one per task.
 */
import path from 'node:path';
import type { TaskEvent } from './store-types.js';
import { errorCode, type StoreFs } from './store-fs.js';

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

/** Read the whole log; a missing file is an empty log. */
export async function readEventLog(fs: StoreFs, taskDir: string): Promise<{ events: TaskEvent[]; endsClean: boolean }> {
  let text: string;
  try {
    const handle = await fs.open(eventsPath(taskDir), 'r');
    try {
      text = (await handle.readFile()).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { events: [], endsClean: true };
    throw err;
  }
  return parseEvents(text);
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
