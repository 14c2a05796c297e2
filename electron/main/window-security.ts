/**
 * The security settings of the app's window (Electron's security checklist),
 * kept apart from main.ts so that tests can check them with fakes.
 */
import { isAppUrl } from './app-protocol.js';

/** webPreferences of every app window. */
export function secureWebPreferences(preload: string) {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
    safeDialogs: true,
  } as const;
}

export interface GuardedEvent {
  preventDefault(): void;
}

/** The parts of WebContents the guards attach to. */
export interface GuardableWebContents {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
  on(event: 'will-navigate' | 'will-redirect', listener: (event: GuardedEvent, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: GuardedEvent) => void): unknown;
}

/** The parts of Session the guards attach to. */
export interface GuardableSession {
  setPermissionRequestHandler(handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
  setPermissionCheckHandler(handler: () => boolean): void;
}

/**
 * Lock down a window's contents: no new windows, no navigation away from the
 * app's origin, no webviews. Links the user clicks are not opened anywhere.
 */
export function guardWebContents(contents: GuardableWebContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const stayHome = (event: GuardedEvent, url: string) => {
    if (!isAppUrl(url)) event.preventDefault();
  };
  contents.on('will-navigate', stayHome);
  contents.on('will-redirect', stayHome);
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** Deny every permission request (camera, notifications, ...): the app needs none. */
export function denyPermissions(session: GuardableSession): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}
