import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { HumanMessage } from '@langchain/core/messages';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import { detectLocation } from '../../../../electron/sources/detect-location.js';
import type { LangGraphSource } from '../../../../electron/sources/langgraph/langgraph-source.js';
import { populate, THREADS, weatherAgent, weatherOf } from '../../../support/langgraph-graphs.js';
import { startPostgres, type PostgresCluster } from '../../../support/langgraph-postgres.js';
import { captureCli } from '../../cli/capture-cli.js';

let cluster: PostgresCluster;
let url: string;
let saver: PostgresSaver;
let source: LangGraphSource;

/** Every row of LangGraph's tables, to prove reading changed none. */
async function tableDump(): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const parts: string[] = [];
    for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations']) {
      const r = await client.query(`SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS h, count(*) AS n FROM ${table} t`);
      parts.push(`${table}:${r.rows[0].n}:${r.rows[0].h}`);
    }
    return parts.join(' ');
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
  source = await openLangGraphSource(url);
}, 120_000);

afterAll(async () => {
  await source?.close();
  await saver?.end();
  cluster?.stop();
});

const lg = (cp: Checkpoint) => (cp as unknown as { langgraph: Record<string, unknown> }).langgraph;

describe('a LangGraph PostgreSQL checkpointer, written by real LangGraph, as a source', () => {
  it('is detected from its URL; a database without the tables, or one that cannot be reached, is for the Waystation store', async () => {
    expect(await detectLocation(url)).toEqual({ kind: 'langgraph-postgres', url });
    expect(await detectLocation(cluster.url('postgres'))).toMatchObject({ kind: 'postgres-store', holds: 'nothing' });
    await expect(openLangGraphSource(cluster.url('postgres'))).rejects.toThrow("has none of LangGraph's checkpointer tables");
    const unreachable = 'postgres://postgres:s3cret@127.0.0.1:1/none';
    expect(await detectLocation(unreachable)).toMatchObject({ kind: 'postgres-store', holds: 'unknown' });
    const source = await openLangGraphSource(unreachable);
    try {
      const err = await source.listTasks().then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toContain('cannot connect');
      expect(err?.message).not.toContain('s3cret');
    } finally {
      await source.close();
    }
  });

  it('lists the threads and maps them as the SQLite file maps them, with channel values from checkpoint_blobs', async () => {
    const tasks = await source.listTasks();
    expect(tasks.map((t) => [t.task_id, t.checkpoint?.status])).toEqual([
      [THREADS.approved, 'done'],
      [THREADS.waiting, 'waiting_human'],
      [THREADS.edited, 'done'],
      [THREADS.weather, 'done'],
      [THREADS.weatherTwice, 'done'],
    ]);
    const waiting = (await source.getTask(THREADS.waiting))!.checkpoint!;
    expect(lg(waiting).waiting_for_human).toEqual([{ question: 'Send this email?', draft: 'Dear team, the release is on Friday.' }]);
    // The draft is a string: PostgresSaver keeps it in checkpoint_blobs by channel version, and it is found there.
    expect(lg(waiting).channels).toMatchObject({ draft: 'Dear team, the release is on Friday.' });
    const messages = await source.readHistory(THREADS.weather);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[3].content).toBe(`The weather: ${weatherOf('Paris')}`);
    const history = await source.history(THREADS.edited);
    expect(history.map((v) => v.source.note)).toContain('update, step 1, from version 2');
    for (const cp of await source.readVersions(
      THREADS.edited,
      history.map((v) => v.version),
    ))
      expect(Checkpoint.safeParse(cp).success).toBe(true);
    // An earlier version's messages are the blob at that version's channel version, not the latest.
    expect((await source.readHistory(THREADS.weather, 2)).map((m) => m.role)).toEqual(['user']);
  });

  it('reads in read-only transactions and changes no row', async () => {
    const before = await tableDump();
    const { code, out } = await captureCli('ls', url);
    expect(code).toBe(0);
    expect(out).toContain(THREADS.waiting);
    expect(out).not.toMatch(/postgres:\/\/postgres:[^*]/);
    await captureCli('show', url, THREADS.waiting);
    await captureCli('diff', url, THREADS.weather, '2', '5');
    expect(await tableDump()).toEqual(before);
  });

  it('sees a checkpoint LangGraph writes while it is open', async () => {
    const before = (await source.history(THREADS.weather)).length;
    const marks = await source.threadMarks();
    await weatherAgent(saver).invoke({ messages: [new HumanMessage('And in Lima?')] }, { configurable: { thread_id: THREADS.weather } });
    expect((await source.history(THREADS.weather)).length).toBeGreaterThan(before);
    const after = await source.threadMarks();
    expect(after.get(THREADS.weather)).not.toBe(marks.get(THREADS.weather));
    expect(after.get(THREADS.waiting)).toBe(marks.get(THREADS.waiting));
  });
});
