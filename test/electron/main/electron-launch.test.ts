/**
 * The desktop app, launched for real through Playwright's Electron driver.
 *
 * Needs an Electron binary (node_modules/electron/dist). Where none could be
 * downloaded (ELECTRON_SKIP_BINARY_DOWNLOAD=1, no network), the test is
 * skipped, and both its name and a warning in the test run's output say why.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { _electron, type ElectronApplication } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { generateDemoDirectory } from '../../../electron/host/demo-directory.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const electronDist = path.join(repo, 'node_modules', 'electron', 'dist');
const hasElectron = existsSync(electronDist);
const skipReason = `no Electron binary at ${electronDist} (installed with ELECTRON_SKIP_BINARY_DOWNLOAD=1 or without network; \`node node_modules/electron/install.js\` downloads it)`;
const title = hasElectron ? 'the Electron app' : `the Electron app (skipped: ${skipReason})`;
if (!hasElectron) console.warn(`Electron launch tests skipped: ${skipReason}`);

describe.skipIf(!hasElectron)(title, () => {
  let app: ElectronApplication;
  let tmp: string;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-electron-'));
    await promisify(execFile)(process.execPath, [
      path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      path.join(repo, 'tsconfig.electron.json'),
    ]);
    const demo = (await generateDemoDirectory(path.join(tmp, 'demo'))).root;
    const executablePath = (await import('electron')).default as unknown as string;
    app = await _electron.launch({
      executablePath,
      args: [path.join(repo, 'dist-electron', 'electron', 'main', 'main.js'), demo],
      env: { ...process.env, WAYSTATION_USER_DATA: path.join(tmp, 'user-data') } as Record<string, string>,
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  it('opens a window whose page sees window.waystation and no Node', async () => {
    const page = await app.firstWindow();
    await page.waitForLoadState('domcontentloaded');
    expect(page.url()).toMatch(/^waystation:\/\/app\//);
    const seen = await page.evaluate(() => {
      // Runs in the page, where globalThis is its window; the Node-side typecheck has no DOM types.
      const w = globalThis as unknown as Record<string, unknown>;
      return {
        keys: Object.keys((w.waystation ?? {}) as object).sort(),
        require: typeof w.require,
        process: typeof w.process,
        ipc: typeof w.ipcRenderer,
      };
    });
    expect(seen.keys).toEqual([...apiMethods, 'subscribe'].sort());
    expect(seen).toMatchObject({ require: 'undefined', process: 'undefined', ipc: 'undefined' });
  });

  it('lists the demo tasks through the bridge and refuses new windows', async () => {
    const page = await app.firstWindow();
    const ids = await page.evaluate(async () => {
      const api = (globalThis as unknown as { waystation: { listTasks(i: object): Promise<Array<{ task_id: string }>> } }).waystation;
      return (await api.listTasks({})).map((t) => t.task_id);
    });
    expect(ids).toEqual(expect.arrayContaining(['demo-done', 'demo-failed', 'demo-waiting-approval', 'notes-running']));
    expect(await page.evaluate(() => (globalThis as unknown as { open(url: string): unknown }).open('https://example.com') === null)).toBe(
      true,
    );
    expect(app.windows()).toHaveLength(1);
  });

  it('stays on the app origin when the page tries to navigate away', async () => {
    const page = await app.firstWindow();
    const before = page.url();
    // Listen in the main process, after the app's own guard, for the navigation the page is about to try.
    await app.evaluate(({ BrowserWindow }) => {
      const contents = BrowserWindow.getAllWindows()[0].webContents;
      (globalThis as unknown as { navigationSeen: Promise<{ url: string; prevented: boolean }> }).navigationSeen = new Promise(
        (resolve) => {
          contents.once('will-navigate', (event, url) => resolve({ url, prevented: event.defaultPrevented }));
        },
      );
    });
    await page.evaluate(() => {
      (globalThis as unknown as { location: { href: string } }).location.href = 'https://example.com/';
    });
    const seen = await app.evaluate(
      () => (globalThis as unknown as { navigationSeen: Promise<{ url: string; prevented: boolean }> }).navigationSeen,
    );
    expect(seen).toEqual({ url: 'https://example.com/', prevented: true });
    expect(page.url()).toBe(before);
  });
});
