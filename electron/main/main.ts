/**
 * The Electron main process: the window, the host service behind it, and a
 * clean quit.
 *
 * The folder opened at start is, in order: a directory given on the command
 * line, the last one used, or the demo directory, generated in userData on
 * first start. Tasks started from the window run in worker processes owned
 * by this process, so a reload of the renderer does not touch them; on quit
 * the watcher stops and the workers are stopped, their tasks resumable.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, net, Notification, protocol, session, type WebContents } from 'electron';
import { generateDemoDirectory } from '../host/demo-directory.js';
import { createHostRunner } from '../host/host-runner.js';
import { holdHostHeapGrowth } from '../host/host-heap.js';
import { HostService } from '../host/host-service.js';
import { PathOutsideRootError, resolveInsideRoot } from '../store/path-confinement.js';
import { defaultRendererDir } from '../host/web-server.js';
import { APP_ENTRY_URL, APP_HOST, APP_SCHEME } from './app-protocol.js';
import { PAGE_CSP } from '../../shared/api/page-csp.js';
import { registerIpcHandlers } from './ipc-handlers.js';
import { loadSettings } from './settings.js';
import { denyPermissions, guardWebContents, secureWebPreferences } from './window-security.js';
import { messageOf } from '../../shared/api/error-codes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const rendererDir = defaultRendererDir();

// Tests and side-by-side profiles keep their settings and demo directory apart.
if (process.env.WAYSTATION_USER_DATA) app.setPath('userData', path.resolve(process.env.WAYSTATION_USER_DATA));

// Must happen before `ready`: the app's pages get a standard, secure origin of their own.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
app.enableSandbox();

if (!app.requestSingleInstanceLock()) app.quit();

let mainWindow: BrowserWindow | null = null;
let service: HostService | null = null;
let quitting = false;

/** The first command-line argument that names an existing directory. */
function directoryFromArgv(argv: readonly string[]): string | null {
  for (const arg of argv.slice(app.isPackaged ? 1 : 2)) {
    if (arg.startsWith('-') || arg === app.getAppPath()) continue;
    const candidate = path.resolve(arg);
    try {
      if (statSync(candidate).isDirectory()) return candidate;
    } catch {
      // Not a directory: Electron's own arguments end up here too.
    }
  }
  return null;
}

/** Serve waystation://app/* from dist-renderer/, confined to it. */
function registerAppProtocol(): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== APP_HOST) return new Response('not found', { status: 404 });
    let file: string;
    try {
      const relative = decodeURIComponent(url.pathname).replace(/^\//, '') || 'index.html';
      file = resolveInsideRoot(rendererDir, relative);
    } catch (err) {
      return new Response(err instanceof PathOutsideRootError ? 'forbidden' : 'bad request', {
        status: err instanceof PathOutsideRootError ? 403 : 400,
      });
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      if (path.extname(file) !== '') return new Response('not found', { status: 404 });
      file = path.join(rendererDir, 'index.html');
    }
    const response = await net.fetch(pathToFileURL(file).toString());
    const headers = new Headers(response.headers);
    if (file.endsWith('.html')) headers.set('Content-Security-Policy', PAGE_CSP);
    headers.set('X-Content-Type-Options', 'nosniff');
    return new Response(response.body, { status: response.status, headers });
  });
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 820,
    show: false,
    title: 'Waystation',
    webPreferences: secureWebPreferences(path.join(here, 'preload.cjs')),
  });
  guardWebContents(win.webContents);
  win.once('ready-to-show', () => win.show());
  if (!existsSync(path.join(rendererDir, 'index.html'))) {
    void dialog.showMessageBox(win, {
      type: 'warning',
      message: 'The renderer is not built',
      detail: 'Run `npm run build` and start again.',
    });
  }
  void win.loadURL(APP_ENTRY_URL);
  return win;
}

async function start(): Promise<void> {
  denyPermissions(session.defaultSession);
  registerAppProtocol();
  const settings = await loadSettings(app.getPath('userData'));
  holdHostHeapGrowth();
  service = new HostService({
    host: 'desktop',
    // Forked workers run the Electron binary as plain Node.
    runner: createHostRunner({ env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } }),
    recent: settings,
    // Main-process notifications: the renderer's sandbox denies the Notification permission.
    notify: ({ title, body }) => {
      if (!Notification.isSupported()) return false;
      const n = new Notification({ title, body });
      n.on('click', () => {
        if (!mainWindow) return;
        if (mainWindow.isMinimized()) mainWindow.restore();
        mainWindow.focus();
      });
      n.show();
      return true;
    },
    chooseDirectory: async ({ readOnly }) => {
      const options = {
        title: readOnly ? 'Open a checkpoint directory read-only' : 'Open a checkpoint directory',
        properties: ['openDirectory' as const, 'createDirectory' as const],
      };
      const result = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options);
      return result.canceled ? null : (result.filePaths[0] ?? null);
    },
  });
  // Whichever it is, a directory a person has not trusted opens read-only, with the trust prompt (directory-trust.ts):
  // one given on the command line or by a second launch runs nothing until trusted.
  const initial =
    directoryFromArgv(process.argv) ??
    (await settings.last()) ??
    (await generateDemoDirectory(path.join(app.getPath('userData'), 'demo-checkpoints'))).root;
  // The window's renderer process starts while the directory opens; its calls wait for the open (`ready`).
  // In the mode it was last opened in: a folder opened read-only stays so until opened with Open folder….
  const opening = service.open(initial);
  registerIpcHandlers(ipcMain, service, {
    isOwnWebContents: (sender) => mainWindow !== null && !mainWindow.isDestroyed() && sender.id === mainWindow.webContents.id,
    ready: opening,
  });
  mainWindow = createWindow();
  mainWindow.on('closed', () => {
    mainWindow = null;
  });
  await opening;
}

app.on('second-instance', (_event, argv) => {
  const dir = directoryFromArgv(argv);
  if (dir && service) void service.openDirectory({ path: dir }).catch(() => service?.open(dir));
  if (mainWindow) {
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  }
});

// Any contents created later (devtools aside) get the same guards.
app.on('web-contents-created', (_event, contents: WebContents) => guardWebContents(contents));

app.on('window-all-closed', () => app.quit());

app.on('before-quit', (event) => {
  if (quitting || !service) return;
  // Stop the watcher and the workers before the process goes.
  event.preventDefault();
  quitting = true;
  void service.close().finally(() => app.quit());
});

app
  .whenReady()
  .then(start)
  .catch((err: unknown) => {
    dialog.showErrorBox('Waystation could not start', messageOf(err));
    app.exit(1);
  });
