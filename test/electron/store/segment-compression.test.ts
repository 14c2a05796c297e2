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
import {
  compressSegment,
  gzipWithStoredHead,
  headFromSync,
  inflatedVersionBytes,
  isCompressed,
  STORED_HEAD_BYTES,
  storedHead,
} from '../../../electron/store/segment-compression.js';
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

describe('the gzip a segment is kept as', () => {
  const segment = (n: number) =>
    Buffer.from(Array.from({ length: n }, (_, i) => `{"format":"waystation-version","version":${i + 2},"lines":0}\n`).join(''));

  it('inflates to the segment with any gzip reader, and opens with its first bytes as they are', async () => {
    for (const bytes of [Buffer.alloc(0), segment(1).subarray(0, 40), segment(3), segment(5000)]) {
      const packed = await gzipWithStoredHead(bytes);
      expect(isCompressed(packed)).toBe(true);
      expect(gunzipSync(packed)).toEqual(bytes);
      expect(inflatedVersionBytes('f', packed, 1 << 24)).toEqual({ ok: true, bytes });
      expect(storedHead(packed)).toEqual(bytes.subarray(0, STORED_HEAD_BYTES));
    }
  });

  it("gives a file's head from the stored block, and inflates another writer's gzip or a damaged block", async () => {
    const bytes = segment(500);
    const head = bytes.subarray(0, STORED_HEAD_BYTES);
    const ours = await gzipWithStoredHead(bytes);
    const theirs = gzipSync(bytes);
    // The stored block's length does not match its complement: not taken as stored, and inflating it fails.
    const damaged = Buffer.from(ours);
    damaged[13] ^= 0x01;
    const headOf = (packed: Buffer) => headFromSync(packed.subarray(0, 96), packed.length, (into) => packed.copy(into, 0, 0, into.length));
    expect(storedHead(theirs)).toBeNull();
    expect(storedHead(damaged)).toBeNull();
    expect(headOf(ours)).toEqual(head);
    expect(head.subarray(0, 96).equals(headOf(theirs).subarray(0, 96))).toBe(true);
    expect(headOf(damaged)).toHaveLength(0);
    // Only the bytes read are looked at: a stored block that reaches past them is not taken.
    expect(storedHead(ours.subarray(0, 100))).toBeNull();
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

  it("written by another program's gzip, with no stored head, read the same: listed, opened and version by version", async () => {
    const saved = await savedTask(40);
    const ours = openStore(dir);
    const expected = { listed: await ours.listTasks(), opened: await ours.getTask(TASK) };
    for (const v of [2, 18]) await fs.writeFile(file(v), gzipSync(gunzipSync(await fs.readFile(file(v)))));
    expect(storedHead(await fs.readFile(file(2)))).toBeNull();
    const reader = openStore(dir);
    expect(await reader.listTasks()).toEqual(expected.listed);
    expect(await reader.fileProblems(expected.listed)).toEqual([[]]);
    expect(await reader.getTask(TASK)).toEqual(expected.opened);
    for (const cp of saved) expect(await reader.readVersion(TASK, cp.version)).toEqual(cp);
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
    expect(await compressSegment(failing, file(2), bytes, await fs.lstat(file(2)))).toEqual({ ok: false, reason: 'ENOSPC' });
    expect(await fs.readFile(file(2))).toEqual(bytes);
    expect((await openStore(dir).readVersion(TASK, 17)).version).toBe(17);
  });

  it("leave a file alone that took the segment's name while it was being compressed", async () => {
    // The compression of the first writer's full segment waits, its gzip made, at the write of its temporary file.
    let reached!: () => void;
    const atTemp = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated: StoreFs = {
      ...nodeFs,
      open: async (p, flags, mode) => {
        // The temporary file of a segment's gzip: the segment it replaces is there already (a new file's is not).
        const target = path.join(path.dirname(p), path.basename(p).replace(/^\.(\d{8}\.json)\..*\.tmp$/, '$1'));
        if (path.basename(p).startsWith('.') && target !== p && (await fs.stat(target).catch(() => null))) {
          reached();
          await gate;
        }
        return nodeFs.open(p, flags, mode);
      },
    };
    const first = openStore(dir, { fs: gated });
    let cp = (await first.create(makeCheckpoint(TASK, 5))).checkpoint;
    for (let v = 2; v <= 17; v++) cp = (await first.save(TASK, { ...loopedSave(cp, v, 5, 200), lease: held })).checkpoint;
    await atTemp;
    // Meanwhile the task folder is removed, and a task is written anew under its name, its own segment at 00000002.json.
    await fs.rm(path.join(dir, TASK), { recursive: true });
    const second = openStore(dir);
    let again = (await second.create(makeCheckpoint(TASK, 5, { phase: 'anew' }))).checkpoint;
    for (let v = 2; v <= 5; v++) again = (await second.save(TASK, { ...loopedSave(again, v, 5, 30), lease: held })).checkpoint;
    const theirs = await fs.readFile(file(2));
    release();
    await first.settle(TASK);
    expect(await fs.readFile(file(2))).toEqual(theirs);
    expect((await fs.readdir(path.join(dir, TASK, 'versions'))).filter((n) => n.startsWith('.'))).toEqual([]);
    expect((await openStore(dir).getTask(TASK))?.checkpoint).toEqual(again);
  });
});
