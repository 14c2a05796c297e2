/**
 * The IPC side of the API: one `ipcMain.handle` per contract method, plus the
 * event subscription. Every message is checked before anything runs: it must
 * come from the main frame of one of the app's own windows, showing the app's
 * own origin; then its input is validated by `dispatch`.
 *
 * Electron's modules are passed in (the shapes below are the parts used), so
 * the handlers are tested without Electron.
 */
import { z } from 'zod';
import { ipcChannel, type IpcResult, type WaystationService } from '../../shared/api/contract.js';
import { ApiError, type ApiErrorBody } from '../../shared/api/api-error.js';
import { apiMethods } from '../../shared/api/api-methods.js';
import { asServiceError, dispatch } from '../../shared/api/dispatch.js';
import { isAppUrl } from './app-protocol.js';

export interface FrameLike {
  url: string;
  parent: FrameLike | null;
}

export interface WebContentsLike {
  id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  once(event: 'destroyed', listener: () => void): unknown;
  on(event: 'did-start-navigation', listener: (details: { isMainFrame: boolean; isSameDocument: boolean }) => void): unknown;
}

export interface InvokeEventLike {
  sender: WebContentsLike;
  senderFrame: FrameLike | null;
}

export interface IpcMainLike {
  handle(channel: string, listener: (event: InvokeEventLike, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export interface IpcOptions {
  /** Whether these web contents belong to one of the app's windows. */
  isOwnWebContents(sender: WebContentsLike): boolean;
  /** Most subscriptions one page may hold at once. */
  maxSubscriptions?: number;
  /**
   * Calls wait for this before they run (its failure included): the app
   * opens its window while the host opens the first directory, and the page's
   * first calls must find that directory open, not an empty host.
   */
  ready?: Promise<unknown>;
  /** Check every answer against the contract's output schemas (default: in development and tests, see outputChecksEnabled). */
  checkOutputs?: boolean;
}

const SubscribeInput = z.object({
  subscriptionId: z.string().min(1).max(64),
  lastEventId: z.number().int().nonnegative().optional(),
});
const UnsubscribeInput = z.object({ subscriptionId: z.string().min(1).max(64) });

/** Why a sender is refused, or null when it may call. */
export function refusalOf(event: InvokeEventLike, opts: IpcOptions): string | null {
  const frame = event.senderFrame;
  if (!frame) return 'the sending frame is gone';
  if (frame.parent !== null) return 'the message comes from a sub-frame';
  if (!isAppUrl(frame.url)) return `the message comes from ${JSON.stringify(frame.url.slice(0, 100))}, not the app`;
  if (!opts.isOwnWebContents(event.sender)) return 'the message comes from a window the app did not open';
  return null;
}

const failure = (error: ApiError): IpcResult => ({ ok: false, error: error.toBody().error as ApiErrorBody['error'] });

/**
 * Register the handlers; returns a function that removes them and drops
 * every subscription.
 */
export function registerIpcHandlers(ipcMain: IpcMainLike, service: WaystationService, opts: IpcOptions): () => void {
  const maxSubscriptions = opts.maxSubscriptions ?? 32;
  /** Web contents id -> subscription id -> unsubscribe. */
  const subscriptions = new Map<number, Map<string, () => void>>();
  const tracked = new Set<number>();

  const dropAll = (id: number) => {
    const subs = subscriptions.get(id);
    if (!subs) return;
    for (const off of subs.values()) off();
    subscriptions.delete(id);
  };

  const track = (sender: WebContentsLike) => {
    if (tracked.has(sender.id)) return;
    tracked.add(sender.id);
    sender.once('destroyed', () => {
      dropAll(sender.id);
      tracked.delete(sender.id);
    });
    // A reload or navigation replaces the page: its listeners are gone, so are its subscriptions.
    sender.on('did-start-navigation', (details) => {
      if (details.isMainFrame && !details.isSameDocument) dropAll(sender.id);
    });
  };

  const guarded =
    (run: (event: InvokeEventLike, raw: unknown) => Promise<unknown> | unknown) =>
    async (event: InvokeEventLike, raw: unknown): Promise<IpcResult> => {
      const refusal = refusalOf(event, opts);
      if (refusal) return failure(new ApiError('forbidden', `refused: ${refusal}`));
      if (opts.ready) await opts.ready.catch(() => {});
      try {
        return { ok: true, value: await run(event, raw) };
      } catch (err) {
        return failure(asServiceError(err));
      }
    };

  for (const method of apiMethods) {
    ipcMain.handle(
      ipcChannel(method),
      guarded((_event, raw) => dispatch(service, method, raw, opts.checkOutputs)),
    );
  }

  ipcMain.handle(
    ipcChannel('subscribe'),
    guarded((event, raw) => {
      const parsed = SubscribeInput.safeParse(raw ?? {});
      if (!parsed.success)
        throw new ApiError('invalid-input', `invalid subscription: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
      const { subscriptionId, lastEventId } = parsed.data;
      const sender = event.sender;
      track(sender);
      let subs = subscriptions.get(sender.id);
      if (!subs) subscriptions.set(sender.id, (subs = new Map()));
      if (subs.has(subscriptionId)) throw new ApiError('conflict', `subscription ${subscriptionId} already exists`);
      if (subs.size >= maxSubscriptions) throw new ApiError('forbidden', `a page may hold at most ${maxSubscriptions} subscriptions`);
      const off = service.subscribe((hostEvent) => {
        if (sender.isDestroyed()) return dropAll(sender.id);
        sender.send(ipcChannel('event'), { subscriptionId, event: hostEvent });
      }, lastEventId);
      subs.set(subscriptionId, off);
      return null;
    }),
  );

  ipcMain.handle(
    ipcChannel('unsubscribe'),
    guarded((event, raw) => {
      const parsed = UnsubscribeInput.safeParse(raw ?? {});
      if (!parsed.success) throw new ApiError('invalid-input', 'invalid unsubscription');
      const subs = subscriptions.get(event.sender.id);
      subs?.get(parsed.data.subscriptionId)?.();
      subs?.delete(parsed.data.subscriptionId);
      return null;
    }),
  );

  return () => {
    for (const method of apiMethods) ipcMain.removeHandler(ipcChannel(method));
    ipcMain.removeHandler(ipcChannel('subscribe'));
    ipcMain.removeHandler(ipcChannel('unsubscribe'));
    for (const id of [...subscriptions.keys()]) dropAll(id);
  };
}
