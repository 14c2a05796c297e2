/**
 * A SQLite checkpointer file as Python's SqliteSaver writes it: the schema of
 * langgraph/checkpoint/sqlite/__init__.py, checkpoints as `msgpack` blobs in
 * the format of python-msgpack.ts, metadata as JSON text, writes as serde
 * pairs. Threads cover a tool-calling loop, an interrupt, and the ways a
 * checkpoint can be unreadable (encrypted, truncated, pickled).
 */
import Database from 'better-sqlite3';
import { aiMessage, datetime, humanMessage, interruptValue, keywords, pack, pyVersion, single, toolMessage } from './python-msgpack.js';

/** A version-6 UUID for a time and a sequence number, as LangGraph names checkpoints. */
export function uuid6(ms: number, seq: number): string {
  const t = (BigInt(ms) + 12_219_292_800_000n) * 10_000n;
  const hex = t.toString(16).padStart(15, '0');
  const high = hex.slice(0, 8);
  const mid = hex.slice(8, 12);
  const low = hex.slice(12, 15);
  const clock = (0x8000 | (seq & 0x3fff)).toString(16);
  return `${high}-${mid}-6${low}-${clock}-${'0'.repeat(12 - String(seq).length)}${seq}`;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);`;

export const PY_START_MS = Date.parse('2025-03-01T09:00:00.000Z');

interface PyCheckpoint {
  channel_values: Record<string, unknown>;
  channel_versions: Record<string, number>;
  versions_seen: Record<string, Record<string, number>>;
  metadata: Record<string, unknown>;
  type?: string;
  /** Raw bytes instead of the msgpack of the checkpoint (encrypted, truncated). */
  raw?: (packed: Uint8Array) => Uint8Array;
  writes?: { channel: string; type: string; value: Uint8Array; task_id?: string; idx?: number }[];
}

const versions = (v: Record<string, number>) => Object.fromEntries(Object.entries(v).map(([k, n]) => [k, pyVersion(n)]));
const seen = (v: Record<string, Record<string, number>>) => Object.fromEntries(Object.entries(v).map(([k, m]) => [k, versions(m)]));

/** Write one thread's checkpoints, each the child of the one before; returns their ids. */
function writeThread(db: Database.Database, threadId: string, start: number, cps: PyCheckpoint[]): string[] {
  const ids: string[] = [];
  cps.forEach((cp, i) => {
    const id = uuid6(start + i * 1000, i);
    const doc = {
      v: 4,
      ts: new Date(start + i * 1000).toISOString().replace('Z', '+00:00'),
      id,
      channel_values: cp.channel_values,
      channel_versions: versions(cp.channel_versions),
      versions_seen: seen(cp.versions_seen),
      updated_channels: Object.keys(cp.channel_values),
    };
    const packed = pack(doc);
    db.prepare('INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      threadId,
      '',
      id,
      ids[i - 1] ?? null,
      cp.type ?? 'msgpack',
      Buffer.from(cp.raw ? cp.raw(packed) : packed),
      Buffer.from(JSON.stringify(cp.metadata)),
    );
    for (const [idx, w] of (cp.writes ?? []).entries()) {
      db.prepare('INSERT INTO writes VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        threadId,
        '',
        id,
        w.task_id ?? 'task-1',
        w.idx ?? idx,
        w.channel,
        w.type,
        Buffer.from(w.value),
      );
    }
    ids.push(id);
  });
  return ids;
}

const q = humanMessage('What is the weather in Paris?', 'h-1');
const call = aiMessage('', 'ai-1', [{ name: 'get_weather', args: { city: 'Paris' }, id: 'call-1' }], {
  input_tokens: 20,
  output_tokens: 5,
});
const result = toolMessage('Sunny, 21°C', 'tool-1', 'call-1', 'get_weather');
const answer = aiMessage([{ type: 'text', text: 'It is sunny in Paris.' }], 'ai-2', [], { input_tokens: 40, output_tokens: 7 });

/** Write the Python-format scenario into a new SQLite file. */
export function writePythonDatabase(file: string): void {
  const db = new Database(file);
  db.exec(SCHEMA);
  writeThread(db, 'py-agent', PY_START_MS, [
    {
      channel_values: { __start__: { messages: [q] } },
      channel_versions: { __start__: 1 },
      versions_seen: { __input__: {} },
      metadata: { source: 'input', step: -1, parents: {} },
    },
    {
      channel_values: { messages: [q], 'branch:to:agent': null },
      channel_versions: { __start__: 2, messages: 2, 'branch:to:agent': 2 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 } },
      metadata: { source: 'loop', step: 0, parents: {} },
    },
    {
      channel_values: { messages: [q, call], 'branch:to:tools': null },
      channel_versions: { __start__: 2, messages: 3, 'branch:to:agent': 3, 'branch:to:tools': 3 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 }, agent: { 'branch:to:agent': 2 } },
      metadata: { source: 'loop', step: 1, parents: {} },
    },
    {
      channel_values: { messages: [q, call, result], 'branch:to:agent': null },
      channel_versions: { __start__: 2, messages: 4, 'branch:to:agent': 4, 'branch:to:tools': 4 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 }, agent: { 'branch:to:agent': 2 }, tools: { 'branch:to:tools': 3 } },
      metadata: { source: 'loop', step: 2, parents: {} },
    },
    {
      channel_values: {
        messages: [q, call, result, answer],
        asked_at: datetime('2025-03-01T09:00:03.500000+00:00'),
        cities: single('builtins', 'set', ['Paris']),
        ticket: keywords('app.state', 'Ticket', { id: 7, status: single('app.state', 'Status', 'open') }),
      },
      channel_versions: { __start__: 2, messages: 5, 'branch:to:agent': 5, 'branch:to:tools': 4, asked_at: 5, cities: 5, ticket: 5 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 }, agent: { 'branch:to:agent': 4 }, tools: { 'branch:to:tools': 3 } },
      metadata: { source: 'loop', step: 3, parents: {} },
    },
  ]);
  writeThread(db, 'py-waiting', PY_START_MS + 60_000, [
    {
      channel_values: { messages: [humanMessage('Delete the old logs?', 'h-2')], 'branch:to:review': null },
      channel_versions: { messages: 2, 'branch:to:review': 2 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 } },
      metadata: { source: 'loop', step: 0, parents: {} },
      writes: [
        {
          channel: '__interrupt__',
          type: 'msgpack',
          value: pack([interruptValue({ question: 'Really delete?', files: 3 }, 'int-1')]),
          idx: -3,
        },
      ],
    },
  ]);
  writeThread(db, 'py-encrypted', PY_START_MS + 120_000, [
    {
      channel_values: { messages: [humanMessage('secret plans', 'h-3')] },
      channel_versions: { messages: 1 },
      versions_seen: { __input__: {} },
      metadata: { source: 'input', step: -1, parents: {} },
    },
    {
      channel_values: {},
      channel_versions: {},
      versions_seen: {},
      metadata: { source: 'loop', step: 0, parents: {} },
      type: 'msgpack+aes',
      raw: () => Uint8Array.from({ length: 64 }, (_, i) => (i * 37) % 256),
    },
  ]);
  writeThread(db, 'py-truncated', PY_START_MS + 180_000, [
    {
      channel_values: { messages: [humanMessage('cut off in the middle of a long sentence', 'h-4')] },
      channel_versions: { messages: 1 },
      versions_seen: { __input__: {} },
      metadata: { source: 'input', step: -1, parents: {} },
      raw: (packed) => packed.slice(0, Math.floor(packed.length / 2)),
    },
  ]);
  writeThread(db, 'py-pickled-write', PY_START_MS + 240_000, [
    {
      channel_values: { messages: [humanMessage('hello', 'h-5')], 'branch:to:agent': null },
      channel_versions: { messages: 2, 'branch:to:agent': 2 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 } },
      metadata: { source: 'loop', step: 0, parents: {} },
      writes: [{ channel: 'scratch', type: 'pickle', value: Uint8Array.from([0x80, 0x04, 0x95]) }],
    },
  ]);
  db.close();
}
