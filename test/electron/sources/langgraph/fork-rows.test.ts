import { describe, expect, it } from 'vitest';
import { decode, ExtData } from '@msgpack/msgpack';
import type { CheckpointRow } from '../../../../electron/sources/langgraph/checkpoint-rows.js';
import { pythonPostgresRows } from '../../../../electron/sources/langgraph/fork-rows.js';
import { versionText } from '../../../../electron/sources/langgraph/fork-writer.js';
import { versionNumber } from '../../../../electron/sources/langgraph/thread-mapping.js';
import { humanMessage, pack, pyVersion } from '../../../support/python-msgpack.js';

/** A checkpoint as Python's PostgresSaver stores it: primitives inline in the JSONB, the rest as msgpack blobs. */
const parent: CheckpointRow = {
  thread_id: 't',
  checkpoint_ns: '',
  checkpoint_id: '1f000000-0000-6000-8000-000000000001',
  parent_checkpoint_id: null,
  type: null,
  bytes: 0,
  checkpoint: {
    type: 'jsonb',
    json: {
      v: 4,
      id: '1f000000-0000-6000-8000-000000000001',
      ts: '2025-03-01T09:00:00.000000+00:00',
      channel_values: { draft: 'Hello', tries: 1 },
      channel_versions: { messages: pyVersion(2), draft: pyVersion(2), tries: pyVersion(1), 'branch:to:review': pyVersion(2) },
      versions_seen: { __input__: {} },
      updated_channels: ['messages', 'draft'],
    },
  },
  metadata: { type: 'jsonb', json: { source: 'loop', step: 0, parents: {} } },
  blobs: { messages: { type: 'msgpack', data: pack([humanMessage('hi', 'h-1')]) } },
  writes: [],
};

const request = (values: Record<string, unknown>) => ({
  thread_id: 't',
  checkpoint_ns: '',
  parentId: parent.checkpoint_id,
  values,
  names: Object.keys(values),
  newest: parent.checkpoint_id,
});

describe("a fork's rows as Python's PostgresSaver writes them", () => {
  it('keeps primitives inline in the JSONB and writes every other value as a msgpack blob at the bumped version', () => {
    const bump = () => versionText(5, true);
    const built = pythonPostgresRows(
      parent,
      request({ draft: 'Dear team', messages: [{ role: 'user', content: 'Try again', id: 'h-2' }] }),
      bump,
    );
    expect(built.step).toBe(1);
    if (built.rows.kind !== 'postgres') throw new Error('expected PostgreSQL rows');
    const doc = built.rows.checkpoint as Record<string, Record<string, unknown>>;
    expect(doc.channel_values).toEqual({ draft: 'Dear team', tries: 1 });
    expect(doc.updated_channels).toEqual(['draft', 'messages']);
    expect(doc.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    const to = built.channels[0].to as string;
    expect(to).toMatch(/^00000000000000000000000000000005\.0\.\d+$/);
    expect(doc.channel_versions).toMatchObject({ draft: to, messages: to, tries: pyVersion(1), 'branch:to:review': pyVersion(2) });
    expect(built.rows.metadata).toEqual({ source: 'update', step: 1, parents: {} });
    expect(built.rows.blobs).toHaveLength(1);
    const blob = built.rows.blobs[0];
    expect(blob).toMatchObject({ channel: 'messages', version: to, type: 'msgpack' });
    expect(decode(blob.blob)).toEqual([humanMessage('Try again', 'h-2')]);
    expect((decode(blob.blob) as unknown[])[0]).toBeInstanceOf(ExtData);
  });

  it("writes Python's version text: the counter first, so versions compare as LangGraph compares them", () => {
    expect(versionNumber(versionText(12, true))).toBe(12);
    expect(String(versionText(12, true))).toMatch(/^00000000000000000000000000000012\.0\.\d+$/);
    expect(versionText(12, false)).toBe(12);
  });
});
