import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import type { LangGraphSource } from '../../../../electron/sources/langgraph/langgraph-source.js';
import { threadOf } from '../../../../electron/sources/langgraph/task-ids.js';
import { closeSaver, fingerprint } from '../../../support/langgraph-sqlite.js';
import { researchGraph, SUBGRAPH_THREAD } from '../../../support/langgraph-subgraph.js';
import { captureCli } from '../../cli/capture-cli.js';

let dir: string;
let file: string;
let source: LangGraphSource;
let subTask: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-lg-subgraph-'));
  file = path.join(dir, 'checkpoints.sqlite');
  const saver = SqliteSaver.fromConnString(file);
  try {
    await researchGraph(saver).invoke({ topic: 'tides' }, { configurable: { thread_id: SUBGRAPH_THREAD } });
  } finally {
    closeSaver(saver);
  }
  source = await openLangGraphSource(file);
  const tasks = await source.listTasks();
  subTask = tasks.map((t) => t.task_id).find((id) => id.startsWith(`${SUBGRAPH_THREAD}#`))!;
});

afterAll(async () => {
  await source?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const lg = (cp: unknown) => (cp as { langgraph: Record<string, unknown> }).langgraph;

describe('a thread whose graph has a subgraph, written by real LangGraph', () => {
  it("lists the subgraph's namespace as a task of its own beside the parent thread", async () => {
    const ids = (await source.listTasks()).map((t) => t.task_id);
    expect(ids).toContain(SUBGRAPH_THREAD);
    expect(subTask).toBeDefined();
    const { thread_id, checkpoint_ns } = threadOf(subTask);
    expect(thread_id).toBe(SUBGRAPH_THREAD);
    expect(checkpoint_ns).toMatch(/^research:/);
  });

  it("shows the subgraph's checkpoints: its own nodes, its state, its namespace", async () => {
    const entry = (await source.getTask(subTask))!;
    const cp = entry.checkpoint!;
    expect(cp.task_name).toBe(`${SUBGRAPH_THREAD} (${threadOf(subTask).checkpoint_ns})`);
    expect(lg(cp).checkpoint_ns).toBe(threadOf(subTask).checkpoint_ns);
    expect(cp.plan.map((s) => [s.id, s.status])).toEqual([
      ['draft', 'done'],
      ['review', 'done'],
    ]);
    expect(lg(cp).channels).toMatchObject({ topic: 'tides', findings: ['draft about tides', 'reviewed 1 finding(s)'] });
    const parent = (await source.getTask(SUBGRAPH_THREAD))!.checkpoint!;
    expect(lg(parent).channels).toMatchObject({ summary: 'tides: plan for tides; draft about tides; reviewed 1 finding(s)' });
    expect(parent.plan.map((s) => s.id)).toEqual(['plan', 'research', 'write']);
  });

  it('lists, shows, walks and diffs the subgraph thread from the CLI, changing not a byte', async () => {
    const before = fingerprint(file);
    const ls = await captureCli('ls', file, '--json');
    expect(ls.code).toBe(0);
    expect((JSON.parse(ls.out) as { task_id: string }[]).map((t) => t.task_id)).toContain(subTask);
    const history = await captureCli('history', file, subTask, '--json');
    expect(history.code).toBe(0);
    const versions = JSON.parse(history.out) as { version: number; source: { note: string } }[];
    expect(versions.length).toBeGreaterThanOrEqual(3);
    const show = await captureCli('show', file, subTask, '--version', '1');
    expect(show.code).toBe(0);
    expect(show.out).toContain(SUBGRAPH_THREAD);
    const diff = await captureCli('diff', file, subTask, '1', String(versions.length), '--json');
    expect(diff.code).toBe(0);
    const words = (JSON.parse(diff.out) as { langgraph: { channels_changed: string[]; channels_added: string[] } }).langgraph;
    expect([...words.channels_changed, ...words.channels_added]).toContain('findings');
    expect(fingerprint(file)).toEqual(before);
  });
});
