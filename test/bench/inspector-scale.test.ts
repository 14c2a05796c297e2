/**
 * The inspector-at-scale benchmark, run end to end at a tiny size: the
 * fixture reads back through the store as the writer wrote it, the host lists
 * every task, events and diffs arrive, and the report quotes what was
 * measured. Nothing here is timed; speed is the benchmark's business.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../electron/store/directory-store.js';
import { runInspectorScale, type InspectorScaleResult } from '../../bench/lib/inspector-scale.js';
import { formatInspectorScale } from '../../bench/lib/inspector-scale-report.js';
import { checkStampedTask, ensureScaleFixture, scaleTaskId } from '../../bench/lib/scale-fixture.js';

describe('the inspector-at-scale benchmark at 50 tasks', () => {
  let cacheDir: string;
  let result: InspectorScaleResult;

  beforeAll(async () => {
    cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-scale-test-'));
    result = await runInspectorScale({
      tasks: 50,
      versionsPerTask: 3,
      diffBytes: 200 * 1024,
      writes: 3,
      writeSpacingMs: 20,
      runs: 1,
      browser: false,
      cacheDir,
    });
  }, 120_000);

  afterAll(async () => {
    if (cacheDir) await fs.rm(cacheDir, { recursive: true, force: true });
  });

  it('writes a fixture the store reads back: every task, every version', async () => {
    expect(result.fixture.cached).toBe(false);
    expect(result.fixture.versions).toBe(150);
    const store = openStore(result.fixture.root);
    const tasks = await store.listTasks();
    expect(tasks.map((t) => t.task_id)).toEqual(Array.from({ length: 50 }, (_, i) => scaleTaskId(i)));
    expect(tasks.every((t) => t.problems.length === 0)).toBe(true);
    // The event measurement wrote to a probe task of its own and removed it: the fixture is as generated.
    for (const t of tasks) expect(t.checkpoint?.version).toBe(3);
  });

  it('stamps tasks byte for byte as the store writes them', async () => {
    await expect(checkStampedTask(result.fixture.root, 7, 3)).resolves.toBeUndefined();
  });

  it('reuses the cached fixture on the next run', async () => {
    const again = await ensureScaleFixture({ tasks: 50, versionsPerTask: 3, cacheDir });
    expect(again.cached).toBe(true);
    expect(again.root).toBe(result.fixture.root);
  });

  it('lists every task over the API, reports every event and diffs what changed', () => {
    expect(result.listing.tasks).toBe(50);
    expect(result.listing.problemsListed).toBe(0);
    // The scripts' listing carries each task's plan beside the row the app lists.
    expect(result.listing.restBytes).toBeGreaterThan(result.listing.responseBytes);
    expect(result.events.missed).toBe(0);
    expect(result.events.host.count).toBe(3);
    // Three steps finished between the two versions; the HTTP answer was checked against the in-process diff.
    expect(result.diff.stepTransitions).toBe(3);
    expect(result.diff.entries).toBeGreaterThan(3);
    expect(result.memory.host.rss).toBeGreaterThan(result.memory.host.heapUsed);
    expect(result.memory.baseline.held).toBe(50);
  });

  it('quotes the measured figures in its report', () => {
    const report = formatInspectorScale(result);
    expect(report).toContain('listTasks, first after open (50 tasks');
    expect(report).toContain('GET /api/tasks (as `ls --json`, plans included');
    expect(report).toContain(`${result.diff.entries} entries`);
    expect(report).toContain('(3 writes)');
    expect(report).not.toContain('first task rows');
  });
});
