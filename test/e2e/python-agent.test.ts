/**
 * End-to-end: a Python agent registered as a command agent, started from the
 * inspector's New-task dialog in Chromium, watched failing live, and resumed
 * by a person with the Resume button, against the real loopback host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildRenderer } from '../support/renderer-build.js';
import { bundleForNode, REPO } from '../support/node-bundle.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const LONG = 60_000;

const AGENT = `
import os, sys
import waystation
from waystation import PlannedStep

def run(t):
    t.step("greet", lambda: "hello " + t.options["who"])
    def check():
        if not os.path.exists(os.path.join(t.root, "ok")):
            raise RuntimeError("no ok file yet: create it, then resume")
        return "checked"
    t.step("check", check)

agent = waystation.Agent(name="py-greeter", description="greets, then checks",
    options={"type": "object", "properties": {"who": {"type": "string", "default": "world"}}},
    plan=[PlannedStep("greet", "greet"), PlannedStep("check", "check")], goal="greet and check", run=run)
sys.exit(waystation.main(agent))
`;

describe.skipIf(!hasChromium)('a Python agent in the inspector, end to end', () => {
  let tmp: string;
  let bundleDir: string;
  let host: ChildProcess;
  let browser: Browser;
  let page: Page;
  const output: string[] = [];

  beforeAll(async () => {
    if (!existsSync(path.join(REPO, 'dist-renderer/index.html'))) await buildRenderer();
    bundleDir = await bundleForNode(
      {
        main: 'electron/cli/main.ts',
        'worker-main': 'electron/runtime/worker-main.ts',
        'file-check-worker': 'electron/store/file-check-worker.ts',
      },
      'e2e-python-',
    );
    tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-e2e-python-')));
    await fs.writeFile(path.join(tmp, 'greeter.py'), AGENT);
    await fs.writeFile(
      path.join(tmp, 'waystation.config.json'),
      JSON.stringify({ agents: [{ name: 'py-greeter', command: ['python3', 'greeter.py'], description: 'greets, then checks' }] }),
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      WAYSTATION_OFFLINE_LATENCY_MS: '0',
      NO_COLOR: '1',
      PYTHONPATH: path.join(REPO, 'python'),
    };
    delete env.OPENAI_API_KEY;
    host = spawn(process.execPath, [path.join(bundleDir, 'main.js'), 'serve', tmp, '--port', '0', '--trust'], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`waystation serve printed no URL:\n${output.join('')}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output.push(chunk.toString());
        const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(output.join(''));
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      };
      host.stdout!.on('data', onData);
      host.stderr!.on('data', onData);
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (host && host.exitCode === null) {
      host.kill('SIGTERM');
      await new Promise((r) => host.once('exit', r));
    }
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
    if (bundleDir) await fs.rm(bundleDir, { recursive: true, force: true });
  });

  it('starts it from New task, shows it fail live, and a person resumes it to done', async () => {
    await page.getByRole('button', { name: '+ New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.waitFor();
    await dialog.getByRole('combobox', { name: /^Agent/ }).selectOption('py-greeter');
    await dialog.getByRole('textbox', { name: /^Task id/ }).fill('py-e2e');
    await dialog.getByRole('button', { name: 'Start task' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });
    await page.locator('.task-meta').getByText('py-e2e', { exact: true }).waitFor({ timeout: LONG });
    const header = page.locator('.task-header');
    await header.locator('.badge', { hasText: 'Failed' }).first().waitFor({ timeout: LONG });
    expect(await page.getByTestId('agent-tag').textContent()).toContain('py-greeter (command)');

    await fs.writeFile(path.join(tmp, 'ok'), '');
    const resume = page.getByRole('button', { name: /Resume/ });
    await resume.waitFor({ timeout: LONG });
    await resume.click();
    await header.locator('.badge', { hasText: 'Done' }).first().waitFor({ timeout: LONG });
    expect(output.join('')).toContain('check (check): started (attempt 2)');
  }, 180_000);
});
