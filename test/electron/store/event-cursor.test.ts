/**
 * A cursor following a task's event log answers every read as a full read of
 * the log would, whatever was appended, torn or replaced between the reads,
 * however few events it keeps.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import fs from 'node:fs/promises';
import path from 'node:path';
import { EventCursor } from '../../../electron/store/event-cursor.js';
import { EVENTS_FILE, readEventLog } from '../../../electron/store/event-log.js';
import { nodeFs } from '../../../electron/store/store-fs.js';
import type { TaskEvent } from '../../../electron/store/store-types.js';
import { cleanup, tempRoot } from './store-test-helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempRoot('waystation-events-');
});
afterEach(async () => {
  await cleanup(dir);
});

const action = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tear' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      // How far behind the newest event the reader is: most reads ask for the few newest, some for far older ones.
      back: fc.nat(24),
      last: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
    }),
  },
);

function line(id: number, log: number): string {
  const e: TaskEvent = { id, task_id: 't', type: 'log', at: '2026-01-01T00:00:00Z', data: { log, text: `event ${id} of log ${log}` } };
  return `${JSON.stringify(e)}\n`;
}

describe('EventCursor', () => {
  it('reads what a full read of the log reads, after any appends, torn lines and replacements', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 8 }), async (actions, keep) => {
        const file = path.join(dir, EVENTS_FILE);
        await fs.rm(file, { force: true });
        const cursor = new EventCursor(nodeFs, { keep });
        let log = 0;
        let next = 1;
        // The rest of a line whose first half was written (a writer caught mid-append).
        let pending = '';
        for (const a of actions) {
          if (a.kind === 'append') {
            let text = pending;
            pending = '';
            for (let i = 0; i < a.n; i++) text += line(next++, log);
            await fs.appendFile(file, text);
          } else if (a.kind === 'tear' && !pending) {
            const whole = line(next++, log);
            const cut = Math.floor(whole.length / 2);
            await fs.appendFile(file, whole.slice(0, cut));
            pending = whole.slice(cut);
          } else if (a.kind === 'replace') {
            // A task removed and written anew: another file under the name, its ids from 1 again.
            log++;
            next = 1;
            pending = '';
            await fs.writeFile(`${file}.new`, line(next++, log));
            await fs.rename(`${file}.new`, file);
          } else if (a.kind === 'read') {
            const after = Math.max(0, next - 1 - a.back);
            const whole = (await readEventLog(nodeFs, dir, { afterId: after })).events;
            const expected = a.last === undefined ? whole : whole.slice(Math.max(0, whole.length - a.last));
            expect(await cursor.read(dir, after, a.last)).toEqual(expected);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('reads a log written anew over the file it followed from its start, though the file is as long or longer', async () => {
    // A task removed and written anew can get the old log's inode number back; rewritten in place, it keeps it.
    const file = path.join(dir, EVENTS_FILE);
    const cursor = new EventCursor(nodeFs);
    await fs.writeFile(file, line(1, 0) + line(2, 0));
    expect((await cursor.read(dir, 0)).map((e) => e.data?.log)).toEqual([0, 0]);
    await fs.writeFile(file, line(1, 1) + line(2, 1) + line(3, 1));
    expect(await cursor.read(dir, 0)).toEqual((await readEventLog(nodeFs, dir)).events);
    expect((await cursor.read(dir, 1)).map((e) => [e.id, e.data?.log])).toEqual([
      [2, 1],
      [3, 1],
    ]);
  });

  it('answers a task with no log with no events, and starts over once the log is there', async () => {
    const cursor = new EventCursor(nodeFs);
    expect(await cursor.read(dir, 0)).toEqual([]);
    await fs.writeFile(path.join(dir, EVENTS_FILE), line(1, 0) + line(2, 0));
    expect((await cursor.read(dir, 0)).map((e) => e.id)).toEqual([1, 2]);
    await fs.rm(path.join(dir, EVENTS_FILE));
    expect(await cursor.read(dir, 0)).toEqual([]);
  });
});
