/**
 * End-to-end: the built renderer in Chromium, against `waystation serve` on a
 * LangGraph SQLite checkpointer file written by real LangGraph
 * (test/support/langgraph-graphs.ts): the threads listed, the interrupted one
 * in Needs attention, a thread's messages, its history with the fork, a diff
 * (with its words), not a byte of the file changed by reading, then an edit of
 * the state through its dialog, listed in History. Waits are on what the page shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { REPO } from '../support/node-bundle.js';
import { THREADS, weatherOf } from '../support/langgraph-graphs.js';
import { fingerprint, scenarioDatabase } from '../support/langgraph-sqlite.js';
import { ensureRendererBuilt, hasChromium, launchChromium, rowId, rpcClient, serve, SHOTS, stopHost } from './e2e-harness.js';

const LONG = 45_000;

describe.skipIf(!hasChromium)('the inspector on a LangGraph checkpointer, end to end', () => {
  let dir: string;
  let file: string;
  let before: Record<string, string>;
  let host: ChildProcess;
  let url: string;
  let browser: Browser;
  let page: Page;
  const output: string[] = [];

  const rpc = <T>(method: string, input: unknown = {}): Promise<T> => rpcClient(url)<T>(method, input);

  const taskList = () => page.getByRole('listbox', { name: 'Task list' });

  async function openTask(taskId: string) {
    await page.getByRole('searchbox', { name: 'Search tasks' }).fill(taskId);
    await taskList()
      .locator(`[id="${rowId(taskId)}"]`)
      .click();
    await page.locator('.task-meta').getByText(taskId, { exact: true }).waitFor({ timeout: LONG });
  }

  beforeAll(async () => {
    await fs.mkdir(SHOTS, { recursive: true });
    await ensureRendererBuilt();
    ({ dir, file } = await scenarioDatabase());
    before = fingerprint(file);
    ({ host, url } = await serve(path.join(REPO, 'bin/waystation.mjs'), file, ['--quiet'], { ...process.env, NO_COLOR: '1' }, output));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stopHost(host);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('lists the threads, and the interrupted one under Needs attention as waiting for a human', async () => {
    const tasks = await rpc<TaskSummary[]>('listTasks');
    expect(tasks.map((t) => t.task_id).sort()).toEqual(Object.values(THREADS).sort());
    await page.locator('.task-list-footer', { hasText: `${tasks.length} tasks` }).waitFor({ timeout: LONG });
    await page.getByRole('button', { name: /Needs attention/ }).click();
    await page.locator('.task-list-footer', { hasText: `1 of ${tasks.length} tasks` }).waitFor({ timeout: LONG });
    await taskList()
      .locator(`[id="${rowId(THREADS.waiting)}"]`)
      .waitFor();
    await page.getByRole('button', { name: /^All/ }).click();
    await openTask(THREADS.waiting);
    await page.locator('.task-header .badge', { hasText: 'Waiting for a human' }).first().waitFor({ timeout: LONG });
    await page.getByText('Send this email?', { exact: false }).first().waitFor({ timeout: LONG });
    await page.screenshot({ path: path.join(SHOTS, 'langgraph-interrupt.png') });
  });

  it("shows a thread's tool-calling loop as messages", async () => {
    await openTask(THREADS.weather);
    await page.getByRole('tab', { name: /Messages/ }).click();
    const list = page.getByRole('list', { name: 'Messages' });
    await list.waitFor({ timeout: LONG });
    expect(await list.locator('.message-role').allTextContents()).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(await list.textContent()).toContain(`The weather: ${weatherOf('Paris')}`);
    await page.screenshot({ path: path.join(SHOTS, 'langgraph-messages.png') });
  });

  it('walks the history of a forked thread and diffs two of its checkpoints', async () => {
    await openTask(THREADS.edited);
    await page.getByRole('tab', { name: /History/ }).click();
    await page.getByText('update, step 1, from version 2').first().waitFor({ timeout: LONG });
    await page.getByRole('radio', { name: 'Diff from version 2', exact: true }).check();
    await page.getByRole('radio', { name: 'Diff to version 7', exact: true }).check();
    const table = page.getByRole('table', { name: 'Changes from version 2 to version 7' });
    await table.waitFor({ timeout: LONG });
    expect(await table.textContent()).toContain('/history/count');
    // Above the fields, the change in LangGraph's words.
    const words = page.getByRole('region', { name: 'LangGraph changes from version 2 to version 7' });
    await words.waitFor({ timeout: LONG });
    expect(await words.textContent()).toContain('Messages added');
    await page.screenshot({ path: path.join(SHOTS, 'langgraph-history-diff.png') });
  });

  it('changed not a byte of the file while serving it', async () => {
    expect(fingerprint(file)).toEqual(before);
  });

  it('edits the state through the dialog, which shows what it will write, and History lists the new checkpoint', async () => {
    await openTask(THREADS.weatherTwice);
    const versionsBefore = (await rpc<{ versions: unknown[] }>('getHistory', { taskId: THREADS.weatherTwice })).versions.length;
    await page.getByRole('button', { name: 'Edit state…' }).click();
    const dialog = page.getByRole('dialog', { name: /Edit state of version/ });
    await dialog.waitFor({ timeout: LONG });
    await dialog
      .getByLabel('Channel values')
      .fill(JSON.stringify({ messages: [{ role: 'user', content: 'What is the weather in Quito?' }] }));
    await dialog.getByRole('button', { name: 'Preview' }).click();
    const shown = dialog.getByRole('region', { name: 'What will be written' });
    await shown.waitFor({ timeout: LONG });
    expect(await shown.textContent()).toContain('Channel messages');
    expect(await shown.textContent()).toContain('source update');
    // Previewing wrote nothing.
    expect(fingerprint(file)).toEqual(before);
    await page.screenshot({ path: path.join(SHOTS, 'langgraph-edit-state.png') });
    await dialog.getByRole('button', { name: 'Write checkpoint' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });
    await page.getByRole('tab', { name: /History/ }).click();
    await page.getByRole('radio', { name: `Diff to version ${versionsBefore + 1}`, exact: true }).waitFor({ timeout: LONG });
    const history = await rpc<{ versions: { source: { kind: string; note: string } }[] }>('getHistory', { taskId: THREADS.weatherTwice });
    expect(history.versions).toHaveLength(versionsBefore + 1);
    expect(history.versions.at(-1)!.source).toMatchObject({
      kind: 'human-edit',
      note: expect.stringMatching(/^update, step \d+/),
    });
  });
});
