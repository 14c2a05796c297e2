import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HumanMessage } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { HostEvent } from '../../../shared/api/contract.js';
import { HostService } from '../../../electron/host/host-service.js';
import { detectLocation } from '../../../electron/sources/detect-location.js';
import { THREADS, weatherAgent } from '../../support/langgraph-graphs.js';
import { closeSaver, fingerprint, scenarioDatabase } from '../../support/langgraph-sqlite.js';

let dir: string;
let file: string;
let service: HostService;

beforeAll(async () => {
  ({ dir, file } = await scenarioDatabase());
  service = new HostService({ host: 'web', runner: null });
});

afterAll(async () => {
  await service?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the host with a LangGraph SQLite file open', () => {
  it('opens the file read-only and lists its threads, without changing a byte of it', async () => {
    const before = fingerprint(file);
    const info = await service.open(file);
    expect(info).toMatchObject({ root: fs.realpathSync(file), read_only: true });
    const tasks = await service.listTasks();
    expect(tasks.map((t) => [t.task_id, t.display_status, t.format])).toEqual([
      [THREADS.approved, 'done', 'langgraph'],
      [THREADS.waiting, 'waiting_human', 'langgraph'],
      [THREADS.edited, 'done', 'langgraph'],
      [THREADS.weather, 'done', 'langgraph'],
      [THREADS.weatherTwice, 'done', 'langgraph'],
    ]);
    const detail = await service.getTask({ taskId: THREADS.waiting });
    expect(detail.checkpoint!.status).toBe('waiting_human');
    const history = await service.getHistory({ taskId: THREADS.edited });
    expect(history.versions.map((v) => v.source.note)).toContain('update, step 1, from version 2');
    const messages = await service.getMessages({ taskId: THREADS.weather });
    expect(messages.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const diff = await service.diffVersions({ taskId: THREADS.weather, a: 2, b: 5 });
    expect(diff.entries.some((e) => e.path === '/history/count')).toBe(true);
    await service.watching();
    expect(fingerprint(file)).toEqual(before);
  });

  it('opens a location as the caller found it to be, without finding out again', async () => {
    // `serve` detects what it was given before it starts the host; a database is then not asked a second time.
    const other = new HostService({ host: 'web', runner: null });
    try {
      await expect(other.open(file, { detected: { kind: 'neither', reason: 'found to be nothing by the caller' } })).rejects.toThrow(
        /is not a directory: found to be nothing by the caller/,
      );
      const info = await other.open(file, { detected: await detectLocation(file) });
      expect(info).toMatchObject({ root: fs.realpathSync(file), read_only: true });
      expect((await other.listTasks()).map((t) => t.format)).toEqual(Object.values(THREADS).map(() => 'langgraph'));
    } finally {
      await other.close();
    }
  });

  it('refuses to run anything on a LangGraph thread', async () => {
    await expect(service.resumeTask({ taskId: THREADS.waiting })).rejects.toThrow();
  });

  it('announces the thread that real LangGraph writes to while the file is open', async () => {
    await service.watching();
    const events: HostEvent[] = [];
    const stop = service.subscribe((e) => void events.push(e));
    const saver = SqliteSaver.fromConnString(file);
    try {
      await weatherAgent(saver).invoke({ messages: [new HumanMessage('And in Oslo?')] }, { configurable: { thread_id: THREADS.weather } });
    } finally {
      closeSaver(saver);
    }
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === 'task-changed' && e.taskId === THREADS.weather) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    stop();
    const changed = events.filter((e) => e.type === 'task-changed');
    expect(changed.map((e) => (e as { taskId: string }).taskId)).toContain(THREADS.weather);
    expect(changed.every((e) => (e as { taskId: string }).taskId === THREADS.weather)).toBe(true);
    const detail = await service.getTask({ taskId: THREADS.weather });
    expect(detail.checkpoint!.version).toBeGreaterThan(5);
  });
});
