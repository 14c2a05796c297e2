/**
 * End-to-end: the built renderer in Chromium, against the real loopback host
 * (`waystation serve`) over a real temporary checkpoint directory made by
 * `waystation demo`, with the real runner behind it.
 *
 * The harness (e2e-harness.ts) bundles the CLI and starts the host and the
 * browser. Waits are on what the page shows, never on fixed delays.
 *
 * Scenarios run in order on one browser and one host; each leaves the
 * directory in the state the next one expects. A screenshot of each main
 * view, in light and dark, lands in test-results/screenshots/.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import type { TaskDetail } from '../../shared/api/contract.js';
import { REPO } from '../support/node-bundle.js';
import { openStore } from '../../electron/store/directory-store.js';
import { makeCheckpoint } from '../electron/store/store-test-helpers.js';
import { holdLease } from '../support/hold-lease.js';
import {
  CHROMIUM,
  hasChromium,
  replaceEditorText,
  rowId,
  serve,
  SHOTS,
  startWorld,
  stopHost,
  type E2eWorld,
  screenshotIfFailed,
} from './e2e-harness.js';

const LONG = 45_000;

if (!hasChromium) {
  console.warn(`e2e inspector tests skipped: no Chromium at ${CHROMIUM} (CI installs it; apt-get install chromium)`);
}

describe.skipIf(!hasChromium)('the inspector, end to end', () => {
  let world: E2eWorld;
  let bundleDir: string;
  let cli: string;
  let root: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  let hostOutput: string[] = [];
  const rpc = <T>(method: string, input: unknown = {}) => world.rpc<T>(method, input);

  async function shoot(name: string) {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.screenshot({ path: path.join(SHOTS, `${name}-light.png`) });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(SHOTS, `${name}-dark.png`) });
    await page.emulateMedia({ colorScheme: 'light' });
  }

  const taskList = () => page.getByRole('listbox', { name: 'Task list' });
  const header = () => page.locator('.task-header');

  async function openTask(taskId: string) {
    const search = page.getByRole('searchbox', { name: 'Search tasks' });
    await search.fill(taskId);
    await taskList()
      .locator(`[id="${rowId(taskId)}"]`)
      .click();
    await page.locator('.task-meta').getByText(taskId, { exact: true }).waitFor();
  }

  /** Wait until the open task's header badge shows `label`. */
  async function waitForStatus(label: string, timeout = LONG) {
    await header().locator('.badge', { hasText: label }).first().waitFor({ timeout });
  }

  async function tasksWith(status: TaskSummary['display_status']): Promise<TaskSummary[]> {
    return (await rpc<TaskSummary[]>('listTasks')).filter((t) => t.display_status === status);
  }

  beforeAll(async () => {
    await fs.mkdir(SHOTS, { recursive: true });
    // Pictures of failures belong to this run only: one left from an earlier run would point at a fixed problem.
    for (const name of await fs.readdir(SHOTS)) {
      if (name.startsWith('failed-') && name.endsWith('.png')) await fs.rm(path.join(SHOTS, name), { force: true });
    }
    world = await startWorld({ prefix: 'e2e-' });
    ({ bundleDir, cli, root, url, browser, output: hostOutput } = world);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => hostOutput.push(`[pageerror] ${err.message}\n`));
    await page.goto(url);
  }, 180_000);

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await world?.close();
  });

  it('lists the demo tasks with their status, and filters to what needs attention', async () => {
    const tasks = await rpc<TaskSummary[]>('listTasks');
    expect(tasks.length).toBeGreaterThan(0);
    await taskList().getByRole('option').first().waitFor();
    await page.locator('.task-list-footer', { hasText: `${tasks.length} tasks` }).waitFor();
    await shoot('task-list');

    await page.getByRole('button', { name: /Needs attention/ }).click();
    // Needs attention: failed, interrupted, waiting on a person, drifted or unreadable, or files with error-level problems.
    const attentionStatuses = ['failed', 'interrupted', 'waiting_approval', 'waiting_human', 'drifted', 'unreadable'];
    const attention = tasks.filter((t) => attentionStatuses.includes(t.display_status) || t.problems.some((p) => p.severity === 'error'));
    expect(attention.length).toBeGreaterThan(0);
    expect(attention.length).toBeLessThan(tasks.length);
    await page.locator('.task-list-footer', { hasText: `${attention.length} of ${tasks.length} tasks` }).waitFor();
    const shownIds = await taskList()
      .getByRole('option')
      .evaluateAll((rows) => rows.map((r) => (r as unknown as { id: string }).id));
    expect(shownIds.sort()).toEqual(attention.map((t) => rowId(t.task_id)).sort());
    await page.getByRole('button', { name: /^All/ }).click();

    // Keyboard: focus the list, move down, and the task opens.
    await taskList().focus();
    await page.keyboard.press('Home');
    await page.getByRole('heading', { level: 1 }).waitFor();
    await shoot('task-view');
  });

  it('shows the directory it serves, offers no folder chooser, and lists the drifted demo task as drifted', async () => {
    await expect.poll(() => page.getByTestId('directory').textContent()).toBe(root);
    expect(await page.getByRole('button', { name: 'Open folder…' }).count()).toBe(0);
    // The listing's stat check sees the summary edited after the run; the API and the list agree.
    const listed = await rpc<TaskSummary[]>('listTasks');
    expect(listed.find((t) => t.task_id === 'notes-drifted')?.display_status).toBe('drifted');
    expect(listed.find((t) => t.task_id === 'notes-done')?.display_status).toBe('done');
    await page.getByRole('searchbox', { name: 'Search tasks' }).fill('notes-');
    await taskList()
      .getByRole('option', { name: /^notes-drifted\b.*Drifted/ })
      .waitFor();
    await taskList()
      .getByRole('option', { name: /^notes-done\b.*Done/ })
      .waitFor();
    await shoot('task-list-drifted');

    // Opening the task verifies its artifacts in full and shows which one changed.
    await openTask('notes-drifted');
    await waitForStatus('Drifted');
    await page.getByRole('tab', { name: /Artifacts/ }).click();
    await page.getByRole('button', { name: 'Re-verify' }).waitFor({ timeout: LONG });
    await page.getByText('Some artifacts no longer match what the checkpoint recorded.').waitFor();
    await shoot('drifted-artifacts');
  });

  it('shows the conversation history of a task, one message per entry with its role', async () => {
    const { from, messages } = await rpc<{ from: number; messages: { role: string; content: string }[] }>('getMessages', {
      taskId: 'notes-done',
    });
    expect(from).toBe(0);
    expect(messages.length).toBeGreaterThan(0);
    await openTask('notes-done');
    await page.getByRole('tab', { name: /Messages/ }).click();
    const list = page.getByRole('list', { name: 'Messages' });
    await list.waitFor({ timeout: LONG });
    expect(await list.getByRole('listitem').count()).toBe(messages.length);
    expect(await list.locator('.message-role').allTextContents()).toEqual(messages.map((m) => m.role));
    await shoot('messages');
  });

  it('opens an older version as the whole task view, read-only, and goes back to the latest', async () => {
    const detail = await rpc<TaskDetail>('getTask', { taskId: 'demo-done' });
    const latest = detail.latest_version!;
    expect(latest).toBeGreaterThan(2);
    const older = await rpc<TaskDetail>('getTask', { taskId: 'demo-done', version: 2 });
    await openTask('demo-done');
    const picker = page.getByRole('combobox', { name: 'Version shown' });
    await picker.selectOption('2');
    const banner = page.getByRole('status', { name: 'Older version' });
    await banner.waitFor({ timeout: LONG });
    expect(await banner.textContent()).toContain(`Viewing version 2 of ${latest}`);
    // The whole view is version 2: its phase and its plan, not the latest's.
    await page.locator('.task-progress-row .phase', { hasText: older.checkpoint!.phase }).waitFor();
    expect(await page.getByRole('progressbar', { name: 'Plan progress' }).getAttribute('aria-valuenow')).toBe(
      String(older.checkpoint!.plan.filter((s) => s.status === 'done' || s.status === 'skipped').length),
    );
    await shoot('older-version');
    await banner.getByRole('button', { name: 'Back to latest' }).click();
    await banner.waitFor({ state: 'detached', timeout: LONG });
    expect(await picker.inputValue()).toBe(String(latest));
  });

  it('edits a failed step: an invalid value is refused inline, a valid one is saved, and the resume finishes', async () => {
    const failed = (await tasksWith('failed')).find((t) => t.step_counts.failed > 0);
    expect(failed, 'the demo directory has a failed task').toBeTruthy();
    const taskId = failed!.task_id;
    const detail = await rpc<TaskDetail>('getTask', { taskId });
    const step = detail.checkpoint!.plan.find((s) => s.status === 'failed')!;
    const versionBefore = detail.version!;

    await openTask(taskId);
    await waitForStatus('Failed');
    await page.getByRole('tab', { name: /Plan/ }).click();
    await page.getByRole('button', { name: `Edit result of step ${step.name || step.id}`, exact: true }).click();
    const editor = page.getByRole('textbox', { name: `New result for step ${step.name || step.id}` });
    await editor.waitFor();

    // A value of the wrong type: the error shows inline and Save stays disabled.
    await replaceEditorText(page, editor, JSON.stringify(wrongValueFor(step.output_schema)));
    const errors = page.getByRole('alert', { name: 'Validation errors' });
    await errors.waitFor();
    expect(await errors.textContent()).toMatch(/expected|must|missing/);
    const save = page.getByRole('button', { name: 'Save as new version' });
    expect(await save.isDisabled()).toBe(true);
    await shoot('step-editor-invalid');
    expect((await rpc<TaskDetail>('getTask', { taskId })).latest_version).toBe(versionBefore);

    await replaceEditorText(page, editor, JSON.stringify(validValueFor(step.output_schema), null, 2));
    await page.getByRole('status').filter({ hasText: 'Valid value' }).waitFor();
    await save.click();
    await editor.waitFor({ state: 'detached', timeout: LONG });
    const afterEdit = await rpc<TaskDetail>('getTask', { taskId });
    expect(afterEdit.latest_version).toBe(versionBefore + 1);
    expect(afterEdit.checkpoint!.source.kind).toBe('human-edit');

    const resume = page.getByRole('button', { name: /Resume/ });
    await resume.waitFor({ timeout: LONG });
    await resume.click();
    await waitForStatus('Done', 90_000);
    await shoot('task-resumed-done');
  }, 150_000);

  it('approves a pending resume and watches the task continue to done', async () => {
    // The demo's model timed out at this task's last step: the approved rerun finds it answering.
    const taskId = 'demo-waiting-approval';
    const before = await rpc<TaskDetail>('getTask', { taskId });
    expect(before.summary.display_status).toBe('waiting_approval');
    const rerun = before.checkpoint!.recovery.pending_approval!.plan.rerun_step!;
    const rerunIndex = before.checkpoint!.plan.findIndex((s) => s.id === rerun);
    expect(rerunIndex).toBeGreaterThanOrEqual(0);
    await openTask(taskId);
    const panel = page.getByRole('region', { name: 'Resume approval' });
    await panel.waitFor();
    await shoot('approval');
    await panel.getByRole('button', { name: 'Approve' }).click();
    // The decision is recorded, the runner continues, and its versions arrive live until the task is done.
    await page.getByRole('region', { name: 'Approval decisions' }).getByText('Approved').waitFor({ timeout: LONG });
    await page
      .getByRole('log', { name: 'Live activity' })
      .getByText(/Runner (started|exited)/)
      .first()
      .waitFor({ timeout: LONG });
    await waitForStatus('Done', 90_000);
    const after = await rpc<TaskDetail>('getTask', { taskId });
    expect(after.summary.display_status).toBe('done');
    expect(after.checkpoint!.recovery.pending_approval).toBeNull();
    expect(after.checkpoint!.recovery.decisions.map((d) => d.decision)).toEqual(['approved']);
    // The approved step and every step after it ran to completion.
    expect(after.checkpoint!.plan.slice(rerunIndex).map((s) => [s.id, s.status])).toEqual(
      before.checkpoint!.plan.slice(rerunIndex).map((s) => [s.id, 'done']),
    );
    await page
      .getByRole('progressbar', { name: 'Plan progress' })
      .and(page.locator(`[aria-valuenow="${after.checkpoint!.plan.length}"]`))
      .waitFor();
  }, 150_000);

  it('rejects a pending resume only with a reason, and shows it halted with that reason', async () => {
    // A task of its own, asking for approval since the demo was generated.
    const taskId = 'demo-approval-to-reject';
    expect((await rpc<TaskDetail>('getTask', { taskId })).summary.display_status).toBe('waiting_approval');
    await openTask(taskId);
    const panel = page.getByRole('region', { name: 'Resume approval' });
    await panel.waitFor();
    await panel.getByRole('button', { name: 'Reject' }).click();
    await panel.getByRole('alert').filter({ hasText: 'A reason is required' }).waitFor();
    expect((await rpc<TaskDetail>('getTask', { taskId })).summary.display_status).toBe('waiting_approval');

    const reason = 'the timed-out step must be checked by hand first';
    await panel.getByLabel('Reason for rejecting').fill(reason);
    await panel.getByRole('button', { name: 'Reject' }).click();
    await waitForStatus('Halted', LONG);
    await page.getByRole('region', { name: 'Approval decisions' }).getByText(reason, { exact: false }).waitFor();
    const after = await rpc<TaskDetail>('getTask', { taskId });
    expect(after.checkpoint!.status).toBe('halted');
    expect(after.checkpoint!.recovery.decisions.at(-1)).toMatchObject({ decision: 'rejected', reason });
    await shoot('rejected-halted');
  }, 120_000);

  it('diffs two versions and shows the step transition', async () => {
    const tasks = await rpc<TaskSummary[]>('listTasks');
    const candidates = tasks.filter((t) => (t.version ?? 0) >= 2);
    let pick: { taskId: string; a: number; b: number } | null = null;
    for (const t of candidates) {
      const history = (await rpc<{ after: number; versions: { version: number }[] }>('getHistory', { taskId: t.task_id })).versions;
      const a = history[0].version;
      const b = history[history.length - 1].version;
      const diff = await rpc<{ summary: { step_transitions: unknown[] } }>('diffVersions', { taskId: t.task_id, a, b });
      if (diff.summary.step_transitions.length > 0) {
        pick = { taskId: t.task_id, a, b };
        break;
      }
    }
    expect(pick, 'a task whose history has a step transition').toBeTruthy();
    await openTask(pick!.taskId);
    await page.getByRole('tab', { name: /History/ }).click();
    await page.getByRole('radio', { name: `Diff from version ${pick!.a}`, exact: true }).check();
    await page.getByRole('radio', { name: `Diff to version ${pick!.b}`, exact: true }).check();
    const transitions = page.getByRole('list', { name: 'Step transitions' });
    await transitions.waitFor({ timeout: LONG });
    expect(await transitions.locator('li').count()).toBeGreaterThan(0);
    expect(await transitions.textContent()).toMatch(/→/);
    await page.getByRole('table', { name: `Changes from version ${pick!.a} to version ${pick!.b}` }).waitFor();
    await shoot('history-diff');
    await page.getByRole('tab', { name: /Run/ }).click();
    await page.getByRole('img', { name: /Tokens per step/ }).waitFor();
    await shoot('run');
    await page.getByRole('tab', { name: /Artifacts/ }).click();
    await page.getByRole('button', { name: /Verify|Re-verify/ }).click();
    await page.getByRole('button', { name: 'Re-verify' }).waitFor({ timeout: LONG });
    await shoot('artifacts');
  }, 120_000);

  it('shows a version written by another process without a reload', async () => {
    const tasks = await rpc<TaskSummary[]>('listTasks');
    const target = tasks.find(
      (t) => t.format === 'waystation' && !t.read_only && t.display_status !== 'running' && t.display_status !== 'unreadable',
    );
    expect(target).toBeTruthy();
    await openTask(target!.task_id);
    const note = `checked by the night shift ${Date.now()}`;
    // These callbacks run in the page, where globalThis is its window; the Node-side typecheck has no DOM types.
    await page.evaluate(() => ((globalThis as unknown as { __noReload: boolean }).__noReload = true));
    const writer = spawnSync(process.execPath, [path.join(bundleDir, 'write-version.js'), root, target!.task_id, note], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(writer.status, writer.stderr).toBe(0);
    await page.getByText(note).first().waitFor({ timeout: LONG });
    expect(await page.evaluate(() => (globalThis as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  }, 90_000);

  it('shows a run whose runner was killed outside the host as interrupted, without a reload', async () => {
    // A task a process of its own drives (its lease held), as a `waystation run` in a terminal does; made aside and
    // moved in whole, so the list reads it driven, as it would after the runner's first save under the lease.
    const aside = await fs.mkdtemp(path.join(path.dirname(root), 'aside-'));
    await openStore(aside).create(makeCheckpoint('killed-run'));
    const holder = await holdLease(path.join(aside, 'killed-run'));
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    try {
      await fs.rename(path.join(aside, 'killed-run'), path.join(root, 'killed-run'));
      // The search an earlier test left would hide its row.
      await page.getByRole('searchbox', { name: 'Search tasks' }).fill('killed-run');
      await taskList()
        .locator(`[id="${rowId('killed-run')}"]`)
        .getByText('Running')
        .waitFor({ timeout: LONG });
      await openTask('killed-run');
      await waitForStatus('Running');
      await page.evaluate(() => ((globalThis as unknown as { __noReload: boolean }).__noReload = true));
      // Killed: no file of the task changes; the host reads the lease again and says so.
      holder.kill('SIGKILL');
      await exited;
      await waitForStatus('Interrupted');
      await taskList()
        .locator(`[id="${rowId('killed-run')}"]`)
        .getByText('Interrupted')
        .waitFor({ timeout: LONG });
      expect(await page.evaluate(() => (globalThis as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    } finally {
      holder.kill('SIGKILL');
      await exited;
      await page.getByRole('searchbox', { name: 'Search tasks' }).fill('');
      await fs.rm(path.join(root, 'killed-run'), { recursive: true, force: true });
      await fs.rm(aside, { recursive: true, force: true });
      // Gone from the list before the next test reads its order.
      await taskList()
        .locator(`[id="${rowId('killed-run')}"]`)
        .waitFor({ state: 'detached', timeout: LONG });
    }
  }, 90_000);

  it('holds the list in its order while the pointer is over it: a task written to keeps its row until the pointer leaves', async () => {
    await page.getByRole('searchbox', { name: 'Search tasks' }).fill('');
    await page.locator('.task-list-footer', { hasText: /^\d+ tasks$/ }).waitFor({ timeout: LONG });
    const shown = () =>
      taskList()
        .getByRole('option')
        .evaluateAll((rows) => rows.map((r) => (r as unknown as { id: string }).id));
    // Pointed at first: the order read below is the one held (a running task may re-sort the list before that).
    await taskList().hover();
    const before = await shown();
    // The lowest row of a task another process can write to: a new version sorts it first under "Recently updated".
    const writable = new Set(
      (await rpc<TaskSummary[]>('listTasks'))
        .filter((t) => t.format === 'waystation' && !t.read_only && t.display_status !== 'running' && t.display_status !== 'unreadable')
        .map((t) => t.task_id),
    );
    const target = [...writable]
      .filter((id) => before.indexOf(rowId(id)) > 0)
      .sort((a, b) => before.indexOf(rowId(b)) - before.indexOf(rowId(a)))[0];
    expect(target).toBeTruthy();
    const writtenAt = () =>
      taskList()
        .locator(`[id="${rowId(target)}"] .task-time`)
        .getAttribute('title');
    const was = await writtenAt();
    const writer = spawnSync(process.execPath, [path.join(bundleDir, 'write-version.js'), root, target, `held ${Date.now()}`], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(writer.status, writer.stderr).toBe(0);
    // The new version arrived, its row shows when it was written, and no row moved; the footer says the order is held.
    await expect.poll(writtenAt, { timeout: LONG }).not.toBe(was);
    expect((await shown()).slice(0, before.length)).toEqual(before);
    await page.locator('.task-list-footer', { hasText: 'order held' }).waitFor();
    // The pointer leaves: the list's own order applies, the task written to above where it was.
    await page.mouse.move(1, 1);
    await page.locator('.task-list-footer', { hasText: /^\d+ tasks$/ }).waitFor({ timeout: LONG });
    expect((await shown()).indexOf(rowId(target))).toBeLessThan(before.indexOf(rowId(target)));
  }, 90_000);

  it('starts a new task from an agent and follows it live', async () => {
    const before = (await rpc<TaskSummary[]>('listTasks')).length;
    await page.getByRole('button', { name: '+ New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.waitFor();
    await dialog.getByRole('combobox', { name: /^Agent/ }).selectOption('checkpoint-demo');
    await dialog.getByRole('combobox', { name: /^Recovery mode/ }).selectOption('manual');
    await dialog.getByRole('textbox', { name: /^Task id/ }).fill('e2e-started');
    await shoot('new-task-dialog');
    await dialog.getByRole('button', { name: 'Start task' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });
    // The new task opens at once and its run arrives live: checkpoint-demo stops at its third step.
    await page.locator('.task-meta').getByText('e2e-started', { exact: true }).waitFor({ timeout: LONG });
    await waitForStatus('Failed', 90_000);
    // The list takes the new task from the directory watcher's next batch, which may come after the run's own events.
    await expect
      .poll(async () => (await rpc<TaskSummary[]>('listTasks')).some((t) => t.task_id === 'e2e-started'), { timeout: LONG })
      .toBe(true);
    expect((await rpc<TaskSummary[]>('listTasks')).length).toBe(before + 1);
  }, 120_000);

  it('reads a relative input folder in the checkpoint directory, and refuses a missing one in the dialog with nothing created', async () => {
    const before = (await rpc<TaskSummary[]>('listTasks')).length;
    await page.getByRole('button', { name: '+ New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByRole('combobox', { name: /^Agent/ }).selectOption('md-summarizer');
    await dialog.getByRole('textbox', { name: /^input/ }).fill('no-such-notes');
    await dialog.getByRole('textbox', { name: /^Task id/ }).fill('e2e-missing-input');
    await dialog.getByRole('button', { name: 'Start task' }).click();
    const why = dialog.getByRole('alert', { name: 'Why the task did not start' });
    await why.waitFor({ timeout: LONG });
    expect(await why.textContent()).toContain(`cannot read the input folder ${path.join(root, 'no-such-notes')}`);
    expect(await dialog.isVisible()).toBe(true);
    expect((await rpc<TaskSummary[]>('listTasks')).length).toBe(before);
    // No notice says this task runs (the notice of the task the test before started may still be up).
    expect(
      await page.getByRole('status').filter({ hasText: 'is running in process' }).filter({ hasText: 'e2e-missing-input' }).count(),
    ).toBe(0);

    // The same relative name, once the folder exists in the checkpoint directory, starts.
    await fs.mkdir(path.join(root, 'my-notes'), { recursive: true });
    await fs.writeFile(path.join(root, 'my-notes', 'a.md'), '# A\n\nA note.\n');
    await dialog.getByRole('textbox', { name: /^input/ }).fill('my-notes');
    await dialog.getByRole('textbox', { name: /^Task id/ }).fill('e2e-relative-input');
    await dialog.getByRole('button', { name: 'Start task' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });
    await page.locator('.task-meta').getByText('e2e-relative-input', { exact: true }).waitFor({ timeout: LONG });
    const started = await rpc<TaskDetail>('getTask', { taskId: 'e2e-relative-input' });
    expect((started.checkpoint!.agent!.options as { input: string }).input).toBe(path.join(root, 'my-notes'));
  }, 120_000);

  it('lists a file that cannot be read, with its reason, and keeps the rest browsable', async () => {
    const dir = path.join(root, 'torn-task');
    await fs.mkdir(path.join(dir, 'versions'), { recursive: true });
    await fs.writeFile(
      path.join(dir, 'versions', '00000001.json'),
      '{"format":"waystation-version","version":1,"kind":"full","checkpoint":{"task_id":"torn',
    );
    await fs.writeFile(path.join(dir, 'checkpoint.json'), '{"schema_version":2,"task_id":"torn');
    await page.getByRole('searchbox', { name: 'Search tasks' }).fill('torn-task');
    const row = taskList().getByRole('option', { name: /^torn-task\b.*Unreadable/ });
    await row.waitFor({ timeout: LONG });
    await row.click();
    const problems = page.getByRole('alert', { name: "Problems with this task's files" });
    await problems.waitFor();
    expect(await problems.textContent()).toMatch(/truncated|invalid-json|schema/);
    await shoot('unreadable');
    // The rest of the directory is still there.
    await page.getByRole('searchbox', { name: 'Search tasks' }).fill('');
    expect(await taskList().getByRole('option').count()).toBeGreaterThan(1);
  }, 90_000);

  it('shows a host started --read-only as such: a Read-only badge, and nothing offered that would run', async () => {
    const output: string[] = [];
    const { host: readOnlyHost, url: readOnlyUrl } = await serve(cli, root, ['--read-only'], { ...process.env, NO_COLOR: '1' }, output);
    const other = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await other.goto(readOnlyUrl);
      const badge = other.getByText('Read-only', { exact: true });
      await badge.waitFor({ timeout: LONG });
      expect(await badge.getAttribute('title')).toContain('waystation serve --read-only');
      expect(await other.getByRole('button', { name: '+ New task' }).isDisabled()).toBe(true);
      const failed = (await tasksWith('failed'))[0];
      expect(failed, 'the demo has a failed task').toBeDefined();
      await other.getByRole('searchbox', { name: 'Search tasks' }).fill(failed.task_id);
      await other
        .getByRole('listbox', { name: 'Task list' })
        .locator(`[id="${rowId(failed.task_id)}"]`)
        .click();
      const resume = other.getByRole('button', { name: /Resume/ });
      await resume.waitFor({ timeout: LONG });
      expect(await resume.isDisabled()).toBe(true);
      expect(await other.getByRole('button', { name: /^Edit result/ }).count()).toBe(0);
    } finally {
      await other.close();
      await stopHost(readOnlyHost);
    }
  }, 90_000);
});

/** A value that satisfies a JSON Schema subset, for the step editor's happy path. */
function validValueFor(schema: unknown): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return 'Reviewed by hand: the checks pass.';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return true;
    case 'array':
      return typeof s.minItems === 'number' && s.minItems > 0 ? Array.from({ length: s.minItems }, () => validValueFor(s.items)) : [];
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      return Object.fromEntries(required.map((k) => [k, validValueFor(props[k])]));
    }
    default:
      return 'Reviewed by hand.';
  }
}

/** A value of the wrong type for the schema. */
function wrongValueFor(schema: unknown): unknown {
  const type = ((schema ?? {}) as Record<string, unknown>).type;
  return type === 'number' || type === 'integer' ? 'not a number' : 12345;
}
