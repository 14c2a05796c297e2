import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HumanMessage } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { checkInvariants } from '../../../../shared/checkpoint/invariants.js';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import type { LangGraphSource } from '../../../../electron/sources/langgraph/langgraph-source.js';
import { THREADS, weatherAgent, weatherOf } from '../../../support/langgraph-graphs.js';
import { closeSaver, fingerprint, scenarioDatabase } from '../../../support/langgraph-sqlite.js';

let dir: string;
let file: string;
let source: LangGraphSource;

beforeAll(async () => {
  ({ dir, file } = await scenarioDatabase());
  source = await openLangGraphSource(file);
});

afterAll(async () => {
  await source?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const lg = (cp: Checkpoint) => (cp as unknown as { langgraph: Record<string, unknown> }).langgraph;

describe('a LangGraph SQLite file written by real LangGraph, as a source', () => {
  it('lists one read-only task per thread, in id order, with what each thread is doing', async () => {
    const tasks = await source.listTasks();
    expect(tasks.map((t) => t.task_id)).toEqual([THREADS.approved, THREADS.waiting, THREADS.edited, THREADS.weather, THREADS.weatherTwice]);
    for (const t of tasks) {
      expect(t).toMatchObject({ format: 'langgraph', read_only: true, problems: [] });
    }
    const status = Object.fromEntries(tasks.map((t) => [t.task_id, t.checkpoint?.status]));
    expect(status).toEqual({
      [THREADS.approved]: 'done',
      [THREADS.waiting]: 'waiting_human',
      [THREADS.edited]: 'done',
      [THREADS.weather]: 'done',
      [THREADS.weatherTwice]: 'done',
    });
  });

  it("shows an interrupt() as waiting for a human, with the interrupt's value and the node it stopped in", async () => {
    const entry = await source.getTask(THREADS.waiting);
    const cp = entry!.checkpoint!;
    expect(cp.status).toBe('waiting_human');
    expect(cp.phase).toBe('waiting for a human in review');
    expect(cp.plan.map((s) => [s.id, s.status])).toEqual([
      ['write_draft', 'done'],
      ['review', 'pending'],
    ]);
    expect(lg(cp).next).toEqual(['review']);
    expect(lg(cp).waiting_for_human).toEqual([{ question: 'Send this email?', draft: 'Dear team, the release is on Friday.' }]);
    expect(cp.resume_hint).toContain('Send this email?');
    expect(lg(cp).channels).toMatchObject({ draft: 'Dear team, the release is on Friday.' });
  });

  it('shows an interrupt answered with a Command as answered, and the run that followed', async () => {
    const history = await source.history(THREADS.approved);
    const versions = await source.readVersions(
      THREADS.approved,
      history.map((v) => v.version),
    );
    const interrupted = versions.find((cp) => (lg(cp).interrupts as unknown[]).length > 0)!;
    // Answered, and the run went on from it: a step of the run.
    expect(interrupted.status).toBe('running');
    expect((lg(interrupted).pending_writes as { channel: string }[]).map((w) => w.channel)).toContain('__resume__');
    const last = versions[versions.length - 1];
    expect(last.status).toBe('done');
    expect(lg(last).channels).toMatchObject({ approved: true });
    expect((await source.readHistory(THREADS.approved)).map((m) => m.content)).toEqual(['lunch is at noon.', 'Email sent.']);
  });

  it('numbers the checkpoints as versions, oldest first, keeping each checkpoint id, its parent and its metadata', async () => {
    const history = await source.history(THREADS.weather);
    expect(history.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(history.map((v) => v.source.note)).toEqual(['input, step -1', 'loop, step 0', 'loop, step 1', 'loop, step 2', 'loop, step 3']);
    const cps = await source.readVersions(THREADS.weather, [1, 2, 5]);
    expect(lg(cps[0]).parent_checkpoint_id).toBeNull();
    expect(lg(cps[1]).parent_checkpoint_id).toBe(lg(cps[0]).checkpoint_id);
    expect(lg(cps[2]).metadata).toMatchObject({ source: 'loop', step: 3 });
    // The times in History are each checkpoint's own ts (the last of a run keeps the id of the one before it).
    expect(Math.abs(Date.parse(history[4].updated_at) - Date.parse(String(lg(cps[2]).ts)))).toBeLessThanOrEqual(1);
  });

  it("times a version by the checkpoint's own ts, not by the id it kept from the checkpoint before", async () => {
    const copy = path.join(dir, 'ts-copy.sqlite');
    fs.copyFileSync(file, copy);
    const db = new Database(copy);
    const last = db
      .prepare('SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1')
      .get(THREADS.weather) as { checkpoint_id: string };
    // As LangGraph's loop writes the checkpoint it exits with: the id of the one before, a ts of its own.
    db.prepare("UPDATE checkpoints SET checkpoint = json_set(CAST(checkpoint AS TEXT), '$.ts', ?) WHERE checkpoint_id = ?").run(
      '2030-01-02T03:04:05.678Z',
      last.checkpoint_id,
    );
    db.close();
    const other = await openLangGraphSource(copy);
    try {
      const history = await other.history(THREADS.weather);
      expect(history.at(-1)!.updated_at).toBe('2030-01-02T03:04:05.678Z');
      expect(history.at(-2)!.updated_at).not.toBe('2030-01-02T03:04:05.678Z');
      expect((await other.getTask(THREADS.weather))!.checkpoint!.run.updated_at).toBe('2030-01-02T03:04:05.678Z');
    } finally {
      await other.close();
    }
  });

  it('renders the tool-calling loop as messages: the question, the tool call, its result, the answer', async () => {
    const messages = await source.readHistory(THREADS.weather);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[0].content).toBe('What is the weather in Paris?');
    expect(messages[1].content).toBe('→ calls get_weather({"city":"Paris"}) [call-1]');
    expect(messages[1].tool_calls).toEqual([{ id: 'call-1', name: 'get_weather', args: { city: 'Paris' } }]);
    expect(messages[2]).toMatchObject({
      role: 'tool',
      tool_call_id: 'call-1',
      content: `get_weather returned [call-1]:\n${weatherOf('Paris')}`,
    });
    expect(messages[3].content).toBe(`The weather: ${weatherOf('Paris')}`);
    // No constructor envelope reaches the Messages tab.
    expect(JSON.stringify(messages)).not.toContain('"lc"');
  });

  it('shows an updateState as a human edit, and a fork as a branch from the version it started at', async () => {
    const history = await source.history(THREADS.edited);
    const update = history.find((v) => v.source.kind === 'human-edit')!;
    expect(update.source.note).toMatch(/^update, step 4$/);
    const fork = history.find((v) => /from version/.test(v.source.note ?? ''))!;
    expect(fork.source.note).toBe('update, step 1, from version 2');
    const forked = await source.readVersion(THREADS.edited, fork.version);
    expect(lg(forked).parent_version).toBe(2);
    const latest = (await source.getTask(THREADS.edited))!.checkpoint!;
    expect((await source.readHistory(THREADS.edited, latest.version)).map((m) => m.content)).toContain('Actually, what about Quito?');
    expect((await source.readHistory(THREADS.edited, update.version)).map((m) => m.content)).toContain('Thanks! Noted.');
  });

  it('gives every version of every thread as a valid Waystation checkpoint that keeps its own invariants', async () => {
    for (const task of await source.listTasks()) {
      const history = await source.history(task.task_id);
      for (const cp of await source.readVersions(
        task.task_id,
        history.map((v) => v.version),
      )) {
        expect(Checkpoint.safeParse(cp).success).toBe(true);
        // Checked as the listing checks a non-native task: its messages are in a channel, not a history blob chain.
        expect(checkInvariants(cp, 'checkpoint.json', { legacy: true })).toEqual([]);
      }
    }
  });

  it('reports a task or version that is not there', async () => {
    expect(await source.getTask('no-such-thread')).toBeNull();
    await expect(source.readVersion(THREADS.weather, 99)).rejects.toThrow(/versions 1 to 5, not 99/);
  });

  it('changes not a byte of the file, its -wal or its -shm, and creates neither', async () => {
    const before = fingerprint(file);
    const again = await openLangGraphSource(file);
    for (const t of await again.listTasks()) {
      const h = await again.history(t.task_id);
      await again.readVersions(
        t.task_id,
        h.map((v) => v.version),
      );
      await again.readHistory(t.task_id);
    }
    await again.close();
    expect(fingerprint(file)).toEqual(before);
    expect(before['-wal']).toBe('absent');
  });

  it('sees checkpoints that real LangGraph writes while it is open, and reads the file meanwhile', async () => {
    const before = (await source.history(THREADS.weather)).length;
    const saver = SqliteSaver.fromConnString(file);
    try {
      await weatherAgent(saver).invoke({ messages: [new HumanMessage('And in Lima?')] }, { configurable: { thread_id: THREADS.weather } });
      // The writer still has the file open (its -wal holds the new checkpoints): they are read from there.
      const during = await source.history(THREADS.weather);
      expect(during.length).toBeGreaterThan(before);
      expect((await source.readHistory(THREADS.weather)).at(-1)?.content).toBe(`The weather: ${weatherOf('Lima')}`);
    } finally {
      closeSaver(saver);
    }
    expect((await source.history(THREADS.weather)).length).toBeGreaterThan(before);
  });
});
