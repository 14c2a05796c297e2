import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { decode, ExtData } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { openLangGraphSource } from '../../../../electron/sources/langgraph/open-langgraph.js';
import { datetime, humanMessage, keywords, pack, single } from '../../../support/python-msgpack.js';
import { writePythonDatabase } from '../../../support/python-sqlite.js';
import { captureCli } from '../../cli/capture-cli.js';

let dir: string;
let file: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-py-fork-'));
  file = path.join(dir, 'checkpoints.sqlite');
  writePythonDatabase(file);
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Row {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Buffer;
  metadata: Buffer;
}

function rows(): Row[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'py-agent' ORDER BY checkpoint_id",
      )
      .all() as Row[];
  } finally {
    db.close();
  }
}

/** The msgpack as Python wrote it, extensions kept as their raw payloads. */
const raw = (bytes: Uint8Array) => decode(Uint8Array.from(bytes), { useBigInt64: true }) as Record<string, unknown>;
const lg = (cp: Checkpoint) => (cp as unknown as { langgraph: Record<string, unknown> }).langgraph;

describe("fork-thread on a SQLite file of Python's SqliteSaver (msgpack)", () => {
  it('writes the msgpack Python writes: the new values as its serializer encodes them, every other channel byte for byte', async () => {
    const before = rows();
    const parent = before[4];
    const { code, out } = await captureCli(
      'fork-thread',
      file,
      'py-agent',
      '--checkpoint',
      '5',
      '--values',
      JSON.stringify({
        messages: [{ role: 'user', content: 'And in Oslo?', id: 'h-9' }],
        note: 'checked twice',
        budget: { eur: 12.5, days: 3 },
      }),
      '--write',
      '--json',
    );
    expect(code).toBe(0);
    const plan = JSON.parse(out) as { checkpoint_id: string; serde: string; step: number; channels: { name: string; to: string }[] };
    expect(plan).toMatchObject({ serde: 'msgpack', step: 4 });
    const after = rows();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    const added = after.at(-1)!;
    expect(added).toMatchObject({ checkpoint_id: plan.checkpoint_id, parent_checkpoint_id: parent.checkpoint_id, type: 'msgpack' });
    expect(JSON.parse(added.metadata.toString())).toEqual({ source: 'update', step: 4, parents: {} });

    const doc = raw(added.checkpoint);
    const old = raw(parent.checkpoint);
    expect(Object.keys(doc)).toEqual(Object.keys(old));
    expect(doc.id).toBe(plan.checkpoint_id);
    expect(doc.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(doc.versions_seen).toEqual(old.versions_seen);
    expect(doc.updated_channels).toEqual(['messages', 'note', 'budget']);
    const values = doc.channel_values as Record<string, unknown>;
    // The message is the Pydantic v2 extension the fixtures build from the serializer's format, byte for byte.
    expect(values.messages).toEqual([humanMessage('And in Oslo?', 'h-9')]);
    expect(pack(values.note)).toEqual(pack('checked twice'));
    expect(values.budget).toEqual({ eur: 12.5, days: 3 });
    // Channels not edited keep Python's bytes: its datetime, set and dataclass extensions.
    expect(values.asked_at).toEqual(datetime('2025-03-01T09:00:03.500000+00:00'));
    expect(values.cities).toEqual(single('builtins', 'set', ['Paris']));
    expect(values.ticket).toEqual(keywords('app.state', 'Ticket', { id: 7, status: single('app.state', 'Status', 'open') }));
    expect(values.asked_at).toBeInstanceOf(ExtData);
    const versions = doc.channel_versions as Record<string, string>;
    for (const name of ['messages', 'note', 'budget']) expect(versions[name]).toMatch(/^00000000000000000000000000000006\.0\.\d+$/);
    expect(versions.__start__).toBe((old.channel_versions as Record<string, string>).__start__);
  });

  it('reads back through the source as the thread’s newest version, an update', async () => {
    const source = await openLangGraphSource(file);
    try {
      const cp = (await source.getTask('py-agent'))!.checkpoint!;
      expect(cp.version).toBe(6);
      expect(cp.source).toMatchObject({ kind: 'human-edit', note: 'update, step 4' });
      expect(lg(cp).parent_version).toBe(5);
      expect(lg(cp).channels).toMatchObject({
        note: 'checked twice',
        budget: { eur: 12.5, days: 3 },
        asked_at: { $type: 'datetime.datetime', $value: '2025-03-01T09:00:03.500000+00:00' },
        cities: { $type: 'builtins.set', $value: ['Paris'] },
      });
      const messages = await source.readHistory('py-agent');
      expect(messages.map((m) => [m.role, m.content, m.langchain_class])).toEqual([['user', 'And in Oslo?', 'HumanMessage']]);
    } finally {
      await source.close();
    }
  });

  it('refuses an encrypted checkpoint and a value Python could not load as written, writing nothing', async () => {
    const before = rows();
    expect(
      await captureCli('fork-thread', file, 'py-encrypted', '--checkpoint', '2', '--values', '{"messages": []}', '--write'),
    ).toMatchObject({ code: 1, err: expect.stringContaining('never encrypted ones') });
    expect(
      await captureCli(
        'fork-thread',
        file,
        'py-agent',
        '--checkpoint',
        '5',
        '--values',
        '{"messages": [{"role": "tool", "content": "done"}]}',
        '--write',
      ),
    ).toMatchObject({ code: 1, err: expect.stringContaining('needs the tool_call_id') });
    expect(rows()).toEqual(before);
  });
});
