/**
 * Quitting and reloading with real task processes: a host closed while a task
 * runs leaves it resumable (the next host resumes it to done without redoing
 * finished steps), and a renderer reload drops only that page's
 * subscriptions while the task's process carries on.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ipcChannel, type HostEvent, type IpcResult } from '../../../shared/api/contract.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { HostService } from '../../../electron/host/host-service.js';
import { registerIpcHandlers, type InvokeEventLike, type WebContentsLike } from '../../../electron/main/ipc-handlers.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { readLeaseState } from '../../../electron/store/file-lease-state.js';
import { bundleWorker, type WorkerBundle } from '../../fakes/worker-bundle.js';
import { trustAll } from '../../support/trust-all.js';

let bundle: WorkerBundle;
let root: string;
const services: HostService[] = [];

beforeAll(async () => {
  bundle = await bundleWorker();
}, 60_000);
afterAll(async () => {
  await bundle?.dispose();
});
beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-host-quit-')));
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  await fs.rm(root, { recursive: true, force: true });
});

/** A host with the real runner; the offline model answers slowly enough for a run to be caught mid-way. */
function newService(latencyMs: number): { service: HostService; events: HostEvent[] } {
  const env: NodeJS.ProcessEnv = { ...process.env, WAYSTATION_OFFLINE_LATENCY_MS: String(latencyMs), SKIP_FAILURE: '1' };
  delete env.OPENAI_API_KEY;
  const service = new HostService({
    host: 'web',
    runner: createHostRunner({ env, workerLaunch: bundle.workerLaunch }),
    recoverOnOpen: false,
    trust: trustAll,
  });
  services.push(service);
  const events: HostEvent[] = [];
  service.subscribe((e) => void events.push(e));
  return { service, events };
}

/** Resolves with the first event `predicate` accepts, among those seen so far and those to come. */
function eventWhere(service: HostService, events: HostEvent[], predicate: (e: HostEvent) => boolean, what: string): Promise<HostEvent> {
  const seen = events.find(predicate);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gave up waiting for ${what}; last events: ${JSON.stringify(events.slice(-5))}`)),
      30_000,
    );
    const stop = service.subscribe((e) => {
      if (!predicate(e)) return;
      clearTimeout(timer);
      stop();
      resolve(e);
    });
  });
}

const latest = async (taskId: string) => (await openStore(root).getTask(taskId))!.checkpoint!;

/** Wait until no live process holds the task's lease (a killed worker's lease is dead with its pid). */
async function untilReleased(taskId: string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (!(await readLeaseState(path.join(root, taskId))).held) return;
    await sleep(50);
  }
  throw new Error(`the lease of ${taskId} is still held`);
}

describe('quitting while a task runs', () => {
  it('leaves the task resumable, and the next host resumes it to done without redoing finished steps', async () => {
    const first = newService(400);
    await first.service.open(root);
    await first.service.startTask({ taskId: 'long', agent: 'checkpoint-demo', options: {}, mode: 'manual' });
    // Caught mid-run: the first step is saved and the worker is on the next.
    await eventWhere(
      first.service,
      first.events,
      (e) => e.type === 'task-event' && e.taskId === 'long' && e.event.type === 'step-finish',
      'the first step to finish',
    );
    await first.service.close();
    await untilReleased('long');

    const left = await latest('long');
    const finishedBefore = left.plan.filter((s) => s.status === 'done').map((s) => s.id);
    expect(finishedBefore.length).toBeGreaterThan(0);

    const second = newService(0);
    await second.service.open(root);
    const listed = (await second.service.listTasks()).find((t) => t.task_id === 'long');
    if (left.status === 'done') {
      // The worker finished its step before the signal landed: nothing is left to resume.
      expect(listed?.display_status).toBe('done');
      return;
    }
    expect(left.status).toBe('running');
    expect(listed?.display_status).toBe('interrupted');
    const exited = eventWhere(
      second.service,
      second.events,
      (e) => e.type === 'runner' && e.taskId === 'long' && e.state === 'exited',
      'the resumed worker to exit',
    );
    await second.service.resumeTask({ taskId: 'long' });
    await exited;
    const done = await latest('long');
    expect(done.status).toBe('done');
    expect(done.plan.every((s) => s.status === 'done')).toBe(true);
    for (const id of finishedBefore) expect(done.plan.find((s) => s.id === id)?.attempts).toBe(1);
  }, 60_000);
});

describe('reloading the renderer while a task runs', () => {
  it('drops the old page’s subscriptions; the task runs on to done and the reloaded page catches up from its last event id', async () => {
    const { service, events } = newService(150);
    await service.open(root);
    const handlers = new Map<string, (event: InvokeEventLike, input?: unknown) => Promise<IpcResult>>();
    const navigationListeners: Array<(details: { isMainFrame: boolean; isSameDocument: boolean }) => void> = [];
    const received: Array<{ subscriptionId: string; event: HostEvent }> = [];
    const page: WebContentsLike = {
      id: 1,
      send: (_channel, payload) => void received.push(payload as { subscriptionId: string; event: HostEvent }),
      isDestroyed: () => false,
      once: () => undefined,
      on: (_event, listener) => void navigationListeners.push(listener),
    };
    const dispose = registerIpcHandlers(
      {
        handle: (channel, listener) => void handlers.set(channel, listener as never),
        removeHandler: (channel) => void handlers.delete(channel),
      },
      service,
      { isOwnWebContents: (s) => s.id === page.id },
    );
    try {
      const from: InvokeEventLike = { sender: page, senderFrame: { url: 'waystation://app/index.html', parent: null } };
      const invoke = (channel: string, input: unknown) => handlers.get(channel)!(from, input);
      const subscribersBefore = service.hub.subscriberCount;
      expect(await invoke(ipcChannel('subscribe'), { subscriptionId: 'before-reload' })).toEqual({ ok: true, value: null });
      expect(service.hub.subscriberCount).toBe(subscribersBefore + 1);
      expect(await invoke(ipcChannel('startTask'), { taskId: 'kept', agent: 'checkpoint-demo', options: {} })).toMatchObject({ ok: true });
      await eventWhere(service, events, (e) => e.type === 'runner' && e.taskId === 'kept' && e.state === 'started', 'the worker to start');
      const lastSeen = received.at(-1)!.event.id;

      // The page reloads: its subscriptions go with it, the worker does not.
      for (const l of navigationListeners) l({ isMainFrame: true, isSameDocument: false });
      expect(service.hub.subscriberCount).toBe(subscribersBefore);
      const countBefore = received.length;
      await eventWhere(service, events, (e) => e.type === 'runner' && e.taskId === 'kept' && e.state === 'exited', 'the worker to exit');
      expect(received.length).toBe(countBefore);
      expect((await latest('kept')).status).toBe('done');

      // The reloaded page subscribes again from the last event it saw and misses nothing.
      expect(await invoke(ipcChannel('subscribe'), { subscriptionId: 'after-reload', lastEventId: lastSeen })).toEqual({
        ok: true,
        value: null,
      });
      const replayed = received.slice(countBefore).map((r) => r.event.id);
      const missed = events.filter((e) => e.id > lastSeen).map((e) => e.id);
      expect(replayed).toEqual(missed);
      expect(
        received.slice(countBefore).some((r) => r.event.type === 'runner' && r.event.taskId === 'kept' && r.event.state === 'exited'),
      ).toBe(true);
    } finally {
      dispose();
    }
  }, 60_000);
});
