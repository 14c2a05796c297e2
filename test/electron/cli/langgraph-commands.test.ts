import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THREADS } from '../../support/langgraph-graphs.js';
import { fingerprint, scenarioDatabase } from '../../support/langgraph-sqlite.js';
import { captureCli } from './capture-cli.js';

let dir: string;
let file: string;

beforeAll(async () => {
  ({ dir, file } = await scenarioDatabase());
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Run a command and check that the database, its -wal and its -shm are byte for byte what they were. */
async function untouched(...args: string[]) {
  const before = fingerprint(file);
  const run = await captureCli(...args);
  expect(fingerprint(file)).toEqual(before);
  return run;
}

describe('waystation ls, show, history and diff on a LangGraph SQLite file', () => {
  it('ls lists the threads as read-only LangGraph tasks, the interrupted one waiting for a human', async () => {
    const { code, out, err } = await untouched('ls', file);
    expect([code, err]).toEqual([0, '']);
    expect(out).toMatch(new RegExp(`${THREADS.waiting}\\s+waiting_human\\s+1/2\\s+waiting for a human in review`));
    expect(out).toContain('[langgraph, read-only]');
    expect(out).toContain('5 tasks');
    const json = JSON.parse((await untouched('ls', file, '--json')).out) as { task_id: string; format: string; display_status: string }[];
    expect(json.find((t) => t.task_id === THREADS.waiting)).toMatchObject({ format: 'langgraph', display_status: 'waiting_human' });
  });

  it('show prints the interrupt, the next node, the channels and the pending writes', async () => {
    const { code, out } = await untouched('show', file, THREADS.waiting);
    expect(code).toBe(0);
    expect(out).toContain('LangGraph');
    expect(out).toMatch(/next\s+review/);
    expect(out).toContain('waiting for  a human: {"question":"Send this email?","draft":"Dear team, the release is on Friday."}');
    expect(out).toMatch(/draft\s+"Dear team, the release is on Friday\."/);
    expect(out).toMatch(/__interrupt__/);
    const cp = JSON.parse((await untouched('show', file, THREADS.weather, '--version', '2', '--json')).out) as {
      version: number;
      langgraph: { metadata: unknown };
    };
    expect(cp.version).toBe(2);
    expect(cp.langgraph.metadata).toEqual({ source: 'loop', step: 0, parents: {} });
  });

  it('history lists every checkpoint with its LangGraph source and step, and the fork as a branch', async () => {
    const { code, out } = await untouched('history', file, THREADS.edited);
    expect(code).toBe(0);
    expect(out).toMatch(/6\s+\S+\s+human-edit\s+langgraph; update, step 4/);
    expect(out).toMatch(/7\s+\S+\s+human-edit\s+langgraph; update, step 1, from version 2/);
  });

  it('diff says which messages were added and what the next nodes became', async () => {
    const { code, out } = await untouched('diff', file, THREADS.weather, '2', '3');
    expect(code).toBe(0);
    expect(out).toContain('+ message assistant: → calls get_weather({"city":"Paris"}) [call-1]');
    expect(out).toMatch(/next\s+agent → tools/);
    const json = JSON.parse((await untouched('diff', file, THREADS.edited, '5', '7', '--json')).out) as {
      langgraph: { messages_added: { content: string }[]; messages_removed: { role: string }[] };
    };
    // The fork went back to version 2 and asked again: the answer of the first branch is gone, the new question is there.
    expect(json.langgraph.messages_added.map((m) => m.content)).toEqual(['Actually, what about Quito?']);
    expect(json.langgraph.messages_removed.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
  });

  it('as its own process (the file opened in place, immutable, or copied into memory) changes not a byte either', () => {
    const bin = path.resolve('bin/waystation.mjs');
    for (const uri of ['1', '0']) {
      const before = fingerprint(file);
      const out = execFileSync(process.execPath, [bin, 'show', file, THREADS.waiting], {
        encoding: 'utf8',
        env: { ...process.env, SQLITE_USE_URI: uri },
      });
      expect(out).toContain('waiting_human');
      expect(fingerprint(file)).toEqual(before);
      expect(before['-wal']).toBe('absent');
    }
  });

  it('says what a location is when it is neither a checkpoint directory nor a LangGraph checkpointer', async () => {
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'hello');
    expect(await captureCli('ls', text)).toMatchObject({
      code: 2,
      err: expect.stringContaining('is not a checkpoint directory, nor an SQLite database'),
    });
    const other = path.join(dir, 'other.sqlite');
    const db = new Database(other);
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    expect(await captureCli('ls', other)).toMatchObject({
      code: 2,
      err: expect.stringContaining("without LangGraph's checkpoints and writes tables"),
    });
    expect(await captureCli('show', path.join(dir, 'missing.sqlite'), 'x')).toMatchObject({
      code: 2,
      err: expect.stringContaining('no such directory or file'),
    });
    expect(await captureCli('show', file, 'no-such-thread')).toMatchObject({
      code: 2,
      err: expect.stringContaining('no task "no-such-thread"'),
    });
  });
});
