/**
 * checkpoint.json is a copy of the newest version that writers do not fsync:
 * whatever a power cut leaves of it, a task whose versions are intact reads
 * as its newest version, with a warning at most, and the next save rewrites it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
let store: CheckpointStore;
let hotFile: string;
let v1Text: string;

beforeEach(async () => {
  root = await tempRoot('waystation-hot-');
  store = openStore(root);
  hotFile = path.join(root, 't', 'checkpoint.json');
  let cp = (await store.create(makeCheckpoint('t'), { appendHistory: [{ role: 'user', content: 'one' }] })).checkpoint;
  v1Text = await fs.readFile(hotFile, 'utf8');
  for (const phase of ['two', 'three']) {
    cp = (
      await store.save('t', {
        expectedVersion: cp.version,
        checkpoint: { ...withoutVersion(cp), phase },
        appendHistory: [{ role: 'assistant', content: phase }],
      })
    ).checkpoint;
  }
});
afterEach(async () => {
  await cleanup(root);
});

const damage: [string, () => Promise<void>][] = [
  ['empty (zero length)', () => fs.writeFile(hotFile, '')],
  ['torn (cut off half way)', async () => fs.writeFile(hotFile, (await fs.readFile(hotFile)).subarray(0, 200))],
  ['not JSON', () => fs.writeFile(hotFile, 'garbage \u0000 bytes')],
  ['not UTF-8', () => fs.writeFile(hotFile, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))],
  ['JSON of the wrong shape', () => fs.writeFile(hotFile, '{"task_id":"t"}')],
  ['stale (an older version)', () => fs.writeFile(hotFile, v1Text)],
  ['missing', () => fs.rm(hotFile)],
];

describe('a task whose checkpoint.json is damaged but whose versions are intact', () => {
  it.each(damage)('%s: reads as the newest version, warnings only, and the next save repairs it', async (_what, spoil) => {
    await spoil();
    for (const reader of [openStore(root), store]) {
      const entry = await reader.getTask('t');
      expect(entry?.checkpoint?.version).toBe(3);
      expect(entry?.checkpoint?.phase).toBe('three');
      expect(entry?.problems.filter((p) => p.severity === 'error')).toEqual([]);
      const listed = (await reader.listTasks()).find((t) => t.task_id === 't');
      expect(listed?.checkpoint?.version).toBe(3);
      expect(listed?.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect((await reader.readHistory('t')).map((m) => m.content)).toEqual(['one', 'two', 'three']);
    }
    // A writer that never saw the damage, and one that derives its state from disk, both carry on.
    const fresh = openStore(root);
    const cp = (await fresh.getTask('t'))!.checkpoint!;
    const saved = await fresh.save('t', { expectedVersion: 3, checkpoint: { ...withoutVersion(cp), phase: 'four' } });
    expect(saved.checkpoint.version).toBe(4);
    expect(JSON.parse(await fs.readFile(hotFile, 'utf8'))).toEqual(JSON.parse(JSON.stringify(saved.checkpoint)));
    expect((await openStore(root).getTask('t'))?.problems).toEqual([]);
  });

  it('names the damaged file and the version shown in the warning', async () => {
    await fs.writeFile(hotFile, '');
    const entry = await openStore(root).getTask('t');
    expect(entry?.problems.map((p) => [p.file, p.reason, p.severity])).toEqual([['t/checkpoint.json', 'truncated', 'warning']]);
    expect(entry?.problems[0].message).toMatch(/showing version 3 from versions\//);
  });

  it('is still an error when no version can stand in for it', async () => {
    await fs.writeFile(hotFile, '');
    await fs.rm(path.join(root, 't', 'versions'), { recursive: true });
    const entry = await openStore(root).getTask('t');
    expect(entry?.checkpoint).toBeNull();
    expect(entry?.problems.some((p) => p.severity === 'error' && p.file === 't/checkpoint.json')).toBe(true);
  });
});
