/**
 * Threads whose run stopped before it ended, written by real LangGraph runs
 * that pause at a breakpoint, die inside a node, die after a node returned,
 * die after an answered interrupt, or fail (test/support/langgraph-stopped-run.ts):
 * the status each is shown with, its plan, and a hint that says what LangGraph
 * then does, checked by resuming a copy of the thread with LangGraph itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { toTaskSummary } from '../../../../shared/checkpoint/task-summary.js';
import { needsAttention } from '../../../../renderer/src/store/task-filter.js';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import type { LangGraphSource } from '../../../../electron/sources/langgraph/langgraph-source.js';
import { planThenAct, reviewGraph, RunState, runStopped, STOPPED_RUNS, type StoppedRun } from '../../../support/langgraph-stopped-run.js';
import { closeSaver } from '../../../support/langgraph-sqlite.js';
import { createDatabase } from '../../../support/postgres-cluster.js';
import { captureCli } from '../../cli/capture-cli.js';
import { LEASE_TTL_ENV } from '../../../../electron/store/lease-record.js';

let dir: string;
let file: string;
let source: LangGraphSource;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-stopped-'));
  file = path.join(dir, 'runs.sqlite');
  for (const run of STOPPED_RUNS) runStopped(run, file);
  source = await openLangGraphSource(file);
}, 180_000);

afterAll(async () => {
  await source?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const lg = (cp: Checkpoint) => (cp as unknown as { langgraph: Record<string, unknown> }).langgraph;
const steps = (cp: Checkpoint) => cp.plan.map((s) => [s.id, s.status]);

async function shown(thread: StoppedRun) {
  const entry = (await source.getTask(thread))!;
  return { cp: entry.checkpoint!, summary: toTaskSummary(entry) };
}

/** A copy of the SQLite file (with its -wal and -shm) to resume a thread in, so the source's file stays as LangGraph left it. */
function copyOfFile(): { saver: SqliteSaver; done: () => void } {
  const copyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-stopped-copy-'));
  for (const suffix of ['', '-wal', '-shm']) {
    if (fs.existsSync(`${file}${suffix}`)) fs.copyFileSync(`${file}${suffix}`, path.join(copyDir, `runs.sqlite${suffix}`));
  }
  const saver = SqliteSaver.fromConnString(path.join(copyDir, 'runs.sqlite'));
  return {
    saver,
    done: () => {
      closeSaver(saver);
      fs.rmSync(copyDir, { recursive: true, force: true });
    },
  };
}

/** `fn` run with WAYSTATION_LEASE_TTL_MS set to `ms`, as the CLI reads it. */
async function withLeaseTtl<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const before = process.env[LEASE_TTL_ENV];
  process.env[LEASE_TTL_ENV] = String(ms);
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env[LEASE_TTL_ENV];
    else process.env[LEASE_TTL_ENV] = before;
  }
}

const config = (thread: StoppedRun) => ({ configurable: { thread_id: thread } });

describe('LangGraph threads whose run stopped before it ended', () => {
  it('shows a thread paused at a breakpoint as interrupted, in Needs attention, stopped before the node', async () => {
    const { cp, summary } = await shown('breakpoint');
    expect(cp.status).toBe('running');
    expect(summary.display_status).toBe('interrupted');
    expect(needsAttention(summary)).toBe(true);
    expect(cp.phase).toBe('next: act');
    expect(steps(cp)).toEqual([
      ['plan', 'done'],
      ['act', 'pending'],
    ]);
    expect(lg(cp).next).toEqual(['act']);
    expect(cp.resume_hint).toContain('at a breakpoint (interruptBefore/interruptAfter)');
    expect(cp.resume_hint).toContain('Invoking the graph on thread "breakpoint" with no new input runs act.');
  });

  it('shows a process that died inside a node the same way: LangGraph saved the same rows', async () => {
    const { cp, summary } = await shown('cut-off');
    expect([cp.status, summary.display_status, needsAttention(summary)]).toEqual(['running', 'interrupted', true]);
    expect(cp.phase).toBe('next: act');
    expect(cp.resume_hint).toContain('a process that ended (or still runs) inside act');
  });

  it('shows every version before the newest as running at that point, never halted', async () => {
    for (const thread of STOPPED_RUNS) {
      const history = await source.history(thread);
      const earlier = await source.readVersions(
        thread,
        history.slice(0, -1).map((v) => v.version),
      );
      expect(earlier.map((cp) => cp.status)).toEqual(earlier.map(() => 'running'));
    }
    const diff = await captureCli('diff', file, 'breakpoint', '2', '3');
    expect(diff.code).toBe(0);
    expect(diff.out).not.toContain('halted');
    expect(diff.out).toContain('next: plan → next: act');
  });

  it('shows a node whose writes were saved as done, and says invoking applies them and runs the next node, as LangGraph does', async () => {
    const { cp, summary } = await shown('after-plan');
    expect([cp.status, summary.display_status]).toEqual(['running', 'interrupted']);
    expect(steps(cp)).toEqual([
      ['plan', 'done'],
      ['act', 'pending'],
    ]);
    expect(cp.current_step).toBe(1);
    expect(cp.phase).toBe('plan finished, not checkpointed; next: act');
    expect(lg(cp).next).toEqual(['act']);
    expect(lg(cp).finished).toEqual(['plan']);
    expect(cp.resume_hint).toContain('applies them (plan does not run again) and runs act');

    // LangGraph itself, invoked with no input on a copy: plan is not run again, act runs.
    const copy = copyOfFile();
    try {
      const result = await planThenAct(copy.saver, () => ({ log: ['acted'] })).invoke(null, config('after-plan'));
      expect(result.log).toEqual(['go', 'planned', 'acted']);
    } finally {
      copy.done();
    }
  });

  it('shows a step cut off halfway: the node that returned done, the other still to run', async () => {
    const { cp } = await shown('parallel');
    expect(steps(cp)).toEqual([
      ['plan', 'done'],
      ['research', 'pending'],
    ]);
    expect(cp.phase).toBe('in research (plan finished)');
    expect(lg(cp).next).toEqual(['research']);
    expect(cp.resume_hint).toContain('runs research; the saved writes are applied, and plan does not run again');

    const copy = copyOfFile();
    try {
      const graph = new StateGraph(RunState)
        .addNode('plan', () => ({ log: ['planned again'] }))
        .addNode('research', () => ({ log: ['researched'] }))
        .addNode('act', () => ({ log: ['acted'] }))
        .addEdge(START, 'plan')
        .addEdge(START, 'research')
        .addEdge(['plan', 'research'], 'act')
        .addEdge('act', END)
        .compile({ checkpointer: copy.saver });
      const result = await graph.invoke(null, config('parallel'));
      expect(result.log).toEqual(['go', 'planned', 'researched', 'acted']);
    } finally {
      copy.done();
    }
  });

  it('shows an answered interrupt whose run died as interrupted in that node, which runs again with the saved answer', async () => {
    const { cp, summary } = await shown('answered');
    expect([cp.status, summary.display_status]).toEqual(['running', 'interrupted']);
    expect(cp.phase).toBe('answered; in review');
    expect(lg(cp).waiting_for_human).toBeUndefined();
    expect(cp.resume_hint).toContain('runs review again, which gets the saved answer');

    const copy = copyOfFile();
    try {
      const result = await reviewGraph(copy.saver).invoke(null, config('answered'));
      expect(result.log).toEqual(['go', 'drafted', 'answer: yes']);
    } finally {
      copy.done();
    }
  });

  it('shows a node that threw as failed, in Needs attention', async () => {
    const { cp, summary } = await shown('fails');
    expect([cp.status, summary.display_status, needsAttention(summary)]).toEqual(['failed', 'failed', true]);
    expect(steps(cp)).toEqual([
      ['plan', 'done'],
      ['act', 'failed'],
    ]);
    expect(cp.errors).toEqual([expect.objectContaining({ step_id: 'act', what: 'the act API answered 503' })]);
  });

  it('ls lists them with these statuses and phases: running while their newest checkpoint is young, then interrupted', async () => {
    // Within the lease's time-to-live (an hour here, so that however long the runs above took, they are young): each
    // could be a run between its steps.
    const young = await withLeaseTtl(3_600_000, () => captureCli('ls', file));
    expect(young.code).toBe(0);
    expect(young.out).toMatch(/breakpoint\s+running\s+1\/2\s+next: act/);
    expect(young.out).toMatch(/fails\s+failed\s+1\/2\s+failed in act/);
    const { code, out } = await withLeaseTtl(1, () => captureCli('ls', file));
    expect(code).toBe(0);
    expect(out).not.toContain('halted');
    expect(out).not.toMatch(/\brunning\b/);
    expect(out).toMatch(/breakpoint\s+interrupted\s+1\/2\s+next: act/);
    expect(out).toMatch(/after-plan\s+interrupted\s+1\/2\s+plan finished, not checkpointed; next: act/);
  });

  it('says a young thread is driven by a LangGraph run, as of its newest checkpoint, and an old one by nothing', async () => {
    const entry = (await source.getTask('breakpoint'))!;
    const lease = await source.readLease('breakpoint', { ttlMs: 3_600_000 });
    expect(lease.info).toEqual({ held: true, owner: 'a LangGraph run', since: expect.any(String) });
    // The time its newest checkpoint's id holds, at most the time of the checkpoint itself.
    const since = Date.parse(lease.info.since!);
    expect(since).toBeLessThanOrEqual(Date.parse(entry.checkpoint!.run.updated_at) + 1);
    // Held until the time-to-live (30 s unless set) has passed since then.
    expect((await source.readLease('breakpoint', { now: since + 29_999 })).info.held).toBe(true);
    expect((await source.readLease('breakpoint', { now: since + 30_000 })).info).toEqual({ held: false });
    expect((await source.readLease('breakpoint', { ttlMs: 10, now: since + 10 })).info.held).toBe(false);
    expect((await source.readLease('no-such-thread')).info).toEqual({ held: false });
  });
});

describe('the same runs stopped in a PostgreSQL database', () => {
  let url: string;
  let pgSource: LangGraphSource;

  beforeAll(async () => {
    url = await createDatabase('lgstopped');
    runStopped('breakpoint', url);
    runStopped('after-plan', url);
    pgSource = await openLangGraphSource(url);
  }, 120_000);

  afterAll(async () => {
    await pgSource?.close();
  });

  it("maps them as in SQLite: checkpoint_writes' saved writes make plan done", async () => {
    const paused = (await pgSource.getTask('breakpoint'))!.checkpoint!;
    expect([paused.status, paused.phase]).toEqual(['running', 'next: act']);
    const afterPlan = (await pgSource.getTask('after-plan'))!.checkpoint!;
    expect(steps(afterPlan)).toEqual([
      ['plan', 'done'],
      ['act', 'pending'],
    ]);
    expect(afterPlan.resume_hint).toContain('applies them (plan does not run again) and runs act');
  });
});
