/**
 * Blobs carried by version files (schema 3): one file per save, readable by
 * the first line alone, and a task of schema 2 (blobs in `blobs/<hex>`)
 * carries on with its old blobs still read through the same chain.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { openStore } from '../../../electron/store/directory-store.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { encodeDelta, encodeFull, findCarriedBlob, parseVersionBytes } from '../../../electron/store/version-file.js';
import { canonicalJson } from '../../../shared/checkpoint/canonical-json.js';
import { cleanup, listFiles, makeCheckpoint, readVersionFileStrict, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

const blob = (value: unknown) => {
  const bytes = Buffer.from(canonicalJson(value));
  return { hex: createHash('sha256').update(bytes).digest('hex'), bytes };
};

describe('the version file', () => {
  it('puts the envelope on the first line and each carried blob on a line of its own', () => {
    const a = blob({ text: 'line one\nline two' });
    const b = blob(['x', 2]);
    const { bytes, envelopeBytes } = encodeDelta(5, [{ op: 'replace', path: ['phase'], value: 'p' }], [a, b]);
    const lines = bytes.toString('utf8').split('\n');
    // A raw line break in a value is escaped by JSON, so it never splits a blob.
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(Buffer.byteLength(lines[0])).toBe(envelopeBytes);
    expect(JSON.parse(lines[0])).toEqual({
      format: 'waystation-version',
      version: 5,
      kind: 'delta',
      base: 4,
      ops: [{ op: 'replace', path: ['phase'], value: 'p' }],
    });
    const parsed = parseVersionBytes('v', bytes);
    expect(parsed.ok && parsed.envelopeBytes).toBe(envelopeBytes);
    expect(findCarriedBlob(bytes, envelopeBytes, b.hex)?.toString()).toBe('["x",2]');
    expect(findCarriedBlob(bytes, envelopeBytes, a.hex)?.equals(a.bytes)).toBe(true);
    expect(findCarriedBlob(bytes, envelopeBytes, blob('absent').hex)).toBeNull();
  });

  it('is the envelope alone when the version carries nothing, and reads a pretty-printed envelope whole', () => {
    const doc = Buffer.from('{"task_id":"t"}');
    const full = encodeFull(1, doc);
    expect(full.bytes.toString()).toBe('{"format":"waystation-version","version":1,"kind":"full","checkpoint":{"task_id":"t"}}');
    const pretty = Buffer.from(
      JSON.stringify({ format: 'waystation-version', version: 1, kind: 'full', checkpoint: { task_id: 't' } }, null, 2),
    );
    const parsed = parseVersionBytes('v', pretty);
    expect(parsed.ok && parsed.value).toEqual({ format: 'waystation-version', version: 1, kind: 'full', checkpoint: { task_id: 't' } });
    expect(parsed.ok && parsed.envelopeBytes).toBe(pretty.length);
  });

  it('reports a torn envelope line as truncated', () => {
    const { bytes } = encodeDelta(2, [{ op: 'replace', path: ['phase'], value: 'p' }], [blob('r')]);
    const torn = bytes.subarray(0, 30);
    const parsed = parseVersionBytes('versions/00000002.json', torn);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem.reason).toBe('truncated');
  });
});

describe('a save', () => {
  it('writes one file per version, whatever it stores, and nothing under blobs/', async () => {
    const store = openStore(root);
    let cp = (await store.create(makeCheckpoint('t', 3), { appendHistory: [{ role: 'user', content: 'go' }] })).checkpoint;
    for (let k = 0; k < 3; k++) {
      cp = (
        await store.save('t', {
          expectedVersion: cp.version,
          checkpoint: withoutVersion(cp),
          results: { [cp.plan[k].id]: { k } },
          appendHistory: [{ role: 'assistant', content: `m${k}` }],
        })
      ).checkpoint;
    }
    const files = (await listFiles(path.join(root, 't'))).filter((f) => !f.startsWith('lease'));
    expect(files).toEqual(['checkpoint.json', 'events.jsonl', ...[1, 2, 3, 4].map((v) => path.join('versions', `0000000${v}.json`))]);
    for (let v = 1; v <= 4; v++) {
      const { blobs } = await readVersionFileStrict(path.join(root, 't', 'versions', `0000000${v}.json`));
      // Version 1 carries the first history chunk; each later one a result and a chunk.
      expect(blobs.size).toBe(v === 1 ? 1 : 2);
    }
    expect(cp.plan.map((s) => s.result_ref?.split('@')[1])).toEqual(['2', '3', '4']);
    expect((await store.readHistory('t')).map((m) => m.content)).toEqual(['go', 'm0', 'm1', 'm2']);
    expect(await store.readBlob('t', cp.plan[2].result_ref!)).toEqual({ k: 2 });
  });
});

describe('a task of schema 2', () => {
  it('keeps reading its blob files, and new saves carry their blobs in their versions', async () => {
    // Written as schema 2 did: results and history chunks in blobs/<hex>, the references without @.
    const taskDir = path.join(root, 'old');
    await fs.mkdir(path.join(taskDir, 'versions'), { recursive: true });
    await fs.mkdir(path.join(taskDir, 'blobs'));
    const result = blob({ answer: 41 });
    const chunk = blob({ prev: null, messages: [{ role: 'user', content: 'from schema 2' }] });
    for (const b of [result, chunk]) await fs.writeFile(path.join(taskDir, 'blobs', b.hex), b.bytes);
    const base = makeCheckpoint('old', 2);
    const v1 = {
      ...base,
      schema_version: 2,
      version: 1,
      plan: base.plan.map((s, i) => (i === 0 ? { ...s, status: 'done', result_ref: `sha256:${result.hex}` } : s)),
      current_step: 1,
      history: { count: 1, head: `sha256:${chunk.hex}` },
    };
    await fs.writeFile(
      path.join(taskDir, 'versions', '00000001.json'),
      JSON.stringify({ format: 'waystation-version', version: 1, kind: 'full', checkpoint: v1 }),
    );
    await fs.writeFile(path.join(taskDir, 'checkpoint.json'), JSON.stringify(v1));

    const store = openStore(root);
    const entry = (await store.getTask('old'))!;
    expect(entry.problems).toEqual([]);
    const loaded = entry.checkpoint!;
    const saved = (
      await store.save('old', {
        expectedVersion: 1,
        checkpoint: {
          ...withoutVersion(loaded),
          plan: loaded.plan.map((s, i) => (i === 1 ? { ...s, status: 'done' as const } : s)),
          current_step: 2,
        },
        results: { [loaded.plan[1].id]: { answer: 42 } },
        appendHistory: [{ role: 'assistant', content: 'from schema 3' }],
      })
    ).checkpoint;
    expect(saved.schema_version).toBe(3);
    expect(saved.plan[0].result_ref).toBe(`sha256:${result.hex}`);
    expect(saved.plan[1].result_ref).toMatch(/@2$/);
    // The chain crosses from a carried chunk to a blob file.
    expect((await store.readHistory('old')).map((m) => m.content)).toEqual(['from schema 2', 'from schema 3']);
    expect(await store.readBlob('old', saved.plan[0].result_ref!)).toEqual({ answer: 41 });
    expect(await store.readBlob('old', saved.plan[1].result_ref!)).toEqual({ answer: 42 });
    expect(await fs.readdir(path.join(taskDir, 'blobs'))).toEqual([result.hex, chunk.hex].sort());
  });
});

describe('a long history', () => {
  it('reads back whole, in order, with its versions, on synchronous reads (in slices) and through a StoreFs of its own', async () => {
    const store = openStore(root);
    let cp = (await store.create(makeCheckpoint('long', 1), { appendHistory: [{ role: 'user', content: 'm0' }] })).checkpoint;
    for (let k = 1; k < 600; k++) {
      cp = (
        await store.save('long', {
          expectedVersion: cp.version,
          checkpoint: withoutVersion(cp),
          appendHistory: [{ role: 'assistant', content: `m${k}` }],
        })
      ).checkpoint;
    }
    const expected = Array.from({ length: 600 }, (_, k) => `m${k}`);
    expect((await openStore(root).readHistory('long')).map((m) => m.content)).toEqual(expected);
    // A StoreFs whose reads are its own (as fault-injecting ones are) is read through them, one file at a time.
    const wrapped: StoreFs = { ...nodeFs, readWholeFile: (p, opts) => nodeFs.readWholeFile(p, opts) };
    expect((await openStore(root, { fs: wrapped }).readHistory('long')).map((m) => m.content)).toEqual(expected);
    expect((await openStore(root).readHistory('long', 300)).map((m) => m.content)).toEqual(expected.slice(0, 300));
    expect((await openStore(root, { fs: wrapped }).readHistory('long', 300)).map((m) => m.content)).toEqual(expected.slice(0, 300));
    // A past version is rebuilt from its files the same way on either.
    const middle = await openStore(root).readVersion('long', 450);
    expect(middle.history.count).toBe(450);
    expect(await openStore(root, { fs: wrapped }).readVersion('long', 450)).toEqual(middle);
  }, 60_000);
});
