/**
 * What the host serves the inspector's Events tab, its directory overview
 * and its notifications: a task's event log after an id, figures across the
 * directory's tasks (read again only for tasks that moved on), and a
 * notification shown by the desktop app and declined by a web host.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EVENTS_PAGE } from '../../../shared/api/contract.js';
import { CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../../shared/checkpoint/schema.js';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';

const now = '2026-01-01T00:00:00.000Z';

function task(taskId: string, run: Partial<CheckpointInput['run']> = {}, elapsed = [0, 0]): Omit<CheckpointInput, 'version'> {
  return {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: taskId,
    task_name: 'overview test',
    status: 'done',
    phase: 'done',
    goal: 'exercise the host',
    plan: [
      { id: 's1', name: 'first', status: 'done', elapsed_ms: elapsed[0] },
      { id: 's2', name: 'second', status: 'done', elapsed_ms: elapsed[1] },
    ],
    current_step: 2,
    total_steps: 2,
    recovery: { mode: 'manual' },
    run: { created_at: now, updated_at: now, ...run },
    source: { kind: 'runtime' },
  };
}

let root: string;
let service: HostService | null = null;

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-host-views-')));
});

afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

describe('the event log through the host', () => {
  it('serves the events after an id, oldest first, and none for a task of another format', async () => {
    const store = openStore(root);
    await store.create(task('t1'));
    await store.appendEvent('t1', { type: 'step-start', step_id: 's1' });
    await store.appendEvent('t1', { type: 'log', step_id: 's1', data: { message: 'hello' } });
    await fs.writeFile(
      path.join(root, 'article.json'),
      JSON.stringify({ task_id: 'article', current_step: 1, total_steps: 2, results: { a: 1 } }),
    );
    service = new HostService({ host: 'web' });
    await service.open(root);

    const all = await service.getEvents({ taskId: 't1', after: 0 });
    expect(all.skipped).toBe(0);
    const types = all.events.map((e) => e.type);
    expect(types).toContain('step-start');
    expect(types.at(-1)).toBe('log');
    expect(all.events.map((e) => e.id)).toEqual([...all.events.keys()].map((i) => i + 1));
    const after = await service.getEvents({ taskId: 't1', after: all.events.at(-2)!.id });
    expect(after.events).toEqual([all.events.at(-1)]);
    expect(after.events[0].data).toEqual({ message: 'hello' });
    expect(await service.getEvents({ taskId: 'article', after: 0 })).toEqual({ events: [], skipped: 0 });
    expect(EVENTS_PAGE).toBeGreaterThan(all.events.length);
  });
});

describe('the directory overview through the host', () => {
  it('sums tokens and cost over the tasks and names the slowest steps, from the rows of the list, kept up to date as tasks move on', async () => {
    const store = openStore(root);
    await store.create(task('a', { tokens_in: 100, tokens_out: 10, cost_usd: 0.5 }, [3000, 50]));
    await store.create(task('b', { tokens_in: 20, tokens_out: 2, cost_usd: 0.25 }, [700, 9000]));
    service = new HostService({ host: 'web' });
    await service.open(root);

    // A directory's rows hold the figures, read with the list: no task is opened for them.
    const opened = vi.spyOn(Object.getPrototypeOf(store) as typeof store, 'getTask');
    const first = await service.getOverview();
    expect(opened).not.toHaveBeenCalled();
    opened.mockRestore();
    expect(first).toMatchObject({ tasks_read: 2, tasks_total: 2, tokens_in: 120, tokens_out: 12, cost_usd: 0.75 });
    expect(first.slowest_steps.map((s) => [s.task_id, s.step_id, s.elapsed_ms])).toEqual([
      ['b', 's2', 9000],
      ['a', 's1', 3000],
      ['b', 's1', 700],
      ['a', 's2', 50],
    ]);

    await store.save('a', { expectedVersion: 1, checkpoint: task('a', { tokens_in: 400, tokens_out: 40, cost_usd: 1 }, [3000, 50]) });
    await expect.poll(async () => (await service!.getOverview()).tokens_in, { timeout: 20_000 }).toBe(420);
  });
});

describe('notifications through the host', () => {
  it('shows one through the desktop app and declines in a web host', async () => {
    const shown: { title: string; body: string }[] = [];
    service = new HostService({ host: 'desktop', notify: (n) => (shown.push(n), true) });
    expect(await service.showNotification({ title: 'Task t1 waits for your approval', body: 'open it' })).toEqual({ shown: true });
    expect(shown).toEqual([{ title: 'Task t1 waits for your approval', body: 'open it' }]);
    await service.close();
    service = new HostService({ host: 'web' });
    expect(await service.showNotification({ title: 'Task t1 waits', body: '' })).toEqual({ shown: false });
  });
});
