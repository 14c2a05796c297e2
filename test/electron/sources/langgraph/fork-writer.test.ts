import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { Command } from '@langchain/langgraph';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import { approvalGraph, THREADS, weatherAgent, weatherOf } from '../../../support/langgraph-graphs.js';
import { closeSaver, fingerprint, scenarioDatabase } from '../../../support/langgraph-sqlite.js';
import { captureCli } from '../../cli/capture-cli.js';
import { forkWeatherToRome, ROME_QUESTION } from '../../../support/langgraph-fork-cli.js';
import Database from 'better-sqlite3';

let dir: string;
let file: string;

beforeAll(async () => {
  ({ dir, file } = await scenarioDatabase());
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every row of the checkpoints table, as stored. */
function checkpointRows(): unknown[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        'SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, hex(checkpoint) AS c, hex(metadata) AS m FROM checkpoints ORDER BY 1, 2, 3',
      )
      .all();
  } finally {
    db.close();
  }
}

describe('fork-thread: a new checkpoint as updateState writes one, that real LangGraph carries on from', () => {
  it('without --write says what it would write and changes not a byte', async () => {
    const before = fingerprint(file);
    const { code, out } = await forkWeatherToRome(file, { write: false });
    expect(code).toBe(0);
    expect(out).toContain('Would write checkpoint');
    expect(out).toContain('Nothing was written: add --write to write it.');
    expect(fingerprint(file)).toEqual(before);
  });

  it('writes one new row with the chosen parent, source update and bumped versions; LangGraph then runs on the edited state', async () => {
    const rowsBefore = checkpointRows();
    const { code, out } = await forkWeatherToRome(file, { write: true });
    expect(code).toBe(0);
    const plan = JSON.parse(out) as {
      checkpoint_id: string;
      parent: { checkpoint_id: string; version: number };
      step: number;
      written: boolean;
      channels: { name: string; from: number; to: number }[];
    };
    expect(plan).toMatchObject({ written: true, step: 1, parent: { version: 2 } });
    expect(plan.channels).toEqual([{ name: 'messages', from: 2, to: 3 }]);
    const rowsAfter = checkpointRows();
    // Every row there before is there still, byte for byte; one more was added.
    expect(rowsAfter).toEqual(expect.arrayContaining(rowsBefore));
    expect(rowsAfter).toHaveLength(rowsBefore.length + 1);

    const saver = SqliteSaver.fromConnString(file);
    try {
      const agent = weatherAgent(saver);
      const config = { configurable: { thread_id: THREADS.weather } };
      const state = await agent.getState(config);
      expect(state.config.configurable?.checkpoint_id).toBe(plan.checkpoint_id);
      expect(state.metadata?.source).toBe('update');
      expect(state.parentConfig?.configurable?.checkpoint_id).toBe(plan.parent.checkpoint_id);
      expect(state.next).toEqual(['agent']);
      const result = await agent.invoke(null, config);
      const contents = result.messages.map((m) => String(m.content));
      expect(contents[0]).toBe(ROME_QUESTION);
      expect(contents.at(-1)).toBe(`The weather: ${weatherOf('Rome')}`);
      expect(result.messages[0].getType()).toBe('human');
    } finally {
      closeSaver(saver);
    }
    const source = await openLangGraphSource(file);
    const history = await source.history(THREADS.weather);
    const forked = history.find(
      (v) => (v.source as { langgraph?: { checkpoint_id: string } }).langgraph?.checkpoint_id === plan.checkpoint_id,
    )!;
    expect(forked.source).toMatchObject({ kind: 'human-edit', note: 'update, step 1, from version 2' });
    await source.close();
  });

  it('forks an interrupted thread with a new draft: LangGraph asks again about the new one, and a Command answers it', async () => {
    const { code } = await captureCli(
      'fork-thread',
      file,
      THREADS.waiting,
      '--checkpoint',
      '3',
      '--values',
      '{"draft": "Dear team, the release moved to Monday."}',
      '--write',
    );
    expect(code).toBe(0);
    const saver = SqliteSaver.fromConnString(file);
    try {
      const graph = approvalGraph(saver);
      const config = { configurable: { thread_id: THREADS.waiting } };
      await graph.invoke(null, config);
      const waiting = await graph.getState(config);
      expect(waiting.tasks.flatMap((t) => t.interrupts.map((i) => i.value))).toEqual([
        { question: 'Send this email?', draft: 'Dear team, the release moved to Monday.' },
      ]);
      const done = await graph.invoke(new Command({ resume: { approve: true } }), config);
      expect(done.approved).toBe(true);
    } finally {
      closeSaver(saver);
    }
  });

  it('refuses bookkeeping channels, values it cannot write, and checkpoints that are not there, writing nothing', async () => {
    const before = checkpointRows();
    expect(await captureCli('fork-thread', file, THREADS.weather, '--checkpoint', '99', '--values', '{"x": 1}', '--write')).toMatchObject({
      code: 1,
      err: expect.stringContaining('has no checkpoint 99'),
    });
    expect(
      await captureCli('fork-thread', file, THREADS.weather, '--checkpoint', '2', '--values', '{"branch:to:agent": 1}', '--write'),
    ).toMatchObject({ code: 1, err: expect.stringContaining("LangGraph's own bookkeeping") });
    expect(
      await captureCli(
        'fork-thread',
        file,
        THREADS.weather,
        '--checkpoint',
        '2',
        '--values',
        '{"when": {"$type": "datetime.datetime", "$value": "x"}}',
        '--write',
      ),
    ).toMatchObject({ code: 1, err: expect.stringContaining('cannot be written back') });
    expect(await captureCli('fork-thread', file, THREADS.weather, '--checkpoint', '2', '--values', '[1]', '--write')).toMatchObject({
      code: 2,
      err: expect.stringContaining('must be a JSON object'),
    });
    expect(checkpointRows()).toEqual(before);
  });
});
