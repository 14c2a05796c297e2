import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ipcChannel, type HostEvent } from '../../../shared/api/contract.js';
import { toApiError } from '../../../shared/api/api-error.js';
import { apiMethods } from '../../../shared/api/api-methods.js';

// The preload requires only `electron`; a fake bridge records what it exposes.
const exposed: Record<string, unknown> = {};
const invocations: Array<{ channel: string; input: unknown }> = [];
const answers = new Map<string, unknown>();
let eventListener: ((event: unknown, payload: unknown) => void) | null = null;
const required: string[] = [];

const fakeElectron = {
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => void (exposed[key] = api) },
  ipcRenderer: {
    invoke: async (channel: string, input: unknown) => {
      invocations.push({ channel, input });
      return answers.get(channel) ?? { ok: true, value: null };
    },
    on: (_channel: string, listener: (event: unknown, payload: unknown) => void) => void (eventListener = listener),
  },
};

/**
 * Compile the preload the way the build does (TypeScript to CommonJS) and run
 * it as Electron's sandbox does: a function given `require`, `module` and
 * `exports`, where `require` knows only `electron`.
 */
function loadPreload(): { PRELOAD_METHODS: readonly string[] } {
  const source = readFileSync(fileURLToPath(new URL('../../../electron/main/preload.cts', import.meta.url)), 'utf8');
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const module = { exports: {} as Record<string, unknown> };
  const sandboxRequire = (name: string) => {
    required.push(name);
    if (name !== 'electron') throw new Error(`a sandboxed preload cannot require ${name}`);
    return fakeElectron;
  };
  vm.runInNewContext(`(function (require, module, exports) {${js}\n})`, {})(sandboxRequire, module, module.exports);
  return module.exports as { PRELOAD_METHODS: readonly string[] };
}

const { PRELOAD_METHODS } = loadPreload();

type Api = Record<string, (...args: unknown[]) => unknown>;
const api = () => exposed.waystation as Api;

describe('the preload', () => {
  it('requires nothing but electron, as a sandboxed preload must', () => {
    expect(required).toEqual(['electron']);
  });

  it('exposes window.waystation and nothing else, with exactly the contract methods and subscribe', () => {
    expect(Object.keys(exposed)).toEqual(['waystation']);
    expect([...PRELOAD_METHODS].sort()).toEqual([...apiMethods].sort());
    expect(Object.keys(api()).sort()).toEqual([...apiMethods, 'subscribe'].sort());
    expect(Object.values(api()).every((v) => typeof v === 'function')).toBe(true);
  });

  it('invokes the method channel and resolves with the value', async () => {
    answers.set(ipcChannel('listTasks'), { ok: true, value: [{ task_id: 't1' }] });
    await expect(api().listTasks({})).resolves.toEqual([{ task_id: 't1' }]);
    expect(invocations.at(-1)).toEqual({ channel: 'waystation:listTasks', input: {} });
  });

  it('rejects with an ApiError-shaped object that keeps code, message and issues', async () => {
    answers.set(ipcChannel('getTask'), { ok: false, error: { code: 'not-found', message: 'no task "x"', issues: ['taskId: missing'] } });
    const reason = await (api().getTask({ taskId: 'x' }) as Promise<unknown>).catch((e: unknown) => e);
    expect(reason).toEqual({ name: 'ApiError', code: 'not-found', message: 'no task "x"', issues: ['taskId: missing'] });
    const err = toApiError(reason);
    expect(err.code).toBe('not-found');
    expect(err.message).toBe('no task "x"');
  });

  it('delivers events of its own subscription only, and unsubscribes', async () => {
    const seen: HostEvent[] = [];
    const off = api().subscribe((e: HostEvent) => seen.push(e), 5) as () => void;
    const sub = invocations.at(-1)!;
    expect(sub.channel).toBe('waystation:subscribe');
    const { subscriptionId } = sub.input as { subscriptionId: string; lastEventId: number };
    expect(sub.input).toEqual({ subscriptionId, lastEventId: 5 });
    const event: HostEvent = { id: 6, type: 'task-removed', taskId: 't1' };
    eventListener!({}, { subscriptionId, event });
    eventListener!({}, { subscriptionId: 'someone-else', event: { ...event, id: 7 } });
    expect(seen).toEqual([event]);
    off();
    expect(invocations.at(-1)).toEqual({ channel: 'waystation:unsubscribe', input: { subscriptionId } });
    eventListener!({}, { subscriptionId, event: { ...event, id: 8 } });
    expect(seen).toHaveLength(1);
  });
});
