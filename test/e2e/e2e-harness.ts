/**
 * What every end-to-end file shares: the built renderer (rebuilt when its
 * sources are newer), the CLI bundled to plain JavaScript, a `waystation demo`
 * directory, one loopback host over it and one Chromium.
 *
 * The CLI and its worker are bundled, as the packaged app ships them: run
 * from sources, every worker process would first compile the runtime through
 * tsx, which on a loaded machine took long enough to time scenarios out. The
 * offline model answers without its simulated latency for the same reason.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { buildRenderer } from '../support/renderer-build.js';
import { bundleForNode, REPO } from '../support/node-bundle.js';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const SHOTS = path.join(REPO, 'test-results/screenshots');

/** A task row's DOM id, as the task list sets it. */
export const rowId = (taskId: string) => `task-row-${taskId.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/** The newest modification time of any file under `dir` (0 when it does not exist). */
async function newestMtime(dir: string): Promise<number> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  let newest = 0;
  for (const e of entries) {
    if (!e.isFile()) continue;
    const stat = await fs.stat(path.join(e.parentPath, e.name)).catch(() => null);
    if (stat && stat.mtimeMs > newest) newest = stat.mtimeMs;
  }
  return newest;
}

/**
 * Whether dist-renderer/ is missing or older than what it is built from: the
 * renderer's sources and the shared code it imports. Testing an old build
 * would pass or fail for code that is no longer there.
 */
async function rendererBuildIsStale(): Promise<boolean> {
  const built = await fs.stat(path.join(REPO, 'dist-renderer/index.html')).catch(() => null);
  if (!built) return true;
  const sources = Math.max(await newestMtime(path.join(REPO, 'renderer')), await newestMtime(path.join(REPO, 'shared')));
  return sources > built.mtimeMs;
}

// Two e2e files start at once under vitest's forks: one build, the other waits for it.
const BUILD_LOCK = path.join(REPO, '.waystation-tmp', 'renderer-build.lock');

/** Build dist-renderer/ when it is stale; one process builds while the others wait for its lock to go. */
export async function ensureRendererBuilt(): Promise<void> {
  await fs.mkdir(path.dirname(BUILD_LOCK), { recursive: true });
  for (;;) {
    if (!(await rendererBuildIsStale())) return;
    const lock = await fs.open(BUILD_LOCK, 'wx').catch(() => null);
    if (lock) {
      try {
        // Another process may have finished between the check and the lock.
        if (await rendererBuildIsStale()) await buildRenderer();
      } finally {
        await lock.close();
        await fs.rm(BUILD_LOCK, { force: true });
      }
      return;
    }
    const stat = await fs.stat(BUILD_LOCK).catch(() => null);
    // A lock left by a killed run is older than any build takes.
    if (stat && Date.now() - stat.mtimeMs > 180_000) await fs.rm(BUILD_LOCK, { force: true });
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `waystation serve DIR ...args` from the bundled CLI, once it printed its URL; what it prints goes to `output`. */
export async function serve(
  cli: string,
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  output: string[],
): Promise<{ host: ChildProcess; url: string }> {
  const host = spawn(process.execPath, [cli, 'serve', dir, '--port', '0', ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`waystation serve printed no URL:\n${output.join('')}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const m = output.join('').match(/http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    };
    host.stdout!.on('data', onData);
    host.stderr!.on('data', onData);
    host.once('exit', (code) => reject(new Error(`waystation serve exited with ${code}:\n${output.join('')}`)));
  });
  return { host, url };
}

/** Stop a host started by `serve` and wait for it to exit. */
export async function stopHost(host: ChildProcess | undefined): Promise<void> {
  if (!host || host.exitCode !== null || host.signalCode !== null) return;
  const exited = new Promise((r) => host.once('exit', r));
  host.kill('SIGTERM');
  await exited;
}

/** Calls the API of the host at `url` (its token taken from the URL), as a second client would; a refusal throws with its body. */
export function rpcClient(url: string): <T>(method: string, input?: unknown) => Promise<T> {
  const u = new URL(url);
  return async <T>(method: string, input: unknown = {}): Promise<T> => {
    const res = await fetch(`${u.origin}/api/rpc/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.searchParams.get('token')}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    const body = await res.json();
    if (!res.ok) throw new Error(`${method}: ${JSON.stringify(body)}`);
    return body as T;
  };
}

/** Debian's Chromium, headless, without the background work that would compete with the page for the cores. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * Replace what a CodeMirror editor holds, the way a person does: select all
 * with the keyboard (CodeMirror's own command), then type. `locator.fill`
 * selects through the DOM, which CodeMirror picks up a moment later; when the
 * text arrived first it was added to the old text instead of replacing it.
 * The keyboard has the same race, narrower: the page's selection can show the
 * whole text before CodeMirror has read it from its `selectionchange` event,
 * and text typed then lands at the old cursor. So the page is given a frame to
 * deliver that event before typing, and when the editor still ends up holding
 * something else, select-all and typing are simply done again: each round
 * replaces everything once the selection takes, so the editor converges on the
 * text rather than accumulating it.
 */
export async function replaceEditorText(page: Page, editor: Locator, text: string, timeoutMs = 15_000): Promise<void> {
  const flat = (t: string | null) => (t ?? '').replace(/\s+/g, '');
  const deadline = Date.now() + timeoutMs;
  const pause = () => new Promise((r) => setTimeout(r, 50));
  const nextFrame = () => page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');
  let last = { focused: false, selected: '', held: '' };
  while (Date.now() <= deadline) {
    await editor.click();
    const focused = (await page.evaluate(
      'document.activeElement?.closest(".cm-editor")?.classList.contains("cm-focused") === true',
    )) as boolean;
    let selected = '';
    if (focused) {
      await page.keyboard.press('ControlOrMeta+A');
      await nextFrame();
      selected = (await page.evaluate('document.getSelection()?.toString() ?? ""')) as string;
      if (flat(selected) === flat(await editor.textContent())) {
        await page.keyboard.insertText(text);
        // The editor re-renders after the input; give it a few frames before judging.
        for (let i = 0; i < 10; i++) {
          if (flat(await editor.textContent()) === flat(text)) return;
          await nextFrame();
        }
      }
    }
    last = { focused, selected, held: (await editor.textContent()) ?? '' };
    await pause();
  }
  throw new Error(
    `the editor holds ${JSON.stringify(last.held.slice(0, 80))}, not the text typed ` +
      `(focused: ${String(last.focused)}, ${JSON.stringify(last.selected.slice(0, 80))} selected at the last try)`,
  );
}

/** A failed test leaves a picture of what the page showed, beside the regular screenshots (`failed-<test name>.png`). */
export async function screenshotIfFailed(
  ctx: { task: { name: string; result?: { state?: string } } },
  page: Page | undefined,
): Promise<void> {
  if (ctx.task.result?.state !== 'fail' || !page) return;
  const name = ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await page.screenshot({ path: path.join(SHOTS, `failed-${name}.png`) }).catch(() => undefined);
}

export interface E2eWorld {
  tmp: string;
  bundleDir: string;
  cli: string;
  root: string;
  host: ChildProcess;
  url: string;
  browser: Browser;
  /** Everything the host printed, and the page errors, for failure messages. */
  output: string[];
  /** The environment the host (and so its workers) runs with. */
  env: NodeJS.ProcessEnv;
  /** Call the host's API directly, as a second client would. */
  rpc<T>(method: string, input?: unknown): Promise<T>;
  /** A new page of the browser at this size, its errors added to `output`; at the app once `goto` is true. */
  openPage(viewport?: { width: number; height: number }, goto?: boolean): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Build, bundle, make a demo directory and serve it; launch Chromium.
 *
 * The host resumes the demo's interrupted auto-mode task on opening; this
 * returns once that task has run to done, so every file starts from the same
 * directory.
 */
export async function startWorld(opts: {
  prefix: string;
  hostArgs?: string[];
  /** Set over the host's environment (a slower offline model, say), after the defaults. */
  env?: NodeJS.ProcessEnv;
  /** Add to the demo directory before it is served (agents to register: a trust given with --trust covers them). */
  prepare?: (root: string) => Promise<void>;
}): Promise<E2eWorld> {
  await fs.mkdir(SHOTS, { recursive: true });
  await ensureRendererBuilt();
  const bundleDir = await bundleForNode(
    {
      main: 'electron/cli/main.ts',
      'worker-main': 'electron/runtime/worker-main.ts',
      'file-check-worker': 'electron/store/file-check-worker.ts',
      'write-version': 'test/e2e/write-version.ts',
    },
    opts.prefix,
  );
  const cli = path.join(bundleDir, 'main.js');
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-e2e-'));
  let root = path.join(tmp, 'demo');
  const demo = spawnSync(process.execPath, [cli, 'demo', root], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
  if (demo.status !== 0) throw new Error(`waystation demo failed (${demo.status}): ${demo.stderr || demo.stdout}`);
  root = await fs.realpath(root);
  await opts.prepare?.(root);

  // Workers inherit this environment: the offline model, answering at once.
  const env: NodeJS.ProcessEnv = { ...process.env, WAYSTATION_OFFLINE_LATENCY_MS: '0', NO_COLOR: '1' };
  delete env.OPENAI_API_KEY;
  delete env.SKIP_FAILURE;
  Object.assign(env, opts.env ?? {});
  const output: string[] = [];
  const { host, url } = await serve(cli, root, opts.hostArgs ?? [], env, output);

  const rpc = rpcClient(url);
  const browser = await launchChromium();

  const resumedBy = Date.now() + 60_000;
  while ((await rpc<TaskSummary[]>('listTasks')).find((t) => t.task_id === 'notes-running')?.display_status !== 'done') {
    if (Date.now() > resumedBy) throw new Error(`the demo's notes-running task did not run to done:\n${output.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  const world: E2eWorld = {
    tmp,
    bundleDir,
    cli,
    root,
    host,
    url,
    browser,
    output,
    env,
    rpc,
    async openPage(viewport = { width: 1400, height: 900 }, goto = true) {
      const page = await browser.newPage({ viewport });
      page.on('pageerror', (err) => output.push(`[pageerror] ${err.message}\n`));
      if (goto) await page.goto(url);
      return page;
    },
    async close() {
      await browser.close();
      await stopHost(world.host);
      await fs.rm(tmp, { recursive: true, force: true });
      await fs.rm(bundleDir, { recursive: true, force: true });
    },
  };
  return world;
}
