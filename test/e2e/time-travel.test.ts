/**
 * End-to-end, going back in a task's history from the inspector in Chromium,
 * against the real loopback host and runner: Stop a running task, Force stop
 * one held inside a side effect, Fork from a version (the parent's folder byte
 * for byte unchanged), Rerun from a step keeping and then redoing the publish
 * (counted by a publish service that records every key it applied), in
 * confirm mode through the approval, and Edit result on a done step with its
 * later steps rerun.
 *
 * One host and one browser for the file. The offline model answers after a
 * short delay, so a run of many files is still running when Stop is pressed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { ActionResult, TaskDetail } from '../../shared/api/contract.js';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { startFakePublishService, type FakePublishService } from '../fakes/fake-publish-service.js';
import { hasChromium, replaceEditorText, rowId, SHOTS, startWorld, type E2eWorld, screenshotIfFailed } from './e2e-harness.js';
import { hashTree } from '../support/hash-tree.js';

const LONG = 45_000;

describe.skipIf(!hasChromium)('going back from the inspector, end to end', () => {
  let world: E2eWorld;
  let page: Page;
  let publish: FakePublishService;
  let notes: string;
  const rpc = <T>(method: string, input: unknown = {}) => world.rpc<T>(method, input);
  const header = () => page.locator('.task-header');
  const task = (taskId: string) => rpc<TaskDetail>('getTask', { taskId });

  /**
   * Open a task the way the keyboard does: search for it, then ↓ into the list, which opens the first match.
   * (A pointer click on the row can miss while the Overview above the list grows after a run: the row moves
   * between the press and the release, so no click reaches it.)
   */
  async function openTask(taskId: string) {
    const search = page.getByRole('searchbox', { name: 'Search tasks' });
    await search.fill(taskId);
    await page
      .getByRole('listbox', { name: 'Task list' })
      .locator(`[id="${rowId(taskId)}"]`)
      .waitFor({ timeout: LONG });
    await search.press('ArrowDown');
    await page.locator('.task-meta').getByText(taskId, { exact: true }).waitFor({ timeout: LONG });
  }

  /** Start a summariser over `input` through the API (a second client) and wait until it is done. */
  async function summarised(taskId: string, input: string, mode: 'manual' | 'confirm' = 'manual') {
    await rpc<ActionResult>('startTask', { agent: 'md-summarizer', taskId, mode, options: { input, 'publish-url': publish.url } });
    await expect.poll(async () => (await task(taskId).catch(() => null))?.checkpoint?.status, { timeout: LONG }).toBe('done');
  }

  /** Wait until the task has run past `version` to done again. */
  async function doneAfter(taskId: string, version: number) {
    await expect
      .poll(
        async () => {
          const cp = (await task(taskId)).checkpoint!;
          return cp.version > version && cp.status === 'done' && cp.plan.every((s) => s.status === 'done');
        },
        { timeout: LONG },
      )
      .toBe(true);
  }

  beforeAll(async () => {
    publish = await startFakePublishService();
    // A short model delay: a forty-file run takes seconds, time enough to stop it; the other runs stay quick.
    world = await startWorld({ prefix: 'e2e-tt-', env: { WAYSTATION_OFFLINE_LATENCY_MS: '150' } });
    // Inside the directory served: a task the inspector starts reads only there.
    notes = path.join(world.root, 'two-notes');
    await fs.mkdir(notes, { recursive: true });
    await fs.writeFile(path.join(notes, 'a.md'), '# Alpha\n\nAlpha comes first. It sets the scene.\n');
    await fs.writeFile(path.join(notes, 'b.md'), '# Beta\n\nBeta follows, with more to say.\n');
    page = await world.openPage();
  }, 180_000);

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await world?.close();
    await publish?.close();
  });

  it('stops a running task with Stop, and shows who stopped it', async () => {
    const many = path.join(world.root, 'many-notes');
    await fs.mkdir(many, { recursive: true });
    for (let i = 0; i < 40; i++) await fs.writeFile(path.join(many, `n${String(i).padStart(2, '0')}.md`), `# Note ${i}\n\nNote ${i}.\n`);
    await rpc<ActionResult>('startTask', { agent: 'md-summarizer', taskId: 'tt-stop', options: { input: many } });
    await openTask('tt-stop');
    await page.getByRole('button', { name: '■ Stop' }).click({ timeout: LONG });

    const note = page.getByRole('note', { name: 'Stopped by a person' });
    await note.waitFor({ timeout: LONG });
    await page.screenshot({ path: path.join(SHOTS, 'stopped-task-light.png') });
    await header().locator('.badge', { hasText: 'Interrupted' }).first().waitFor({ timeout: LONG });
    const cp = (await task('tt-stop')).checkpoint!;
    expect(cp.recovery.stopped).toMatchObject({ by: expect.any(String), at: expect.any(String) });
    expect(await note.textContent()).toContain(`by ${cp.recovery.stopped!.by}`);
    // It stopped part-way: the rest is left for a person's Resume, and no runner drives it.
    expect(cp.plan.filter((s) => s.status === 'done').length).toBeLessThan(cp.plan.length);
    expect((await task('tt-stop')).lease.held).toBe(false);
    expect(await page.getByRole('button', { name: /Stop/ }).count()).toBe(0);
    await page.getByRole('button', { name: /Resume/ }).waitFor();
  }, 60_000);

  it('ends a run held inside a side effect with Force stop: the effect is left for the resume to probe', async () => {
    // A publish service that takes the request and never answers: the run waits inside the effect, where no polite stop reaches it.
    const held: http.ServerResponse[] = [];
    let posted = 0;
    const hanging = http.createServer((req, res) => {
      if (req.method === 'POST') {
        posted++;
        held.push(res);
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/publish`;
      await rpc<ActionResult>('startTask', { agent: 'md-summarizer', taskId: 'tt-force', options: { input: notes, 'publish-url': url } });
      await openTask('tt-force');
      await expect.poll(() => posted, { timeout: LONG }).toBe(1);
      await page.getByRole('button', { name: '■ Stop' }).click();
      // Asked, not yet stopped: the second press ends the process.
      await page.getByRole('status').filter({ hasText: 'Stop asked' }).waitFor({ timeout: LONG });
      await page.getByRole('button', { name: '■ Force stop' }).click();
      await page.getByRole('note', { name: 'Stopped by a person' }).waitFor({ timeout: LONG });
      await header().locator('.badge', { hasText: 'Interrupted' }).first().waitFor({ timeout: LONG });
      const cp = (await task('tt-force')).checkpoint!;
      expect(cp.recovery.stopped).toMatchObject({ by: expect.any(String) });
      // The publish was in flight: recorded as an intent, never as done, so the next resume probes it.
      expect(cp.side_effects.map((e) => e.status)).toEqual(['intent']);
      expect((await task('tt-force')).lease.held).toBe(false);
    } finally {
      for (const res of held) res.destroy();
      await new Promise((r) => hanging.close(r));
    }
  }, 60_000);

  it('forks a version from History into a new task, links the two both ways, and leaves the parent untouched', async () => {
    const parentDir = path.join(world.root, 'notes-done');
    await openTask('notes-done');
    const before = await hashTree(parentDir);
    const version = (await task('notes-done')).checkpoint!.version;
    await page.getByRole('tab', { name: /^History/ }).click();
    await page.getByRole('button', { name: `Fork from version ${version}`, exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Fork notes-done from version ${version}` });
    await dialog.waitFor();
    const id = dialog.getByRole('textbox', { name: /^New task id/ });
    // Checked as typed: a taken id is refused before anything is sent.
    await id.fill('notes-drifted');
    await dialog.getByRole('alert').filter({ hasText: 'already exists' }).waitFor();
    expect(await dialog.getByRole('button', { name: 'Fork', exact: true }).isDisabled()).toBe(true);
    await id.fill('tt-fork');
    await dialog.getByRole('textbox', { name: /^Why/ }).fill('try another summary');
    await page.screenshot({ path: path.join(SHOTS, 'fork-dialog-light.png') });
    await dialog.getByRole('button', { name: 'Fork', exact: true }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });

    // The fork opens, and its History links back to the parent.
    await page.locator('.task-meta').getByText('tt-fork', { exact: true }).waitFor({ timeout: LONG });
    const fork = (await task('tt-fork')).checkpoint!;
    expect(fork.forked_from).toEqual({ task_id: 'notes-done', version });
    expect(fork.source).toMatchObject({ kind: 'fork', note: expect.stringContaining('try another summary') });
    await page.getByRole('tab', { name: /^History/ }).click();
    const back = page.getByRole('navigation', { name: 'Forks' });
    await back.getByText('Forked from').waitFor({ timeout: LONG });
    await back.getByRole('button', { name: 'notes-done', exact: true }).click();
    await page.locator('.task-meta').getByText('notes-done', { exact: true }).waitFor({ timeout: LONG });
    await page.getByRole('tab', { name: /^History/ }).click();
    await page.getByRole('navigation', { name: 'Forks' }).getByRole('button', { name: 'tt-fork', exact: true }).waitFor({ timeout: LONG });
    expect(await hashTree(parentDir)).toEqual(before);
  }, 60_000);

  it('reruns from a step keeping the publish (one in all), then redoing it (two, the second under a new key)', async () => {
    await summarised('tt-rerun', notes);
    expect(publish.applied.get('tt-rerun:publish-index')).toBe(1);
    await openTask('tt-rerun');
    await page.getByRole('tab', { name: /^Plan/ }).click();

    // Keep, the default.
    let version = (await task('tt-rerun')).checkpoint!.version;
    await page.getByRole('button', { name: 'Rerun from here: step summarize a.md' }).click();
    let dialog = page.getByRole('dialog', { name: 'Rerun from “summarize a.md”' });
    await dialog.getByRole('list', { name: 'Steps to rerun' }).waitFor({ timeout: LONG });
    expect(await dialog.getByRole('list', { name: 'Steps to rerun' }).getByRole('listitem').count()).toBe(3);
    expect(await dialog.getByRole('list', { name: 'Artifacts these steps recorded' }).textContent()).toContain('index.json');
    expect(await dialog.getByRole('radio', { name: /^Keep: not performed again/ }).isChecked()).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'rerun-from-here-light.png') });
    // Looking is not writing.
    expect((await task('tt-rerun')).checkpoint!.version).toBe(version);
    await dialog.getByRole('button', { name: 'Rerun 3 steps' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });
    await doneAfter('tt-rerun', version);
    expect([...publish.applied.entries()].filter(([k]) => k.startsWith('tt-rerun'))).toEqual([['tt-rerun:publish-index', 1]]);

    // Redo, chosen for the publish alone.
    version = (await task('tt-rerun')).checkpoint!.version;
    await page.getByRole('button', { name: 'Rerun from here: step write and publish the index' }).click({ timeout: LONG });
    dialog = page.getByRole('dialog', { name: 'Rerun from “write and publish the index”' });
    await dialog.getByRole('radio', { name: /^Redo: perform it again/ }).check({ timeout: LONG });
    await dialog.getByRole('button', { name: 'Rerun 1 step' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });
    await doneAfter('tt-rerun', version);
    const mine = [...publish.applied.entries()].filter(([k]) => k.startsWith('tt-rerun'));
    expect(mine).toEqual([
      ['tt-rerun:publish-index', 1],
      ['tt-rerun:publish-index-redo2', 1],
    ]);
    // History marks the rerun versions.
    await page.getByRole('tab', { name: /^History/ }).click();
    await page.getByRole('table', { name: 'Versions' }).getByText('rerun from publish-index, redo').waitFor({ timeout: LONG });
  }, 90_000);

  it('edits a done step and reruns the steps after it, which do not publish again', async () => {
    await summarised('tt-edit', notes);
    await openTask('tt-edit');
    await page.getByRole('tab', { name: /^Plan/ }).click();
    const { value } = await rpc<{ value: { file: string; summary_path: string; summary: string } }>('getStepResult', {
      taskId: 'tt-edit',
      stepId: 'summarize:a.md',
    });
    const version = (await task('tt-edit')).checkpoint!.version;
    await page.getByRole('button', { name: 'Edit result of step summarize a.md' }).click();
    const editor = page.getByRole('textbox', { name: 'New result for step summarize a.md' });
    await editor.waitFor({ timeout: LONG });
    const edited = { ...value, summary: 'Alpha, summarised by hand.' };
    await replaceEditorText(page, editor, JSON.stringify(edited));
    await page.getByRole('status').filter({ hasText: 'Valid value' }).waitFor();
    await page.getByRole('button', { name: 'Save as new version…' }).click();
    const choice = page.getByRole('group', { name: /2 later steps ran with the old value/ });
    await choice.waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'edit-later-steps-light.png') });
    expect((await task('tt-edit')).checkpoint!.version).toBe(version);
    await choice.getByRole('button', { name: 'Save and rerun later steps' }).click();

    await expect
      .poll(async () => (await task('tt-edit')).checkpoint!.plan.map((s) => s.status), { timeout: LONG })
      .toEqual(['done', 'pending', 'pending']);
    const saved = (await task('tt-edit')).checkpoint!;
    expect(saved.source).toMatchObject({ kind: 'human-edit', edit: { step_id: 'summarize:a.md' } });
    await page.getByRole('button', { name: /Resume/ }).click({ timeout: LONG });
    await doneAfter('tt-edit', saved.version);
    const { value: after } = await rpc<{ value: unknown }>('getStepResult', { taskId: 'tt-edit', stepId: 'summarize:a.md' });
    expect(after).toEqual(edited);
    expect([...publish.applied.entries()].filter(([k]) => k.startsWith('tt-edit'))).toEqual([['tt-edit:publish-index', 1]]);
    // The list follows once the host has seen the last version.
    await expect
      .poll(async () => (await rpc<TaskSummary[]>('listTasks')).find((t) => t.task_id === 'tt-edit')?.display_status, { timeout: LONG })
      .toBe('done');
  }, 90_000);

  it('in confirm mode, a rerun with a redo waits for approval like any other resume, and the approval performs it', async () => {
    await summarised('tt-confirm', notes, 'confirm');
    await openTask('tt-confirm');
    await page.getByRole('tab', { name: /^Plan/ }).click();
    const version = (await task('tt-confirm')).checkpoint!.version;
    await page.getByRole('button', { name: 'Rerun from here: step write and publish the index' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rerun from “write and publish the index”' });
    await dialog.getByText('confirm mode: the resume prepares a plan that waits for approval').waitFor({ timeout: LONG });
    await dialog.getByRole('radio', { name: /^Redo: perform it again/ }).check();
    await dialog.getByRole('button', { name: 'Rerun 1 step' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: LONG });

    const approval = page.getByRole('region', { name: 'Resume approval' });
    await approval.waitFor({ timeout: LONG });
    expect(await approval.textContent()).toContain('Perform again, under a new key');
    expect(await approval.textContent()).toContain('tt-confirm:publish-index-redo2');
    // Nothing was performed before the approval.
    expect([...publish.applied.keys()].filter((k) => k.startsWith('tt-confirm'))).toEqual(['tt-confirm:publish-index']);
    await approval.getByRole('button', { name: /^Approve/ }).click();
    await doneAfter('tt-confirm', version);
    expect([...publish.applied.entries()].filter(([k]) => k.startsWith('tt-confirm'))).toEqual([
      ['tt-confirm:publish-index', 1],
      ['tt-confirm:publish-index-redo2', 1],
    ]);
  }, 90_000);
});
