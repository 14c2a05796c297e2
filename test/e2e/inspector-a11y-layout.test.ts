/**
 * Two rules every view of the inspector keeps, checked in Chromium against
 * the real host over a demo directory:
 *
 * - accessibility: axe-core finds no violation of serious or critical impact
 *   on the task list, on every tab of the task view, and with each dialog of
 *   going back open (Rerun from here, Edit result's later-steps choice, Fork),
 *   in light and in dark;
 * - layout: from 1024 to 1920 pixels wide, in both themes, no view scrolls
 *   sideways, no pane is wider than its column, no text is cut short
 *   without a way to read it whole, and no tag of one short word is cut.
 *
 * One host and one browser for the whole file; each view is visited once per
 * theme and size.
 */
import { openStore } from '../../electron/store/directory-store.js';
import { makeCheckpoint } from '../electron/store/store-test-helpers.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import type { Page } from 'playwright-core';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { hasChromium, rowId, screenshotIfFailed, startWorld, type E2eWorld } from './e2e-harness.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SIZES = [
  { width: 1024, height: 700 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
  // A browser tab beside another: the list and the task one at a time (styles.css, "Narrow windows").
  { width: 560, height: 800 },
] as const;
const THEMES = ['light', 'dark'] as const;
const TABS = ['Plan', 'Artifacts', 'Side effects', 'Errors', 'Run', 'Messages', 'History', 'Events'] as const;
const LONG = 45_000;
/** The task written beside the demo with an effect in its ledger, under the longest id a task may have (128). */
const LEDGER_TASK = `ledger${'x'.repeat(122)}`;
/** Moderate by axe's scale, and still required: a level-one heading, one main landmark, nothing outside landmarks. */
const STRUCTURE_RULES = ['page-has-heading-one', 'landmark-one-main', 'region'];

type PageStep = (page: Page) => Promise<void>;
/** The controls of going back, each opened as a person would and closed again (Escape for a dialog). */
const GOING_BACK: [string, PageStep, PageStep][] = [
  [
    'Rerun from here',
    async (page) => {
      await page.getByRole('tab', { name: /^Plan/ }).click();
      await page
        .getByRole('button', { name: /^Rerun from here: step / })
        .first()
        .click();
      await page.getByRole('dialog').getByRole('list', { name: 'Steps to rerun' }).waitFor({ timeout: LONG });
    },
    async (page) => {
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
    },
  ],
  [
    'Edit result, later steps',
    async (page) => {
      await page.getByRole('tab', { name: /^Plan/ }).click();
      await page
        .getByRole('button', { name: /^Edit result of step / })
        .first()
        .click();
      await page.getByRole('button', { name: 'Save as new version…' }).click({ timeout: LONG });
      await page.getByRole('group', { name: /later steps? ran with the old value/ }).waitFor();
    },
    async (page) => {
      await page.getByRole('button', { name: 'Back to the value' }).click();
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    },
  ],
  [
    'Fork',
    async (page) => {
      await page.getByRole('tab', { name: /^History/ }).click();
      await page
        .getByRole('button', { name: /^Fork from version / })
        .first()
        .click();
      await page
        .getByRole('dialog')
        .getByRole('textbox', { name: /^New task id/ })
        .waitFor();
    },
    async (page) => {
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
    },
  ],
];

interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Run axe-core on the page as it is; the serious and critical violations, one line each. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol: the page's CSP (rightly) refuses an injected script tag.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(await fs.readFile(AXE, 'utf8'));
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeFinding[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical' || STRUCTURE_RULES.includes(v.id))
    .flatMap((v) => v.nodes.slice(0, 5).map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}: ${n.failureSummary ?? v.help}`));
}

/**
 * What overflows sideways in the page: the document itself, any element that
 * scrolls horizontally, and any text cut with an ellipsis that offers no title
 * to read it whole. Elements marked data-scroll-x (a code view that scrolls on
 * purpose) may scroll.
 */
async function overflows(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type El = {
      tagName: string;
      className: unknown;
      id: string;
      scrollWidth: number;
      clientWidth: number;
      textContent: string | null;
      title?: string;
      closest(sel: string): unknown;
      getAttribute(name: string): string | null;
      getClientRects(): { length: number };
      getBoundingClientRect(): { left: number; right: number };
      querySelectorAll(sel: string): El[];
      children: El[];
    };
    const g = globalThis as unknown as {
      document: { documentElement: El; querySelectorAll(sel: string): El[] };
      innerWidth: number;
      getComputedStyle(el: El): { overflowX: string; textOverflow: string; display: string; visibility: string };
    };
    const name = (el: El) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    const found: string[] = [];
    const doc = g.document.documentElement;
    if (doc.scrollWidth > g.innerWidth) found.push(`the page is ${doc.scrollWidth}px wide in a ${g.innerWidth}px window`);
    for (const el of g.document.querySelectorAll('body *')) {
      if (el.getClientRects().length === 0) continue;
      const style = g.getComputedStyle(el);
      if (style.visibility === 'hidden') continue;
      const wider = el.scrollWidth > el.clientWidth + 1;
      if (!wider) continue;
      // A tag of one short word (a recovery mode, read-only) cut short reads as nothing ("co…"), title or not.
      if (typeof el.className === 'string' && el.className.split(/\s+/).includes('tag-word')) {
        found.push(`${name(el)} cuts the word "${el.textContent ?? ''}"`);
        continue;
      }
      if ((style.overflowX === 'auto' || style.overflowX === 'scroll') && !el.closest('[data-scroll-x]')) {
        // Name what sticks out: the innermost elements past the scroller's edge.
        const box = el.getBoundingClientRect();
        const out = (e: El) => e.tagName !== 'OPTION' && e.getClientRects().length > 0 && e.getBoundingClientRect().right > box.right + 1;
        const culprits = [...el.querySelectorAll('*')].filter((e) => out(e) && ![...e.children].some(out)).slice(0, 3);
        found.push(
          `${name(el)} scrolls sideways (${el.scrollWidth}px of content in ${el.clientWidth}px; past its edge: ${culprits.map(name).join(', ')})`,
        );
      } else if (style.textOverflow === 'ellipsis' && style.overflowX === 'hidden') {
        if (!el.closest('[title]')) found.push(`${name(el)} cuts "${(el.textContent ?? '').slice(0, 40)}" with no title to read it whole`);
      }
    }
    return found;
  });
}

/**
 * The words of the artifacts table that a line break cuts in two: each word of
 * its cells (letters and digits between spaces and path separators) whose
 * text spans more than one line. The hash column, and a run marked as free to
 * break (path-text.tsx), may break anywhere and are left out.
 */
async function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Rect = { top: number; width: number };
    type TextNode = { textContent: string | null; parentElement: { closest(sel: string): unknown } | null };
    const g = globalThis as unknown as {
      document: {
        querySelectorAll(sel: string): { textContent: string | null }[];
        createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null };
        createRange(): { setStart(n: unknown, o: number): void; setEnd(n: unknown, o: number): void; getClientRects(): ArrayLike<Rect> };
      };
    };
    const found: string[] = [];
    // The fifth column is the hash.
    for (const cell of g.document.querySelectorAll('table[aria-label="Artifacts"] td:not(:nth-child(5))')) {
      const walker = g.document.createTreeWalker(cell, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement?.closest('.break-anywhere')) continue;
        const text = node.textContent ?? '';
        for (const m of text.matchAll(/[^\s/\\:._-]+/g)) {
          const range = g.document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const lines = new Set([...Array.from(range.getClientRects())].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) found.push(`"${m[0]}" in "${(cell.textContent ?? '').slice(0, 60)}"`);
        }
      }
    }
    return found;
  });
}

describe.skipIf(!hasChromium)('every view of the inspector: accessible and within the window', () => {
  let world: E2eWorld;
  let page: Page;
  let taskId: string;
  let diffPair: { a: number; b: number };

  async function openTask(id: string) {
    await page.getByRole('searchbox', { name: 'Search tasks' }).fill(id);
    const row = page.getByRole('listbox', { name: 'Task list' }).locator(`[id="${rowId(id)}"]`);
    const shown = page.locator('.task-meta').getByText(id, { exact: true });
    // The list re-sorts as tasks change (a fork written by an earlier test lands above the row), and a CI run saw a
    // click land elsewhere and open nothing. The list now holds its order while the pointer is over it (the
    // renderer's list-hold.ts), so the row stays put from the pointer's arrival to the click, and the retry below
    // should no longer be needed; it is kept as it is harmless (a click that opens the task returns at once) and
    // covers a re-sort in the moment between Playwright finding the row and the pointer reaching it.
    const deadline = Date.now() + LONG;
    for (;;) {
      await row.click();
      const opened = await shown.waitFor({ timeout: 5_000 }).then(
        () => true,
        () => false,
      );
      if (opened) return;
      if (Date.now() > deadline) throw new Error(`task ${id} did not open after clicks on its row for ${LONG} ms`);
    }
  }

  /** One animation frame of the page: what the layout needs to follow a new size. */
  async function nextFrame(): Promise<void> {
    await page.evaluate(
      () =>
        new Promise((r) => (globalThis as unknown as { requestAnimationFrame(f: () => void): void }).requestAnimationFrame(() => r(null))),
    );
  }

  /** What sticks out of the view shown at each of SIZES, each named by `view` and the size; back at the first size after. */
  async function overflowsAtEverySize(view: string): Promise<string[]> {
    const found: string[] = [];
    for (const size of SIZES) {
      await page.setViewportSize(size);
      // One frame for the layout (and the charts' measured width) to follow the new size.
      await nextFrame();
      found.push(...(await overflows(page)).map((o) => `${view} at ${size.width}x${size.height}: ${o}`));
    }
    await page.setViewportSize(SIZES[0]);
    return found;
  }

  /** Show one view: the list with nothing open, or one tab of the task (History with a diff picked). */
  async function show(view: string) {
    if (view === 'list') {
      await page.goto(world.url);
      await page.getByRole('listbox', { name: 'Task list' }).getByRole('option').first().waitFor({ timeout: LONG });
      return;
    }
    await page.getByRole('tab', { name: new RegExp(`^${view}`) }).click();
    if (view === 'History') {
      await page.getByRole('navigation', { name: 'Forks' }).waitFor({ timeout: LONG });
      await page.getByRole('radio', { name: `Diff from version ${diffPair.a}`, exact: true }).check();
      await page.getByRole('radio', { name: `Diff to version ${diffPair.b}`, exact: true }).check();
      await page.getByRole('table', { name: `Changes from version ${diffPair.a} to version ${diffPair.b}` }).waitFor({ timeout: LONG });
    }
    if (view === 'Plan') {
      // With a step's model calls open: the step detail is part of the Plan tab.
      const calls = page.getByRole('button', { name: /^Show model calls of step / }).first();
      if (await calls.count()) {
        await calls.click();
        await page
          .getByRole('region', { name: /^Model calls of step / })
          .first()
          .waitFor({ timeout: LONG });
      }
    }
    if (view === 'Run') await page.getByRole('img', { name: /Tokens per step/ }).waitFor({ timeout: LONG });
    if (view === 'Messages') await page.getByRole('list', { name: 'Messages' }).waitFor({ timeout: LONG });
    if (view === 'Events') await page.getByRole('log', { name: 'Event timeline' }).waitFor({ timeout: LONG });
  }

  beforeAll(async () => {
    // Beside the demo, a task whose ledger holds an effect with its request: the demo's tasks record none.
    world = await startWorld({
      prefix: 'e2e-a11y-',
      prepare: async (root) => {
        await openStore(root).create(
          makeCheckpoint(LEDGER_TASK, 2, {
            side_effects: [
              {
                id: 'effect-1',
                type: 'http-publish',
                status: 'done',
                idempotency_key: `${LEDGER_TASK}:publish`,
                step_id: 's1',
                request: { url: 'https://example.com/publish', body: { index: ['a.md', 'b.md'] } },
                outcome: { id: 42 },
                attempts: 1,
              },
            ],
          }),
        );
      },
    });
    page = await world.openPage(SIZES[1], false);
    // The task with the most to show: a history with a step transition, messages, artifacts and side effects.
    const tasks = await world.rpc<TaskSummary[]>('listTasks');
    for (const t of tasks.filter((t) => (t.version ?? 0) >= 2 && t.format === 'waystation')) {
      const history = (await world.rpc<{ versions: { version: number }[] }>('getHistory', { taskId: t.task_id })).versions;
      const a = history[0].version;
      const b = history[history.length - 1].version;
      const diff = await world.rpc<{ summary: { step_transitions: unknown[] } }>('diffVersions', { taskId: t.task_id, a, b });
      if (diff.summary.step_transitions.length > 0 && t.display_status === 'failed') {
        taskId = t.task_id;
        diffPair = { a, b };
        break;
      }
    }
    expect(taskId, 'a failed demo task with a step transition in its history').toBeTruthy();
    // A fork of it, so its History shows the links to forks and the version forked from (the task itself is only read).
    const fork = `${taskId}-fork`;
    await world.rpc('forkTask', { taskId, version: diffPair.b, newTaskId: fork });
    const listedBy = Date.now() + 30_000;
    while (!(await world.rpc<TaskSummary[]>('listTasks')).some((t) => t.task_id === fork && t.forked_from?.task_id === taskId)) {
      if (Date.now() > listedBy) throw new Error(`the host did not list the fork ${fork}:\n${world.output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await world?.close();
  });

  it('loads with no failed request: no 404 for a favicon or anything else', async () => {
    const failed: string[] = [];
    const onResponse = (r: { status(): number; url(): string }) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url().replace(/token=[^&]+/, 'token=…')}`);
    };
    page.on('response', onResponse);
    try {
      await show('list');
      await openTask(taskId);
      // The favicon is asked for after the load; an idle network means it was asked for already.
      await page.waitForLoadState('networkidle');
    } finally {
      page.off('response', onResponse);
    }
    expect(failed).toEqual([]);
  }, 60_000);

  for (const theme of THEMES) {
    it(`has no serious or critical axe violation on the list and on every tab, ${theme}`, async () => {
      await page.setViewportSize(SIZES[1]);
      await page.emulateMedia({ colorScheme: theme });
      const found: string[] = [];
      await show('list');
      found.push(...(await axeViolations(page)).map((v) => `list: ${v}`));
      await openTask(taskId);
      for (const tab of TABS) {
        await show(tab);
        found.push(...(await axeViolations(page)).map((v) => `${tab}: ${v}`));
      }
      for (const [name, open, close] of GOING_BACK) {
        await open(page);
        found.push(...(await axeViolations(page)).map((v) => `${name}: ${v}`));
        await close(page);
      }
      // A ledger with an effect in it: its request folds into a preview.
      await openTask(LEDGER_TASK);
      await show('Side effects');
      await page.locator('details.cell-details summary').first().waitFor({ timeout: LONG });
      found.push(...(await axeViolations(page)).map((v) => `Side effects of ${LEDGER_TASK}: ${v}`));
      expect(found).toEqual([]);
    }, 180_000);
  }

  it('shows the list and the task one at a time in a narrow window, with a way back that returns focus to the list', async () => {
    const narrow = SIZES[SIZES.length - 1];
    await page.setViewportSize(SIZES[0]);
    await show('list');
    await page.setViewportSize(narrow);
    const list = page.getByRole('listbox', { name: 'Task list' });
    const back = page.getByRole('navigation', { name: 'Back to the task list' }).getByRole('button', { name: '← All tasks' });
    const details = page.getByRole('main', { name: 'Task details' });
    expect(await list.isVisible()).toBe(true);
    expect(await details.isVisible()).toBe(false);
    await openTask(taskId);
    expect(await list.isVisible()).toBe(false);
    expect(await back.isVisible()).toBe(true);
    // Focus moved from the list, gone now, to the way back to it.
    await expect.poll(() => page.evaluate('document.activeElement?.textContent ?? null'), { timeout: LONG }).toBe('← All tasks');
    const found = (await axeViolations(page)).map((v) => `task at ${narrow.width}px: ${v}`);
    await back.click();
    await list.waitFor({ state: 'visible', timeout: LONG });
    expect(await details.isVisible()).toBe(false);
    await expect
      .poll(() => page.evaluate('document.activeElement?.getAttribute("aria-label") ?? null'), { timeout: LONG })
      .toBe('Task list');
    found.push(...(await axeViolations(page)).map((v) => `list at ${narrow.width}px: ${v}`));
    // Wide again: both side by side, and no way back to offer.
    await page.setViewportSize(SIZES[0]);
    await openTask(taskId);
    expect(await list.isVisible()).toBe(true);
    // Rendered, but neither shown nor in the accessibility tree.
    expect(await page.locator('.back-to-list').count()).toBe(1);
    expect(await page.locator('.back-to-list').isVisible()).toBe(false);
    expect(await back.count()).toBe(0);
    expect(found).toEqual([]);
  }, 60_000);

  it('keeps the words of the artifacts table whole at every width: paths break at their separators', async () => {
    await page.setViewportSize(SIZES[0]);
    await show('list');
    // A summary edited after the run: its row says so with the path, beside words that must not be cut.
    await openTask('notes-drifted');
    await show('Artifacts');
    await page.getByRole('table', { name: 'Artifacts' }).getByText('Modified').waitFor({ timeout: LONG });
    const found: string[] = [];
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await nextFrame();
      found.push(...(await brokenWords(page)).map((w) => `${size.width}px: ${w}`));
      found.push(...(await overflows(page)).map((o) => `${size.width}px: ${o}`));
    }
    await page.setViewportSize(SIZES[0]);
    expect(found).toEqual([]);
  }, 60_000);

  for (const theme of THEMES) {
    it(`keeps every view within the window at 560, 1024, 1280 and 1920 pixels wide, ${theme}`, async () => {
      await page.emulateMedia({ colorScheme: theme });
      const found: string[] = [];
      await page.setViewportSize(SIZES[0]);
      await show('list');
      found.push(...(await overflowsAtEverySize('list')));
      await openTask(taskId);
      for (const tab of TABS) {
        await show(tab);
        found.push(...(await overflowsAtEverySize(tab)));
      }
      // The longest id a task may have, with no break in it: its view too stays within the window.
      await openTask(LEDGER_TASK);
      found.push(...(await overflowsAtEverySize(LEDGER_TASK)));
      expect(found).toEqual([]);
    }, 180_000);
  }
});
