/**
 * Tasks in the source articles' formats are read-only until resumed. Resuming
 * one that is clearly checkpoint-demo's (the first article's four steps)
 * imports it and continues with that agent; any other is refused, with
 * nothing written. Through the CLI, with real worker processes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';

let root: string;

// The demo's third step fails on purpose unless told otherwise.
useOfflineWorkers({ SKIP_FAILURE: '1' });
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-legacy-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** The first article's demo file after two of its four steps. */
function articleTask(results: Record<string, string>, total = 4) {
  const names = Object.keys(results);
  return {
    task_id: 'demo-task-001',
    current_step: names.length,
    total_steps: total,
    history: names.flatMap((n) => [
      { role: 'user', content: `prompt for ${n}` },
      { role: 'assistant', content: results[n] },
    ]),
    results,
    created_at: '2026-01-10 10:00:00',
    updated_at: '2026-01-10 10:01:30',
    metrics: { total_tokens: 1234, elapsed_seconds: 90 },
  };
}

describe('resuming a legacy task', () => {
  it("imports the first article's demo task and finishes it with checkpoint-demo, leaving the file untouched", async () => {
    const file = path.join(root, 'demo-task-001.json');
    const text = JSON.stringify(articleTask({ 分析需求: 'sub-tasks: a, b', 编写代码: 'def weather(city): ...' }), null, 2);
    await fs.writeFile(file, text);
    expect((await openStore(root).getTask('demo-task-001'))!.read_only).toBe(true);

    const r = await cli('resume', root, 'demo-task-001');
    expect(r.code).toBe(RunExit.done);
    expect(r.out).toContain('for agent checkpoint-demo; the original file is untouched');
    expect(await fs.readFile(file, 'utf8')).toBe(text);

    const store = openStore(root);
    const entry = (await store.getTask('demo-task-001'))!;
    expect(entry.format).toBe('waystation');
    const cp = entry.checkpoint!;
    expect(cp.status).toBe('done');
    expect(cp.agent).toMatchObject({ name: 'checkpoint-demo' });
    expect(cp.plan.map((s) => s.id)).toEqual(['analyse', 'write-code', 'check-errors', 'generate-tests']);
    // The agent's ids, the names the article recorded.
    expect(cp.plan.map((s) => s.name)).toEqual(['分析需求', '编写代码', 'step 3', 'step 4']);
    // The two finished steps were carried over, not run again.
    expect(cp.plan.map((s) => s.attempts)).toEqual([1, 1, 1, 1]);
    expect(await store.readBlob('demo-task-001', cp.plan[1].result_ref!)).toBe('def weather(city): ...');
    const history = await store.history('demo-task-001');
    expect(history.slice(0, 2).map((v) => v.source.kind)).toEqual(['import', 'import']);
    expect(history[0].source.imported_from).toEqual({ path: 'demo-task-001.json', format: 'article-task-json' });
  });

  it('refuses a legacy task no agent recognises: it stays inspectable and nothing is written', async () => {
    const file = path.join(root, 'other.json');
    const text = JSON.stringify(articleTask({ fetch: 'x', parse: 'y' }, 3));
    await fs.writeFile(file, text);
    const folder = path.join(root, 'plan-task');
    await fs.mkdir(folder);
    await fs.writeFile(
      path.join(folder, 'checkpoint.json'),
      JSON.stringify({ task_id: 'plan-task', phase: 'writing', plan: [{ step: 'draft', status: 'done' }], resume_hint: 'go on' }),
    );

    for (const id of ['other', 'plan-task']) {
      const r = await cli('resume', root, id);
      expect(r.code).toBe(RunExit.usage);
      expect(r.err).toContain('it can be inspected, but no agent is known to resume it');
      expect(r.err).toContain('Nothing was imported or written');
    }
    expect(await fs.readFile(file, 'utf8')).toBe(text);
    expect((await fs.readdir(root)).sort()).toEqual(['other.json', 'plan-task']);
    expect(await fs.readdir(folder)).toEqual(['checkpoint.json']);
    const shown = await cli('show', root, 'other', '--json');
    expect(shown.code).toBe(0);
  });
});
