import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { VersionCache } from '../../../electron/host/version-cache.js';
import { makeCheckpoint, withoutVersion } from '../store/store-test-helpers.js';

let root: string;
let store: CheckpointStore;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-version-cache-'));
  store = openStore(root);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** A task with versions 1..n, phase `p<n>` at version n. */
async function writeTask(taskId: string, n: number, phase = (v: number) => `p${v}`): Promise<void> {
  let cp = (await store.create(makeCheckpoint(taskId, 3, { phase: phase(1) }))).checkpoint;
  for (let v = 2; v <= n; v++)
    cp = (await store.save(taskId, { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: phase(v) } })).checkpoint;
}

/** A loader that counts its calls. */
function counted(taskId: string, version: number) {
  const calls = { n: 0 };
  const load = (): Promise<Checkpoint> => {
    calls.n++;
    return store.readVersion(taskId, version);
  };
  return { calls, load };
}

describe('VersionCache', () => {
  it('rebuilds a version once and serves it again from memory', async () => {
    await writeTask('t', 2);
    const cache = new VersionCache(root);
    const { calls, load } = counted('t', 1);
    const first = await cache.get('t', 1, load);
    const again = await cache.get('t', 1, load);
    expect(again).toBe(first);
    expect([calls.n, first.phase]).toEqual([1, 'p1']);
  });

  it('rebuilds again when the task folder was replaced by another history with the same version numbers', async () => {
    await writeTask('t', 2);
    const cache = new VersionCache(root);
    expect((await cache.get('t', 2, counted('t', 2).load)).phase).toBe('p2');
    await fs.rm(path.join(root, 't'), { recursive: true });
    store = openStore(root);
    await writeTask('t', 2, (v) => `other ${v}`);
    const { calls, load } = counted('t', 2);
    expect((await cache.get('t', 2, load)).phase).toBe('other 2');
    expect(calls.n).toBe(1);
  });

  it('keeps only the most recently used versions', async () => {
    await writeTask('t', 4);
    const cache = new VersionCache(root, 2);
    for (const v of [1, 2, 1, 3]) await cache.get('t', v, counted('t', v).load);
    // 2 was the least recently used when 3 came in; 1 and 3 stay.
    const [one, two, three] = [counted('t', 1), counted('t', 2), counted('t', 3)];
    await cache.get('t', 1, one.load);
    await cache.get('t', 3, three.load);
    await cache.get('t', 2, two.load);
    expect([one.calls.n, three.calls.n, two.calls.n]).toEqual([0, 0, 1]);
  });

  it('never keeps what has no version file of its own, nor a failed load', async () => {
    await fs.writeFile(
      path.join(root, 'legacy.json'),
      JSON.stringify({ task_id: 'legacy', current_step: 1, total_steps: 2, results: { a: 1 } }),
    );
    const cache = new VersionCache(root);
    const { calls, load } = counted('legacy', 1);
    await cache.get('legacy', 1, load).catch(() => undefined);
    await cache.get('legacy', 1, load).catch(() => undefined);
    expect(calls.n).toBe(2);
    await writeTask('t', 1);
    const missing = counted('t', 5);
    await expect(cache.get('t', 5, missing.load)).rejects.toThrow(/version 5/);
    await expect(cache.get('t', 5, missing.load)).rejects.toThrow(/version 5/);
    expect(missing.calls.n).toBe(2);
  });
});

describe('VersionCache.getMany', () => {
  it('loads only what it does not keep, together, and answers in the order asked', async () => {
    await writeTask('t', 4);
    const cache = new VersionCache(root);
    const asked: number[][] = [];
    const loadMany = (missing: number[]) => {
      asked.push(missing);
      return store.readVersions('t', missing);
    };
    const kept = await cache.get('t', 3, () => store.readVersion('t', 3));
    const [four, three, again] = await cache.getMany('t', [4, 3, 4], loadMany);
    expect([four.phase, three.phase, again.phase]).toEqual(['p4', 'p3', 'p4']);
    expect(three).toBe(kept);
    expect(asked).toEqual([[4]]);
    expect(await cache.getMany('t', [3, 4], loadMany)).toEqual([three, four]);
    expect(asked).toEqual([[4]]);
  });
});
