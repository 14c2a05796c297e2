import { describe, expect, it } from 'vitest';
import {
  ipcChannel,
  type ApiInput,
  type ApiMethod,
  type HostEvent,
  type IpcResult,
  type WaystationService,
} from '../../../shared/api/contract.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { EventHub } from '../../../electron/host/event-hub.js';
import {
  registerIpcHandlers,
  type FrameLike,
  type InvokeEventLike,
  type IpcMainLike,
  type WebContentsLike,
} from '../../../electron/main/ipc-handlers.js';

/** ipcMain replaced by a map of handlers, invoked the way Electron would. */
function fakeIpcMain() {
  const handlers = new Map<string, (event: InvokeEventLike, ...args: unknown[]) => unknown>();
  const ipcMain: IpcMainLike = {
    handle: (channel, listener) => void handlers.set(channel, listener),
    removeHandler: (channel) => void handlers.delete(channel),
  };
  const invoke = (event: InvokeEventLike, channel: string, input?: unknown) => handlers.get(channel)!(event, input) as Promise<IpcResult>;
  return { ipcMain, handlers, invoke };
}

/** A window's web contents, recording what it was sent. */
function fakeContents(id: number) {
  const sent: Array<{ channel: string; payload: unknown }> = [];
  const listeners: Record<string, Array<(arg?: unknown) => void>> = {};
  let destroyed = false;
  const contents: WebContentsLike = {
    id,
    send: (channel, payload) => void sent.push({ channel, payload }),
    isDestroyed: () => destroyed,
    once: (event, l) => void (listeners[event] ??= []).push(l as () => void),
    on: (event, l) => void (listeners[event] ??= []).push(l as (arg?: unknown) => void),
  };
  return {
    contents,
    sent,
    destroy() {
      destroyed = true;
      for (const l of listeners.destroyed ?? []) l();
    },
    navigate(isMainFrame = true) {
      for (const l of listeners['did-start-navigation'] ?? []) l({ isMainFrame, isSameDocument: false });
    },
  };
}

const appFrame: FrameLike = { url: 'waystation://app/index.html', parent: null };

/** A valid input for each method of the contract; a method added to it and not here fails the typecheck. */
const validInputs: { [M in ApiMethod]: ApiInput<M> } = {
  getDirectory: {},
  openDirectory: { path: '/tmp/checkpoints' },
  chooseDirectory: {},
  getDirectoryTrust: {},
  trustDirectory: { path: '/tmp/checkpoints' },
  listTasks: {},
  getTask: { taskId: 't1', version: 2 },
  getHistory: { taskId: 't1' },
  getStepResult: { taskId: 't1', stepId: 's1' },
  getMessages: { taskId: 't1' },
  getEvents: { taskId: 't1', after: 3 },
  diffVersions: { taskId: 't1', a: 1, b: 2 },
  verifyTask: { taskId: 't1' },
  getOverview: {},
  listAgents: {},
  showNotification: { title: 'Task t1 waits for approval' },
  startTask: { agent: 'checkpoint-demo' },
  resumeTask: { taskId: 't1' },
  approveResume: { taskId: 't1', by: 'fay' },
  rejectResume: { taskId: 't1', reason: 'wrong plan' },
  editStepResult: { taskId: 't1', stepId: 's1', value: { fixed: true } },
  stopTask: { taskId: 't1' },
  forkTask: { taskId: 't1', version: 2 },
  previewRewind: { taskId: 't1', stepId: 's1' },
  rewindTask: { taskId: 't1', stepId: 's1', redo: ['effect-1'] },
  previewThreadEdit: { taskId: 't1', version: 2, values: { draft: 'Hello' } },
  editThreadState: { taskId: 't1', version: 2, values: { draft: 'Hello' }, expectedCheckpointId: 'cp-2' },
};

/** Every channel the main process answers, with a valid input for each. */
const channels: Array<[string, unknown]> = [
  ...apiMethods.map((m): [string, unknown] => [ipcChannel(m), validInputs[m]]),
  [ipcChannel('subscribe'), { subscriptionId: 'x' }],
  [ipcChannel('unsubscribe'), { subscriptionId: 'x' }],
];

/** What the fake service answers for a method: a value no other method gives. */
const answerOf = (method: string) => ({ answered: method, items: [method.length, { nested: `${method}-value` }] });

function setup(ready?: Promise<unknown>) {
  const hub = new EventHub();
  const calls: Array<{ method: string; input: unknown }> = [];
  const service = Object.fromEntries(
    apiMethods.map((m) => [
      m,
      async (input: unknown) => {
        calls.push({ method: m, input });
        if (m === 'resumeTask' && (input as { taskId: string }).taskId === 'held')
          throw Object.assign(new Error('another runner holds task held'), { code: 'busy' });
        return answerOf(m);
      },
    ]),
  ) as unknown as WaystationService;
  service.subscribe = (l, last) => hub.subscribe(l, last);
  const ipc = fakeIpcMain();
  const own = fakeContents(1);
  const stranger = fakeContents(2);
  const dispose = registerIpcHandlers(ipc.ipcMain, service, {
    isOwnWebContents: (s) => s.id === own.contents.id,
    ready,
    checkOutputs: false,
  });
  const from = (contents: WebContentsLike, frame: FrameLike | null = appFrame): InvokeEventLike => ({
    sender: contents,
    senderFrame: frame,
  });
  return { hub, calls, ipc, own, stranger, dispose, from };
}

describe('IPC handlers', () => {
  it('register one channel per contract method, plus subscribe and unsubscribe', () => {
    const { ipc } = setup();
    expect([...ipc.handlers.keys()].sort()).toEqual(
      [...apiMethods.map((m) => ipcChannel(m)), ipcChannel('subscribe'), ipcChannel('unsubscribe')].sort(),
    );
  });

  it('fill the defaults of a validated input before the service sees it', async () => {
    const { ipc, own, from, calls } = setup();
    const result = await ipc.invoke(from(own.contents), ipcChannel('startTask'), { agent: 'checkpoint-demo' });
    expect(result).toEqual({ ok: true, value: answerOf('startTask') });
    expect(calls).toEqual([{ method: 'startTask', input: { agent: 'checkpoint-demo', options: {}, mode: 'manual' } }]);
  });

  it.each(apiMethods)('%s returns what the service returns for a valid input', async (method) => {
    const { ipc, own, from, calls } = setup();
    const result = await ipc.invoke(from(own.contents), ipcChannel(method), validInputs[method]);
    expect(result).toEqual({ ok: true, value: answerOf(method) });
    expect(calls.map((c) => c.method)).toEqual([method]);
    expect(calls[0].input).toMatchObject(validInputs[method] as object);
  });

  it.each(channels)('%s refuses invalid input before calling the service', async (channel) => {
    const { ipc, own, from, calls, hub } = setup();
    for (const bad of ['not an object', 42, true, []]) {
      const result = await ipc.invoke(from(own.contents), channel, bad);
      expect(result.ok === false && result.error.code, JSON.stringify(bad)).toBe('invalid-input');
    }
    expect(calls).toEqual([]);
    expect(hub.subscriberCount).toBe(0);
  });

  it.each(channels)('%s refuses every foreign sender before anything runs', async (channel, input) => {
    const { ipc, own, stranger, from, calls, hub } = setup();
    const attempts: InvokeEventLike[] = [
      from(stranger.contents),
      from(own.contents, { url: 'waystation://app/index.html', parent: appFrame }),
      from(own.contents, { url: 'https://evil.example/', parent: null }),
      from(own.contents, null),
    ];
    for (const event of attempts) {
      const result = await ipc.invoke(event, channel, input);
      expect(result.ok === false && result.error.code, JSON.stringify(event.senderFrame)).toBe('forbidden');
    }
    expect(calls).toEqual([]);
    expect(hub.subscriberCount).toBe(0);
    expect(own.sent).toEqual([]);
  });

  it('hold calls until the first directory is open, and run them once it is, or once opening failed', async () => {
    for (const outcome of ['opened', 'failed'] as const) {
      let settle!: () => void;
      const opening = new Promise<void>((resolve, reject) => {
        settle = outcome === 'opened' ? resolve : () => reject(new Error('the directory could not be opened'));
      });
      const { ipc, own, from, calls } = setup(opening);
      const answered: IpcResult[] = [];
      const pending = ipc.invoke(from(own.contents), ipcChannel('getDirectory'), {}).then((r) => answered.push(r));
      await new Promise((r) => setTimeout(r, 20));
      expect(calls).toEqual([]);
      expect(answered).toEqual([]);
      settle();
      await pending;
      expect(calls.map((c) => c.method)).toEqual(['getDirectory']);
      expect(answered).toEqual([{ ok: true, value: answerOf('getDirectory') }]);
    }
  });

  it('refuse a task id that is a path', async () => {
    const { ipc, own, from, calls } = setup();
    for (const taskId of ['../etc', 'a/b', '..', 'a\\b']) {
      const result = await ipc.invoke(from(own.contents), ipcChannel('getTask'), { taskId });
      expect(result.ok === false && result.error.code).toBe('invalid-input');
    }
    expect(calls).toEqual([]);
  });

  it('refuse foreign senders: another window, a sub-frame, another origin, a gone frame', async () => {
    const { ipc, own, stranger, from, calls } = setup();
    const attempts: InvokeEventLike[] = [
      from(stranger.contents),
      from(own.contents, { url: 'waystation://app/index.html', parent: appFrame }),
      from(own.contents, { url: 'https://evil.example/', parent: null }),
      from(own.contents, { url: 'file:///tmp/index.html', parent: null }),
      from(own.contents, { url: 'waystation://other/index.html', parent: null }),
      from(own.contents, null),
    ];
    for (const event of attempts) {
      for (const channel of [ipcChannel('listTasks'), ipcChannel('subscribe')]) {
        const result = await ipc.invoke(event, channel, channel.endsWith('subscribe') ? { subscriptionId: 'x' } : {});
        expect(result.ok === false && result.error.code, JSON.stringify(event.senderFrame)).toBe('forbidden');
      }
    }
    expect(calls).toEqual([]);
    expect(own.sent).toEqual([]);
  });

  it('turn service errors into ApiError bodies with the mapped code', async () => {
    const { ipc, own, from } = setup();
    const result = await ipc.invoke(from(own.contents), ipcChannel('resumeTask'), { taskId: 'held' });
    expect(result).toEqual({ ok: false, error: { code: 'conflict', message: 'another runner holds task held' } });
  });

  it('stream events to a subscriber from its lastEventId, and stop on unsubscribe', async () => {
    const { ipc, own, from, hub } = setup();
    hub.publish({ type: 'task-changed', taskId: 'a', version: 1 });
    hub.publish({ type: 'task-changed', taskId: 'b', version: 1 });
    expect(await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's1', lastEventId: 1 })).toEqual({
      ok: true,
      value: null,
    });
    hub.publish({ type: 'task-removed', taskId: 'a' });
    const ids = () => own.sent.map((s) => (s.payload as { event: HostEvent }).event.id);
    expect(ids()).toEqual([2, 3]);
    expect(
      own.sent.every((s) => s.channel === ipcChannel('event') && (s.payload as { subscriptionId: string }).subscriptionId === 's1'),
    ).toBe(true);
    await ipc.invoke(from(own.contents), ipcChannel('unsubscribe'), { subscriptionId: 's1' });
    hub.publish({ type: 'task-removed', taskId: 'b' });
    expect(ids()).toEqual([2, 3]);
    expect(hub.subscriberCount).toBe(0);
  });

  it('drop a page’s subscriptions when it reloads or its window is destroyed', async () => {
    const { ipc, own, from, hub } = setup();
    await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's1' });
    await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's2' });
    expect(hub.subscriberCount).toBe(2);
    own.navigate(false);
    expect(hub.subscriberCount).toBe(2);
    own.navigate(true);
    expect(hub.subscriberCount).toBe(0);
    await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's3' });
    own.destroy();
    expect(hub.subscriberCount).toBe(0);
  });

  it('refuse malformed and duplicate subscriptions', async () => {
    const { ipc, own, from } = setup();
    expect((await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: '' })).ok).toBe(false);
    expect((await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's', lastEventId: -1 })).ok).toBe(false);
    await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's' });
    const again = await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's' });
    expect(again.ok === false && again.error.code).toBe('conflict');
  });

  it('remove every handler and subscription when disposed', async () => {
    const { ipc, own, from, hub, dispose } = setup();
    await ipc.invoke(from(own.contents), ipcChannel('subscribe'), { subscriptionId: 's1' });
    dispose();
    expect(ipc.handlers.size).toBe(0);
    expect(hub.subscriberCount).toBe(0);
  });
});

describe('ApiError across IPC', () => {
  it('keeps issues in the error body', async () => {
    const { ipc, own, from } = setup();
    const result = await ipc.invoke(from(own.contents), ipcChannel('rejectResume'), { taskId: 't1', reason: ' ' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.issues?.join(' ')).toContain('reason');
      expect(new ApiError(result.error.code, result.error.message).code).toBe('invalid-input');
    }
  });
});
