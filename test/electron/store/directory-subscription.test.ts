/**
 * A directory's subscription delivers each task's appended events once, in
 * order, the last of a burst too, and a log written anew over the file it
 * followed from its start.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { subscribeDirectory } from '../../../electron/store/directory-subscription.js';
import { EVENTS_FILE } from '../../../electron/store/event-log.js';
import { nodeFs } from '../../../electron/store/store-fs.js';
import type { StoreChange, TaskEvent } from '../../../electron/store/store-types.js';
import { cleanup, tempRoot } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot('waystation-subscription-');
  await fs.mkdir(path.join(root, 't'));
});
afterEach(async () => {
  await cleanup(root);
});

function lines(from: number, to: number, run: string): string {
  let text = '';
  for (let id = from; id <= to; id++) {
    const e: TaskEvent = { id, task_id: 't', type: 'log', at: '2026-01-01T00:00:00Z', data: { run } };
    text += `${JSON.stringify(e)}\n`;
  }
  return text;
}

describe('subscribeDirectory', () => {
  it('delivers every event of appends made in a burst, the last ones too, once each and in order', async () => {
    const log = path.join(root, 't', EVENTS_FILE);
    await fs.writeFile(log, '');
    const changes: StoreChange[] = [];
    const sub = await subscribeDirectory(nodeFs, root, (c) => changes.push(c));
    try {
      // chokidar passes on one change of a file in 50 ms: these come closer together, and nothing follows them.
      for (let id = 1; id <= 6; id++) {
        await fs.appendFile(log, lines(id, id, 'burst'));
        await new Promise((resolve) => setTimeout(resolve, 8));
      }
      const ids = () => changes.flatMap((c) => c.events.map((e) => e.id));
      await vi.waitFor(() => expect(ids()).toEqual([1, 2, 3, 4, 5, 6]), { timeout: 10_000, interval: 20 });
    } finally {
      await sub.close();
    }
  });

  it('delivers what is appended after it began, and a log written anew over the same file from its start', async () => {
    const log = path.join(root, 't', EVENTS_FILE);
    await fs.writeFile(log, lines(1, 2, 'first'));
    const changes: StoreChange[] = [];
    const sub = await subscribeDirectory(nodeFs, root, (c) => changes.push(c));
    const delivered = () => changes.flatMap((c) => c.events.map((e) => `${e.id} ${String(e.data?.run)}`));
    try {
      await fs.appendFile(log, lines(3, 3, 'first'));
      await vi.waitFor(() => expect(delivered()).toEqual(['3 first']), { timeout: 10_000, interval: 20 });
      // The task removed and run again: its new log, as long as the old one and more, in the file the old one was.
      await fs.writeFile(log, lines(1, 5, 'second'));
      await vi.waitFor(() => expect(delivered()).toEqual(['3 first', '1 second', '2 second', '3 second', '4 second', '5 second']), {
        timeout: 10_000,
        interval: 20,
      });
    } finally {
      await sub.close();
    }
  });
});
