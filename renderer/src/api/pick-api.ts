/**
 * Choose the API implementation for this page.
 *
 * Inside Electron the preload exposes `window.waystation` (IPC). In a browser
 * the page was opened from the loopback host with `?token=...`, and we talk
 * HTTP to the page's own origin.
 */
import type { WaystationApi } from '../../../shared/api/contract.js';
import { createHttpApi } from './http-client.js';

declare global {
  interface Window {
    waystation?: WaystationApi;
  }
}

export type ApiChoice = { api: WaystationApi; kind: 'ipc' | 'http' } | { api: null; problem: string };

/** Return the API for the current page, or a problem sentence explaining why there is none. */
export function pickApi(win: Window = window): ApiChoice {
  if (win.waystation) return { api: win.waystation, kind: 'ipc' };
  const url = new URL(win.location.href);
  const token = url.searchParams.get('token') ?? win.sessionStorage?.getItem('waystation-token') ?? null;
  if (!token || url.protocol === 'file:') {
    return {
      api: null,
      problem:
        'This page has no access token. Open the URL printed by `waystation serve DIR` (it ends in ?token=...), or start the desktop app.',
    };
  }
  // Keep the token for reloads after the URL is tidied, but never in localStorage: it dies with the tab.
  win.sessionStorage?.setItem('waystation-token', token);
  return { api: createHttpApi({ baseUrl: url.origin, token }), kind: 'http' };
}
