/**
 * The preload: exposes `window.waystation`, exactly the WaystationApi, and
 * nothing else (never ipcRenderer itself).
 *
 * With `sandbox: true` a preload is one CommonJS script that may require only
 * `electron`, so this file imports no module of ours at run time: the method
 * list is written out here, as the page's client has it written out for the
 * page (shared/api/api-methods.ts; tests keep both equal to the contract's), and
 * types come from the contract at compile time only. It is a `.cts` file so
 * that tsc emits it as CommonJS (`preload.cjs`) while the rest is ESM.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { HostEvent, HostEventListener, IpcResult, WaystationApi } from '../../shared/api/contract.js';

/** The contract's methods; `test/electron/main/preload.test.ts` checks this against `apiMethods`. */
export const PRELOAD_METHODS = [
  'getDirectory',
  'openDirectory',
  'chooseDirectory',
  'getDirectoryTrust',
  'trustDirectory',
  'listTasks',
  'getTask',
  'getHistory',
  'getStepResult',
  'getMessages',
  'getEvents',
  'diffVersions',
  'verifyTask',
  'getOverview',
  'listAgents',
  'showNotification',
  'startTask',
  'resumeTask',
  'approveResume',
  'rejectResume',
  'editStepResult',
  'stopTask',
  'forkTask',
  'previewRewind',
  'rewindTask',
  'previewThreadEdit',
  'editThreadState',
] as const;

interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, payload: unknown) => void): unknown;
}

/**
 * Build the API over an ipcRenderer.
 *
 * Failures reject with a plain `{ name: 'ApiError', code, message, issues }`
 * object: across the context bridge an Error keeps only its message, a plain
 * object keeps every field. `toApiError` in the contract turns it back into
 * an ApiError.
 */
export function createPreloadApi(ipc: IpcRendererLike): WaystationApi {
  const listeners = new Map<string, HostEventListener>();
  let nextId = 1;
  ipc.on('waystation:event', (_event, payload) => {
    const p = payload as { subscriptionId?: unknown; event?: unknown } | null;
    if (!p || typeof p.subscriptionId !== 'string') return;
    const listener = listeners.get(p.subscriptionId);
    if (listener) listener(p.event as HostEvent);
  });

  const call = async (channel: string, input: unknown): Promise<unknown> => {
    let result: IpcResult;
    try {
      result = (await ipc.invoke(channel, input ?? {})) as IpcResult;
    } catch (err) {
      throw { name: 'ApiError', code: 'failed', message: err instanceof Error ? err.message : String(err), issues: [] };
    }
    if (result && result.ok === true) return result.value;
    const error = result && result.ok === false ? result.error : { code: 'failed' as const, message: 'the main process gave no answer' };
    throw { name: 'ApiError', code: error.code, message: error.message, issues: error.issues ?? [] };
  };

  const api: Record<string, unknown> = {};
  for (const method of PRELOAD_METHODS) api[method] = (input: unknown) => call(`waystation:${method}`, input);
  api.subscribe = (listener: HostEventListener, lastEventId?: number) => {
    if (typeof listener !== 'function') throw new TypeError('subscribe needs a listener function');
    const subscriptionId = `s${nextId++}`;
    listeners.set(subscriptionId, listener);
    call('waystation:subscribe', lastEventId === undefined ? { subscriptionId } : { subscriptionId, lastEventId }).catch(
      (err: { message?: string }) => {
        listeners.delete(subscriptionId);
        listener({ id: 0, type: 'resync', reason: `the event stream could not be opened: ${err?.message ?? 'unknown error'}` });
      },
    );
    return () => {
      if (!listeners.delete(subscriptionId)) return;
      void call('waystation:unsubscribe', { subscriptionId }).catch(() => {});
    };
  };
  return api as WaystationApi;
}

// Exposed only where the bridge exists: in a sandboxed, context-isolated renderer.
if (contextBridge && typeof contextBridge.exposeInMainWorld === 'function') {
  contextBridge.exposeInMainWorld('waystation', createPreloadApi(ipcRenderer));
}
