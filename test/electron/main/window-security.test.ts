import { describe, expect, it } from 'vitest';
import { isAppUrl } from '../../../electron/main/app-protocol.js';
import { denyPermissions, guardWebContents, secureWebPreferences, type GuardedEvent } from '../../../electron/main/window-security.js';

describe('window security', () => {
  it('turns on context isolation and the sandbox, and Node integration off everywhere', () => {
    const prefs = secureWebPreferences('/app/preload.cjs');
    expect(prefs).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('denies new windows, navigation and redirects away from the app, and webviews', () => {
    let openHandler: ((d: { url: string }) => { action: string }) | null = null;
    const listeners: Record<string, (event: GuardedEvent, url?: string) => void> = {};
    guardWebContents({
      setWindowOpenHandler: (h) => void (openHandler = h),
      on: ((event: string, l: (event: GuardedEvent, url?: string) => void) => void (listeners[event] = l)) as never,
    });
    expect(openHandler!({ url: 'https://example.com' })).toEqual({ action: 'deny' });
    expect(openHandler!({ url: 'waystation://app/index.html' })).toEqual({ action: 'deny' });
    const prevented = (event: string, url?: string) => {
      let stopped = false;
      listeners[event]({ preventDefault: () => (stopped = true) }, url);
      return stopped;
    };
    expect(prevented('will-navigate', 'https://evil.example/')).toBe(true);
    expect(prevented('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(prevented('will-redirect', 'http://127.0.0.1:9/')).toBe(true);
    expect(prevented('will-navigate', 'waystation://app/index.html#/tasks/t1')).toBe(false);
    expect(prevented('will-attach-webview')).toBe(true);
  });

  it('denies every permission request and check', () => {
    let request: ((c: unknown, p: string, cb: (g: boolean) => void) => void) | null = null;
    let check: (() => boolean) | null = null;
    denyPermissions({ setPermissionRequestHandler: (h) => void (request = h), setPermissionCheckHandler: (h) => void (check = h) });
    const answers: boolean[] = [];
    for (const p of ['media', 'notifications', 'geolocation', 'clipboard-read']) request!({}, p, (g) => answers.push(g));
    expect(answers).toEqual([false, false, false, false]);
    expect(check!()).toBe(false);
  });

  it('recognises only the app origin as the app', () => {
    expect(isAppUrl('waystation://app/index.html')).toBe(true);
    expect(isAppUrl('waystation://app.evil/index.html')).toBe(false);
    expect(isAppUrl('waystation://evil/app')).toBe(false);
    expect(isAppUrl('https://app/')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });
});
