import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import { planFork, writeFork } from '../../../../electron/sources/langgraph/fork-writer.js';
import { populate, THREADS, weatherAgent, weatherOf } from '../../../support/langgraph-graphs.js';
import { startPostgres, type PostgresCluster } from '../../../support/langgraph-postgres.js';
import { forkWeatherToRome, ROME_QUESTION } from '../../../support/langgraph-fork-cli.js';

let cluster: PostgresCluster;
let url: string;
let saver: PostgresSaver;

/** Every row of LangGraph's tables as text, one entry a row. */
async function allRows(): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: string[] = [];
    for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) {
      const r = await client.query<{ t: string }>(`SELECT t::text AS t FROM ${table} t`);
      out.push(...r.rows.map((row) => `${table} ${row.t}`));
    }
    return out.sort();
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  cluster = await startPostgres();
  url = cluster.createDatabase('agents');
  saver = PostgresSaver.fromConnString(url);
  await saver.setup();
  await populate(saver);
}, 120_000);

afterAll(async () => {
  await saver?.end();
  cluster?.stop();
});

describe('fork-thread on a PostgreSQL checkpointer written by real LangGraph', () => {
  it('without --write plans and writes nothing', async () => {
    const before = await allRows();
    const { code, out } = await forkWeatherToRome(url, { write: false });
    expect(code).toBe(0);
    expect(out).toContain('Nothing was written: add --write to write it.');
    expect(out).toContain('(json serde)');
    expect(await allRows()).toEqual(before);
  });

  it('inserts the checkpoint and one blob at a version no branch of the thread used; LangGraph carries on from it', async () => {
    const before = await allRows();
    const { code, out } = await forkWeatherToRome(url, { write: true });
    expect(code).toBe(0);
    const plan = JSON.parse(out) as {
      checkpoint_id: string;
      parent: { checkpoint_id: string; version: number };
      written: boolean;
      serde: string;
      channels: { name: string; from: number; to: number }[];
    };
    expect(plan).toMatchObject({ written: true, serde: 'json', parent: { version: 2 } });
    const after = await allRows();
    // Every row there before is there still, unchanged; the checkpoint and the messages blob were added.
    expect(after).toEqual(expect.arrayContaining(before));
    const added = after.filter((r) => !before.includes(r));
    expect(added.map((r) => r.split(' ')[0]).sort()).toEqual(['checkpoint_blobs', 'checkpoints']);
    // The bumped version is past every version of the thread's blobs, not only the parent's (2 -> 3 would meet the
    // original conversation's blob at version 3, which PostgresSaver's upsert would then read for the fork).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const versions = await client.query<{ v: number }>(
      "SELECT max(version::int) AS v FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = '' AND NOT (channel = 'messages' AND version = $2)",
      [THREADS.weather, String(plan.channels[0].to)],
    );
    await client.end();
    expect(plan.channels).toEqual([{ name: 'messages', from: 2, to: expect.any(Number) }]);
    expect(plan.channels[0].to).toBeGreaterThan(versions.rows[0].v);

    const agent = weatherAgent(saver);
    const config = { configurable: { thread_id: THREADS.weather } };
    const state = await agent.getState(config);
    expect(state.config.configurable?.checkpoint_id).toBe(plan.checkpoint_id);
    expect(state.metadata?.source).toBe('update');
    expect(state.parentConfig?.configurable?.checkpoint_id).toBe(plan.parent.checkpoint_id);
    expect(state.values.messages.map((m: { content: unknown }) => m.content)).toEqual([ROME_QUESTION]);
    expect(state.next).toEqual(['agent']);
    const result = await agent.invoke(null, config);
    const contents = result.messages.map((m) => String(m.content));
    expect(contents[0]).toBe(ROME_QUESTION);
    expect(contents.at(-1)).toBe(`The weather: ${weatherOf('Rome')}`);
    expect(result.messages[0].getType()).toBe('human');

    const source = await openLangGraphSource(url);
    try {
      const history = await source.history(THREADS.weather);
      const forked = history.find(
        (v) => (v.source as { langgraph?: { checkpoint_id: string } }).langgraph?.checkpoint_id === plan.checkpoint_id,
      )!;
      expect(forked.source).toMatchObject({ kind: 'human-edit', note: 'update, step 1, from version 2' });
    } finally {
      await source.close();
    }
  });

  it('refuses, writing nothing, when the parent went away between the plan and the write', async () => {
    const source = await openLangGraphSource(url);
    try {
      const plan = await planFork(source, THREADS.weather, '2', { messages: [{ role: 'user', content: 'Lima?' }] });
      const before = await allRows();
      const moved = { ...plan, parent: { ...plan.parent, checkpoint_id: '1f000000-0000-6000-8000-000000000000' } };
      await expect(writeFork(source, moved)).rejects.toThrow('is no longer in');
      expect(await allRows()).toEqual(before);
    } finally {
      await source.close();
    }
  });
});
