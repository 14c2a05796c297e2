import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import type { LangGraphSource } from '../../../../electron/sources/langgraph/langgraph-source.js';
import { fingerprint } from '../../../support/langgraph-sqlite.js';
import { PY_START_MS, writePythonDatabase } from '../../../support/python-sqlite.js';

let dir: string;
let file: string;
let source: LangGraphSource;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-py-langgraph-'));
  file = path.join(dir, 'checkpoints.sqlite');
  writePythonDatabase(file);
  source = await openLangGraphSource(file);
});

afterAll(async () => {
  await source?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const lg = (cp: Checkpoint) => (cp as unknown as { langgraph: Record<string, unknown> }).langgraph;

describe("a SQLite file in the format of Python's SqliteSaver and JsonPlusSerializer", () => {
  it('maps the tool-calling thread field by field', async () => {
    const cp = (await source.getTask('py-agent'))!.checkpoint!;
    expect(cp.version).toBe(5);
    expect(cp.status).toBe('done');
    expect(cp.plan.map((s) => [s.id, s.status])).toEqual([
      ['agent', 'done'],
      ['tools', 'done'],
    ]);
    expect(cp.goal).toBe('What is the weather in Paris?');
    // usage_metadata of both AI messages, summed.
    expect([cp.run.tokens_in, cp.run.tokens_out]).toEqual([60, 12]);
    expect(cp.run.created_at).toBe(new Date(PY_START_MS).toISOString());
    expect(cp.run.updated_at).toBe(new Date(PY_START_MS + 4000).toISOString());
    expect(lg(cp).metadata).toEqual({ source: 'loop', step: 3, parents: {} });
    expect(lg(cp).ts).toBe('2025-03-01T09:00:04.000+00:00');
    expect(lg(cp).channels).toEqual({
      asked_at: { $type: 'datetime.datetime', $value: '2025-03-01T09:00:03.500000+00:00' },
      cities: { $type: 'builtins.set', $value: ['Paris'] },
      ticket: { $type: 'app.state.Ticket', id: 7, status: { $type: 'app.state.Status', $value: 'open' } },
    });
    expect(lg(cp).channel_versions).toMatchObject({ messages: '00000000000000000000000000000005.0.12345678901234' });
  });

  it("renders Python's Pydantic message dumps as the conversation", async () => {
    const messages = await source.readHistory('py-agent');
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is the weather in Paris?'],
      ['assistant', '→ calls get_weather({"city":"Paris"}) [call-1]'],
      ['tool', 'get_weather returned [call-1]:\nSunny, 21°C'],
      ['assistant', 'It is sunny in Paris.'],
    ]);
    expect(messages.map((m) => m.langchain_class)).toEqual(['HumanMessage', 'AIMessage', 'ToolMessage', 'AIMessage']);
    expect(messages[1].usage).toEqual({ input_tokens: 20, output_tokens: 5, total_tokens: 25 });
  });

  it("finds the next nodes from Python's string channel versions", async () => {
    const [afterInput, afterAgent] = await source.readVersions('py-agent', [2, 3]);
    expect(lg(afterInput).next).toEqual(['agent']);
    // A step of the run, which went on: running at that point.
    expect(afterInput.status).toBe('running');
    expect(afterInput.resume_hint).toBe('agent was due at this checkpoint; the thread has later checkpoints.');
    expect(lg(afterAgent).next).toEqual(['tools']);
  });

  it('shows an Interrupt dataclass in __interrupt__ writes as waiting for a human, with its value', async () => {
    const cp = (await source.getTask('py-waiting'))!.checkpoint!;
    expect(cp.status).toBe('waiting_human');
    expect(lg(cp).waiting_for_human).toEqual([{ question: 'Really delete?', files: 3 }]);
    expect(lg(cp).interrupts).toEqual([{ id: 'int-1', value: { question: 'Really delete?', files: 3 }, task_id: 'task-1' }]);
  });

  it('lists an encrypted checkpoint with its reason and shows the thread as of the checkpoint before it', async () => {
    const entry = (await source.getTask('py-encrypted'))!;
    expect(entry.checkpoint?.version).toBe(1);
    expect(entry.problems).toHaveLength(1);
    expect(entry.problems[0]).toMatchObject({ reason: 'unreadable', severity: 'error' });
    expect(entry.problems[0].message).toMatch(/encrypted with "aes".*does not hold the key/);
    const history = await source.history('py-encrypted');
    expect(history.map((v) => v.source.note)).toEqual(['input, step -1', 'loop, step 0, encrypted']);
    await expect(source.readVersion('py-encrypted', 2)).rejects.toThrow(/encrypted/);
    expect((await source.readHistory('py-encrypted', 1))[0].content).toBe('secret plans');
  });

  it('lists a truncated checkpoint with the reason, the thread still listed', async () => {
    const tasks = await source.listTasks();
    const entry = tasks.find((t) => t.task_id === 'py-truncated')!;
    expect(entry.checkpoint).toBeNull();
    expect(entry.problems).toEqual([expect.objectContaining({ reason: 'truncated', message: expect.stringContaining('ends early') })]);
    // Every other thread stays browsable.
    expect(tasks.filter((t) => t.checkpoint !== null).map((t) => t.task_id)).toEqual([
      'py-agent',
      'py-encrypted',
      'py-pickled-write',
      'py-waiting',
    ]);
  });

  it('never loads a pickled write: it is reported and marked, the checkpoint shown', async () => {
    const entry = (await source.getTask('py-pickled-write'))!;
    // agent's task saved a write and no checkpoint followed: agent finished, the run stopped before it was saved.
    expect(entry.checkpoint?.status).toBe('running');
    expect(entry.checkpoint?.plan.map((s) => [s.id, s.status])).toEqual([['agent', 'done']]);
    expect(entry.problems.map((p) => p.message)).toEqual([expect.stringMatching(/pending write to scratch: serialized with pickle/)]);
    expect(lg(entry.checkpoint!).pending_writes).toEqual([
      { task_id: 'task-1', channel: 'scratch', value: { $undecodable: expect.stringContaining('pickle') } },
    ]);
  });

  it('reads it without changing a byte', async () => {
    const before = fingerprint(file);
    const again = await openLangGraphSource(file);
    for (const t of await again.listTasks()) await again.history(t.task_id);
    await again.close();
    expect(fingerprint(file)).toEqual(before);
  });
});
