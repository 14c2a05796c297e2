/**
 * End-to-end: a person presses Stop on a running Python command agent in the
 * inspector (Chromium, the real loopback host), the agent stops at its next
 * step boundary, the task shows who stopped it, and Resume runs it to done
 * without running a done step again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { ActionResult, TaskDetail } from '../../shared/api/contract.js';
import { REPO } from '../support/node-bundle.js';
import { hasChromium, rowId, screenshotIfFailed, startWorld, type E2eWorld } from './e2e-harness.js';

const LONG = 45_000;

/** Four steps; the second waits for a `release` file, so the Stop lands while a step runs and is honoured at the next boundary. */
const AGENT = `
import os, sys, time
import waystation
from waystation import PlannedStep

def run(t):
    t.step("first", lambda: "one")
    def held():
        open(os.path.join(t.root, "py-held"), "w").close()
        for _ in range(600):
            if os.path.exists(os.path.join(t.root, "release")):
                return "two"
            time.sleep(0.1)
        raise RuntimeError("never released")
    t.step("held", held)
    t.step("third", lambda: "three")
    t.step("fourth", lambda: "four")

agent = waystation.Agent(name="py-steps", description="four steps, the second held until released",
    options={"type": "object", "properties": {}},
    plan=[PlannedStep("first", "first"), PlannedStep("held", "held"), PlannedStep("third", "third"), PlannedStep("fourth", "fourth")],
    goal="four steps", run=run)
sys.exit(waystation.main(agent))
`;

describe.skipIf(!hasChromium)('stopping a Python agent from the inspector, end to end', () => {
  let world: E2eWorld;
  let page: Page;
  const rpc = <T>(method: string, input: unknown = {}) => world.rpc<T>(method, input);
  const header = () => page.locator('.task-header');
  const task = (taskId: string) => rpc<TaskDetail>('getTask', { taskId });

  beforeAll(async () => {
    world = await startWorld({
      prefix: 'e2e-pystop-',
      hostArgs: ['--trust'],
      env: { PYTHONPATH: path.join(REPO, 'python') },
      prepare: async (root) => {
        await fs.writeFile(path.join(root, 'steps.py'), AGENT);
        await fs.writeFile(
          path.join(root, 'waystation.config.json'),
          JSON.stringify({ agents: [{ name: 'py-steps', command: ['python3', 'steps.py'], description: 'four steps' }] }),
        );
      },
    });
    page = await world.openPage();
  }, 180_000);

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await world?.close();
  });

  it('stops it at the next step with Stop, and Resume runs it to done with no done step run again', async () => {
    await rpc<ActionResult>('startTask', { agent: 'py-steps', taskId: 'py-stop', options: {} });
    // Open it the way the keyboard does (see time-travel.test.ts: a click on a moving row can miss).
    const search = page.getByRole('searchbox', { name: 'Search tasks' });
    await search.fill('py-stop');
    await page
      .getByRole('listbox', { name: 'Task list' })
      .locator(`[id="${rowId('py-stop')}"]`)
      .waitFor({ timeout: LONG });
    await search.press('ArrowDown');
    await page.locator('.task-meta').getByText('py-stop', { exact: true }).waitFor({ timeout: LONG });
    await expect
      .poll(
        () =>
          fs.access(path.join(world.root, 'py-held')).then(
            () => true,
            () => false,
          ),
        { timeout: LONG },
      )
      .toBe(true);
    expect(await page.getByTestId('agent-tag').textContent()).toContain('py-steps (command)');

    await page.getByRole('button', { name: '■ Stop' }).click({ timeout: LONG });
    // Asked while the held step runs: the agent stops at the boundary after it, not inside it.
    await page.getByRole('status').filter({ hasText: 'Stop asked' }).waitFor({ timeout: LONG });
    await fs.writeFile(path.join(world.root, 'release'), '');

    const note = page.getByRole('note', { name: 'Stopped by a person' });
    await note.waitFor({ timeout: LONG });
    await header().locator('.badge', { hasText: 'Interrupted' }).first().waitFor({ timeout: LONG });
    const stopped = (await task('py-stop')).checkpoint!;
    expect(stopped.recovery.stopped).toMatchObject({ by: expect.any(String), at: expect.any(String) });
    expect(await note.textContent()).toContain(`by ${stopped.recovery.stopped!.by}`);
    expect(stopped.plan.map((s) => s.status)).toEqual(['done', 'done', 'pending', 'pending']);
    expect((await task('py-stop')).lease.held).toBe(false);
    // The header drops Stop once the page hears the lease let go and the runner's process end, which follow the
    // version that shows the task interrupted: waited for, not read at the moment the version is shown.
    await page.getByRole('button', { name: /Stop/ }).waitFor({ state: 'detached', timeout: LONG });

    await page.getByRole('button', { name: /Resume/ }).click({ timeout: LONG });
    await header().locator('.badge', { hasText: 'Done' }).first().waitFor({ timeout: LONG });
    const done = (await task('py-stop')).checkpoint!;
    expect(done.status).toBe('done');
    expect(done.recovery.stopped ?? null).toBeNull();
    // Each step ran once: the two done before the stop were not run again by the resume.
    expect(done.plan.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['first', 'done', 1],
      ['held', 'done', 1],
      ['third', 'done', 1],
      ['fourth', 'done', 1],
    ]);
  }, 120_000);
});
