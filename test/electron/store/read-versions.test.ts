/**
 * Reading several versions of a task at once: the same checkpoints as one
 * readVersion each, with every version file read at most once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { TaskReadError } from '../../../electron/store/store-types.js';
import { cleanup, countingWholeReads, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

/** A task of `n` versions whose goal grows, so the writer mixes full snapshots among the deltas. */
async function writeTask(n: number): Promise<void> {
  const store = openStore(root);
  let cp = (await store.create(makeCheckpoint('t', 2))).checkpoint;
  for (let v = 2; v <= n; v++) {
    cp = (
      await store.save('t', {
        expectedVersion: cp.version,
        checkpoint: { ...withoutVersion(cp), phase: `p${v}`, goal: `goal ${v} `.repeat(20) },
        results: { s1: { v } },
      })
    ).checkpoint;
  }
}

describe('readVersions', () => {
  it('gives what readVersion gives for each, in the order asked, across full snapshots', async () => {
    await writeTask(40);
    const heads = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fsp.readFile(path.join(root, 't', 'versions', `${String(i + 1).padStart(8, '0')}.json`), 'utf8'),
      ),
    );
    const fulls = heads.flatMap((text, i) =>
      text.startsWith('{"format":"waystation-version","version":' + (i + 1) + ',"kind":"full"') ? [i + 1] : [],
    );
    expect(fulls.length, 'full snapshots after version 1').toBeGreaterThan(1);
    const store = openStore(root);
    const asked = [40, 3, 17, 3, 1, 39];
    const many = await store.readVersions('t', asked);
    const one = await Promise.all(asked.map((v) => openStore(root).readVersion('t', v)));
    expect(many).toEqual(one);
    expect(many.map((c) => c.version)).toEqual(asked);
  });

  it('reads each version file at most once for two versions over the same snapshot', async () => {
    await writeTask(6);
    const { fs, reads } = countingWholeReads();
    const [a, b] = await openStore(root, { fs }).readVersions('t', [6, 2]);
    expect([a.phase, b.phase]).toEqual(['p6', 'p2']);
    expect(Math.max(...reads.values())).toBe(1);
    expect(reads.get('00000001.json')).toBe(1);
  });

  it('says which version cannot be read', async () => {
    await writeTask(3);
    const err = await openStore(root)
      .readVersions('t', [2, 9])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskReadError);
    expect((err as TaskReadError).problems[0].reason).toBe('missing-version');
  });
});
