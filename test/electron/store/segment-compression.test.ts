/**
 * Full segments are compressed by the lease holder once they fill, and every
 * reader inflates them first: what they read is what was written, a
 * compressed file that is damaged is a problem named like any other, a small
 * file cannot unpack into a large one, and a compression that fails leaves
 * the segment as it was.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { openStore } from '../../../electron/store/directory-store.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { compressSegment, inflatedVersionBytes, isCompressed } from '../../../electron/store/segment-compression.js';
import { versionFileName } from '../../../electron/store/version-file.js';
import { cleanup, loopedSave, makeCheckpoint, tempRoot } from './store-test-helpers.js';

const TASK = 'packed';
const held: SaveLease = { taskId: TASK, held: true, generation: 1 };
let dir: string;
beforeEach(async () => {
  dir = await tempRoot('ws-compression-');
});
afterEach(() => cleanup(dir));

const file = (v: number) => path.join(dir, TASK, 'versions', versionFileName(v));

/** A task of `last` versions saved under the lease (segments from version 2), settled. */
async function savedTask(last: number, fsImpl?: StoreFs) {
  const store = openStore(dir, fsImpl ? { fs: fsImpl } : {});
  let cp = (await store.create(makeCheckpoint(TASK, 5))).checkpoint;
  const saved = [cp];
  for (let v = 2; v <= last; v++) {
    cp = (await store.save(TASK, { ...loopedSave(cp, v, 5, 200), lease: held })).checkpoint;
    saved.push(cp);
  }
  expect(await store.settle(TASK)).toEqual([]);
  return saved;
}

describe('inflatedVersionBytes', () => {
  const text = Buffer.from('{"format":"waystation-version","version":2,"kind":"delta","lines":0,"base":1,"ops":[]}\n'.repeat(50));

  it('gives a file that is not compressed as it is, and a compressed one as it was written', () => {
    expect(inflatedVersionBytes('f', text, 1 << 20)).toEqual({ ok: true, bytes: text });
    const packed = gzipSync(text);
    expect(isCompressed(packed)).toBe(true);
    expect(inflatedVersionBytes('f', packed, 1 << 20)).toEqual({ ok: true, bytes: text });
  });

  it('names a compressed file cut short, damaged, or inflating past the limit, and never throws', () => {
    const packed = gzipSync(text);
    const reasons = [
      inflatedVersionBytes('f', packed.subarray(0, packed.length - 9), 1 << 20),
      inflatedVersionBytes('f', Buffer.concat([packed.subarray(0, 10), Buffer.alloc(40, 0xff)]), 1 << 20),
      inflatedVersionBytes('f', gzipSync(Buffer.alloc(1 << 20)), 64 * 1024),
    ].map((r) => (r.ok ? 'ok' : r.problem.reason));
    expect(reasons).toEqual(['truncated', 'unreadable', 'too-large']);
  });
});

describe('compressed segments', () => {
  it('are what a full segment becomes, a fifth of its size or less, and read back version by version', async () => {
    const saved = await savedTask(40);
    const bytes = await fs.readFile(file(2));
    expect(isCompressed(bytes)).toBe(true);
    expect(bytes.length * 5).toBeLessThan(gunzipSync(bytes).length);
    // The segment being filled (34..40) stays as it is: it is appended to.
    expect(isCompressed(await fs.readFile(file(34)))).toBe(false);
    const reader = openStore(dir);
    for (const cp of saved) expect(await reader.readVersion(TASK, cp.version)).toEqual(cp);
    const history = await reader.history(TASK);
    expect(history.map((h) => h.version)).toEqual(saved.map((cp) => cp.version));
  });

  it('that were damaged are a problem of the task, named, and the versions before and after still read', async () => {
    await savedTask(40);
    const bytes = await fs.readFile(file(18));
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    await fs.writeFile(file(18), bytes);
    const reader = openStore(dir);
    const damaged = await reader.readVersion(TASK, 20).then(
      (r) => r,
      (err: unknown) => err,
    );
    expect(String(damaged instanceof Error ? damaged.message : JSON.stringify(damaged))).toMatch(/00000018\.json/);
    expect((await reader.readVersion(TASK, 10)).version).toBe(10);
    expect((await reader.readVersion(TASK, 40)).version).toBe(40);
  });

  it('are left as they were when compressing fails, with no temporary file behind', async () => {
    const failing: StoreFs = {
      ...nodeFs,
      rename: async (from, to) => {
        if (path.basename(path.dirname(to)) === 'versions') throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
        return nodeFs.rename(from, to);
      },
    };
    await savedTask(20, failing);
    const bytes = await fs.readFile(file(2));
    expect(isCompressed(bytes)).toBe(false);
    expect((await fs.readdir(path.join(dir, TASK, 'versions'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await compressSegment(failing, file(2), bytes)).toEqual({ ok: false, reason: 'ENOSPC' });
    expect(await fs.readFile(file(2))).toEqual(bytes);
    expect((await openStore(dir).readVersion(TASK, 17)).version).toBe(17);
  });
});
