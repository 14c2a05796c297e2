/**
 * The event log is read in bounded memory: streamed in chunks (the same
 * events as parsing it whole, wherever a chunk cuts a line), at most the
 * newest `maxEventLogBytes` of a huge log (the task then carries a warning),
 * from its end for an append, and a growing log is read only from where the
 * last read ended.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { EVENTS_FILE, parseEvents, readEventTail, scanEventLog } from '../../../electron/store/event-log.js';
import { nodeFs, type StoreFileHandle, type StoreFs } from '../../../electron/store/store-fs.js';
import type { TaskEvent } from '../../../electron/store/store-types.js';
import { cleanup, makeCheckpoint, tempRoot } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(() => cleanup(root));

/** A StoreFs that counts the bytes read through file handles. */
function countingFs(): { fs: StoreFs; bytesRead: () => number } {
  let total = 0;
  const fs: StoreFs = {
    ...nodeFs,
    syncReads: undefined,
    open: async (p, flags, mode) => {
      const handle = await nodeFs.open(p, flags, mode);
      const counted = Object.create(handle) as StoreFileHandle;
      counted.read = async (buffer, offset, length, position) => {
        const r = await handle.read(buffer, offset, length, position);
        total += r.bytesRead;
        return r;
      };
      counted.readFile = async () => {
        const b = await handle.readFile();
        total += b.length;
        return b;
      };
      return counted;
    },
  };
  return { fs, bytesRead: () => total };
}

/** Event lines of varied lengths, with a torn line in the middle and junk. */
function logText(n: number): string {
  const lines: string[] = [];
  for (let id = 1; id <= n; id++) {
    lines.push(JSON.stringify({ id, task_id: 't', type: 'note', at: '2026-01-01T00:00:00Z', text: 'é'.repeat(id % 37) }));
    if (id === n / 2) lines.push('{"id": 99999, "type": "cut short');
    if (id % 101 === 0) lines.push('');
  }
  return `${lines.join('\n')}\n{"id":${n + 1},"type":"torn`;
}

describe('the event log, bounded', () => {
  it('streams the same events as parsing the log whole, wherever the chunks cut it', async () => {
    const dir = path.join(root, 't');
    await fs.mkdir(dir);
    const text = logText(3000);
    await fs.writeFile(path.join(dir, EVENTS_FILE), text);
    const whole = parseEvents(text);
    for (const chunkBytes of [5, 97, 4096, 1 << 20]) {
      const streamed: TaskEvent[] = [];
      const scan = await scanEventLog(nodeFs, dir, (e) => void streamed.push(e), { chunkBytes });
      expect(streamed, `chunks of ${chunkBytes}`).toEqual(whole.events);
      expect(scan!.endsClean).toBe(false);
      const end = Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1));
      expect(scan!.mark.end).toBe(end);
      // The mark keeps the end of the last complete line.
      expect(scan!.mark.last!.toString()).toBe(
        Buffer.from(text)
          .subarray(end - 256, end)
          .toString(),
      );
    }
    const tail = await readEventTail(nodeFs, dir, (newest) => newest.length > 0);
    expect(tail!.newestFirst[0].id).toBe(3000);
    expect(tail!.tornBytes).toBeGreaterThan(0);
  });

  it('reads only the newest maxEventLogBytes of a huge log, and the task says older events are not shown', async () => {
    const store = openStore(root, { maxEventLogBytes: 4096 });
    await store.create(makeCheckpoint('t'));
    const dir = path.join(root, 't');
    await fs.writeFile(path.join(dir, EVENTS_FILE), `${logText(2000)}\n`);
    const events = await store.readEvents('t');
    expect(events.length).toBeGreaterThan(0);
    expect(events.at(-1)!.id).toBe(2000);
    // Only what the last 4 KiB hold.
    expect(Buffer.byteLength(events.map((e) => JSON.stringify(e)).join('\n'))).toBeLessThanOrEqual(4096);
    const entry = await store.getTask('t');
    const warning = entry!.problems.find((p) => p.file === `t/${EVENTS_FILE}`);
    expect(warning).toMatchObject({ reason: 'too-large', severity: 'warning' });
    expect(warning!.message).toContain('older events are not shown');
    // An append after the huge log still takes the next id.
    expect((await store.appendEvent('t', { type: 'log' })).id).toBe(2001);
  });

  it('reads a growing log only from where the last read ended, and an append reads its end only', async () => {
    const counting = countingFs();
    const store = openStore(root, { fs: counting.fs });
    await store.create(makeCheckpoint('t'));
    const dir = path.join(root, 't');
    const text = `${logText(20_000).slice(0, -`{"id":20001,"type":"torn`.length)}`;
    await fs.writeFile(path.join(dir, EVENTS_FILE), text);
    const size = Buffer.byteLength(text);
    expect(size).toBeGreaterThan(1_000_000);

    const first = await store.readEvents('t', 19_990);
    expect(first.map((e) => e.id)).toEqual([19_991, 19_992, 19_993, 19_994, 19_995, 19_996, 19_997, 19_998, 19_999, 20_000]);
    const afterFirst = counting.bytesRead();
    const appended = await store.appendEvent('t', { type: 'log' });
    expect(appended.id).toBe(20_001);
    const afterAppend = counting.bytesRead();
    expect(afterAppend - afterFirst).toBeLessThan(256 * 1024);
    const next = await store.readEvents('t', 20_000);
    expect(next.map((e) => e.id)).toEqual([20_001]);
    expect(counting.bytesRead() - afterAppend).toBeLessThan(1024);
    // The newest page only, when asked for.
    expect((await store.readEvents('t', 0, { last: 3 })).map((e) => e.id)).toEqual([19_999, 20_000, 20_001]);
  });
});
