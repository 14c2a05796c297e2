// @vitest-environment jsdom
/**
 * The malformed-input corpus through the UI's loading path: mutated tasks on
 * disk, a real HostService answering through the same dispatch as both
 * transports, and the renderer's store and views on top. Nothing throws, and
 * each task the host cannot read shows as unreadable with its reason, in the
 * list and in the task view.
 */
import { act } from 'react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { WaystationApi } from '../../shared/api/contract.js';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { createAppStore, type AppStore } from '../../renderer/src/store/app-store.js';
import { layOutElements, renderApp } from './app-harness.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** test/support/malformed-corpus-host.ts, as this browser-typed test sees it. */
interface CorpusHostModule {
  LONE_DAMAGE: ReadonlyArray<readonly [string, string]>;
  openCorpusHost(
    sample: number,
    seed: number,
  ): Promise<{
    api: WaystationApi;
    listed: TaskSummary[];
    described: Map<string, string>;
    interruptSave(taskId: string, version: number): Promise<void>;
    close(): Promise<void>;
  }>;
}
// Loaded by path: its Node imports stay out of the renderer's browser-only type check.
const HOST_MODULE = '../support/malformed-corpus-host.js';

let corpus: Awaited<ReturnType<CorpusHostModule['openCorpusHost']>>;
let LONE: CorpusHostModule['LONE_DAMAGE'];
let store: AppStore;
let listed: TaskSummary[];
let described: Map<string, string>;

beforeAll(async () => {
  const mod = (await import(/* @vite-ignore */ HOST_MODULE)) as CorpusHostModule;
  LONE = mod.LONE_DAMAGE;
  const seed = Number((globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.WAYSTATION_TORTURE_SEED ?? 6);
  corpus = await mod.openCorpusHost(12, seed);
  ({ listed, described } = corpus);
  store = createAppStore(corpus.api);
}, 60_000);

// A render that throws, or React complaining about what it was given, shows up here.
let consoleError: MockInstance<typeof console.error>;
beforeEach(() => {
  consoleError = vi.spyOn(console, 'error');
});
afterEach(() => {
  cleanup();
  expect(consoleError).not.toHaveBeenCalled();
  consoleError.mockRestore();
});

afterAll(async () => {
  store?.getState().dispose();
  await corpus?.close();
});

describe('the malformed corpus in the UI', () => {
  // A list tall enough for the virtualiser to render every row.
  layOutElements(20_000);

  it('lists every task, each unreadable one with its reason in its row', async () => {
    renderApp(store);
    const list = await screen.findByRole('listbox', { name: 'Task list' });
    await waitFor(() => expect(within(list).getAllByRole('option')).toHaveLength(listed.length));
    expect(listed.map((t) => t.task_id).sort()).toEqual([...described.keys(), 'healthy'].sort());

    for (const [kind, reason] of LONE) {
      const t = listed.find((x) => x.task_id === `lone-${kind}`)!;
      expect(t.display_status, described.get(t.task_id)).toBe('unreadable');
      expect(
        t.problems.map((p) => p.reason),
        described.get(t.task_id),
      ).toContain(reason);
    }
    for (const t of listed) {
      // Rows are named by their content (the task's name may differ from its id): found by their id.
      const row = within(list)
        .getAllByRole('option')
        .find((r) => r.id === `task-row-${t.task_id.replace(/[^A-Za-z0-9_-]/g, '_')}`)!;
      expect(row, described.get(t.task_id)).toBeDefined();
      if (t.display_status !== 'unreadable') continue;
      const problem = t.problems.find((p) => p.severity === 'error') ?? t.problems[0];
      expect(row.textContent, described.get(t.task_id)).toContain('Unreadable');
      expect(row.textContent, described.get(t.task_id)).toContain(`${problem.file}: ${problem.message}`);
    }
  });

  it('opens every task, showing each problem the host found', async () => {
    renderApp(store);
    // Each task is read by a real host from the corpus: on a loaded machine that takes more than waitFor's default second.
    const hostRead = { timeout: 15_000 };
    for (const t of listed) {
      act(() => store.getState().selectTask(t.task_id));
      if (t.problems.some((p) => p.reason === 'outside-root')) {
        // The host reads nothing of a task with a link out of the root: the view says so instead.
        await waitFor(() => expect(store.getState().detailState).toBe('error'), hostRead);
        const refusal = (await screen.findByRole('heading', { name: `Could not open ${t.task_id}` }, hostRead)).parentElement!;
        expect(refusal.textContent).toMatch(/outside the checkpoint directory.*nothing was done/);
        continue;
      }
      await waitFor(() => expect(store.getState().detail?.summary.task_id).toBe(t.task_id), hostRead);
      const detail = store.getState().detail!;
      if (detail.problems.length === 0) continue;
      const section = await screen.findByRole(
        detail.problems.some((p) => p.severity === 'error') ? 'alert' : 'note',
        {
          name: "Problems with this task's files",
        },
        hostRead,
      );
      if (!detail.checkpoint) expect(section.textContent).toContain('This task cannot be read');
      for (const p of detail.problems) expect(section.textContent, described.get(t.task_id)).toContain(`${p.file}: ${p.message}`);
    }
  });
});

describe('the recovery account in the UI', () => {
  it('shows what an interrupted save left behind after a verify', async () => {
    await corpus.interruptSave('healthy', 3);
    renderApp(store);
    act(() => store.getState().selectTask('healthy'));
    await screen.findByRole('heading', { level: 1, name: /healthy/ }, { timeout: 15_000 });
    fireEvent.click(screen.getByRole('tab', { name: /^Artifacts/ }));
    fireEvent.click(await screen.findByRole('button', { name: /^(Re-)?[Vv]erify$/ }));
    // A real host reads the corpus: on a loaded machine opening and verifying take more than the default second.
    const account = await screen.findByRole('region', { name: 'Recovery after an interruption' }, { timeout: 15_000 });
    expect(account.textContent).toContain('task healthy recovered to version 2');
    expect(account.textContent).toContain('the save of version 3 was interrupted before its commit point');
  });
});
