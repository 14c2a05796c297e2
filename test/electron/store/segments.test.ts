/**
 * Segments: the versions a lease holder appends to the file of an earlier
 * version (docs/FORMAT.md, "Segments"). Records are sealed, a torn tail is
 * never read, a version's own file wins over its record, checkpoint.json
 * catches up when a segment is full or the lease is let go, and every reader
 * (versions, history list, messages, blobs, listing, recovery report) sees
 * the same versions as with one file per version.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { ConflictError, StoreWriteError, type SaveLease, type SaveRequest } from '../../../electron/store/store-types.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { recoveryReport } from '../../../electron/store/recovery-report.js';
import { encodeDelta, encodeFull, versionFileName } from '../../../electron/store/version-file.js';
import { parseSegment, SEGMENT_VERSIONS } from '../../../electron/store/version-records.js';
import { isCompressed } from '../../../electron/store/segment-compression.js';
import { gunzipSync } from 'node:zlib';
import { encodeBlob } from '../../../electron/store/blob-store.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { cleanup, hashTree, loopedSave, makeCheckpoint, tempRoot } from './store-test-helpers.js';
import { loadForWrite } from '../../../electron/runtime/task-operations.js';

const TASK = 'seg';
const PLAN = 6;
const held: SaveLease = { taskId: TASK, held: true, generation: 1 };

let dir: string;
beforeEach(async () => {
  dir = await tempRoot('ws-segments-');
});
afterEach(() => cleanup(dir));

const versionsDir = () => path.join(dir, TASK, 'versions');
const files = async () => (await fs.readdir(versionsDir())).filter((n) => /^\d{8}\.json$/.test(n)).sort();
const hotVersion = async () => (JSON.parse(await fs.readFile(path.join(dir, TASK, 'checkpoint.json'), 'utf8')) as Checkpoint).version;

/** Version 1 created, then versions 2..last saved with `lease`; every saved checkpoint, by version. */
async function savedTask(last: number, lease: SaveLease | undefined = held, store = openStore(dir)): Promise<Map<number, Checkpoint>> {
  const saved = new Map<number, Checkpoint>();
  let cp = (await store.create(makeCheckpoint(TASK, PLAN))).checkpoint;
  saved.set(1, cp);
  for (let v = 2; v <= last; v++) {
    cp = (await store.save(TASK, { ...loopedSave(cp, v, PLAN, 40 + v), lease })).checkpoint;
    saved.set(v, cp);
  }
  return saved;
}

/** Every version, its history and its step result read back as they were saved. */
async function expectReadsBack(saved: Map<number, Checkpoint>, store = openStore(dir)): Promise<void> {
  const last = Math.max(...saved.keys());
  expect((await store.history(TASK)).map((h) => h.version)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
  for (const [v, cp] of saved) {
    expect(await store.readVersion(TASK, v)).toEqual(cp);
    expect((await store.readHistory(TASK, v)).map((m) => m.content)).toEqual(Array.from({ length: v - 1 }, (_, i) => `m${i + 2}`));
    if (v > 1) expect(await store.readBlob(TASK, cp.plan[v % PLAN].result_ref!)).toEqual({ version: v, text: 'r'.repeat(40 + v) });
  }
}

describe('sealed records', () => {
  const blob = (n: number) => encodeBlob({ n }, n);
  /** Three sealed records: a full snapshot of version 4, then deltas 5 and 6, each carrying blobs. */
  function threeRecords(): Buffer {
    const doc = Buffer.from(JSON.stringify({ a: 1 }));
    return Buffer.concat([
      encodeFull(4, doc, [blob(1), blob(2)], true).bytes,
      encodeDelta(5, [{ op: 'replace', path: ['a'], value: 2, old: 1 }], [blob(3)], true).bytes,
      encodeDelta(6, [{ op: 'replace', path: ['a'], value: 3, old: 2 }], [], true).bytes,
    ]);
  }

  it('are found from their heads, each with its envelope line and blob lines, and end clean', () => {
    const bytes = threeRecords();
    const segment = parseSegment(bytes, 4);
    expect(segment).toMatchObject({ sealed: true, tail: 'clean' });
    expect(segment.records.map((r) => r.version)).toEqual([4, 5, 6]);
    const [full, five, six] = segment.records.map((r) => bytes.subarray(r.start, r.end).toString());
    expect(full.split('\n').slice(1, -1)).toEqual([blob(1), blob(2)].map((b) => Buffer.from(b.bytes).toString()));
    expect(JSON.parse(full.split('\n')[0])).toMatchObject({ version: 4, kind: 'full', lines: 2, checkpoint: { a: 1 } });
    expect(JSON.parse(five.split('\n')[0])).toMatchObject({ version: 5, kind: 'delta', lines: 1, base: 4 });
    expect(six.split('\n')).toHaveLength(2);
  });

  it('cut anywhere: the whole records before the cut are read, the rest is a torn tail', () => {
    const bytes = threeRecords();
    const ends = parseSegment(bytes, 4).records.map((r) => bytes.indexOf(0x0a, r.end) + 1);
    for (let cut = ends[0]; cut < bytes.length; cut++) {
      const segment = parseSegment(bytes.subarray(0, cut), 4);
      const whole = ends.filter((e) => e <= cut).length;
      expect(
        segment.records.map((r) => r.version),
        `cut at ${cut}`,
      ).toEqual([4, 5, 6].slice(0, whole));
      expect(segment.tail, `cut at ${cut}`).toBe(ends.includes(cut) ? 'clean' : 'torn');
      if (segment.tail === 'torn') expect(segment.tailVersion).toBe(4 + whole);
    }
  });

  it('a tail of zeros (bytes that never reached the disk) is torn, a changed byte is damage', () => {
    const bytes = threeRecords();
    const twoEnd = bytes.indexOf(0x0a, parseSegment(bytes, 4).records[1].end) + 1;
    expect(parseSegment(Buffer.concat([bytes.subarray(0, twoEnd), Buffer.alloc(300)]), 4)).toMatchObject({ tail: 'torn', tailVersion: 6 });
    const changed = Buffer.from(bytes);
    changed[parseSegment(bytes, 4).records[1].end - 3] ^= 1;
    const segment = parseSegment(changed, 4);
    expect(segment.records.map((r) => r.version)).toEqual([4]);
    expect(segment).toMatchObject({ tail: 'damaged', tailVersion: 5 });
    expect(segment.tailReason).toMatch(/do not hash to its seal/);
  });

  it('a file without a sealed head is one version, as every file was before segments; a 17th record is damage', () => {
    const plain = encodeFull(3, Buffer.from('{"a":1}'), [blob(1)]).bytes;
    expect(parseSegment(plain, 3)).toEqual({
      sealed: false,
      records: [{ version: 3, start: 0, envelopeEnd: null, end: plain.length, sealedEnd: plain.length, seal: null }],
      tail: 'clean',
    });
    const many = Buffer.concat(Array.from({ length: SEGMENT_VERSIONS + 1 }, (_, i) => encodeDelta(i + 1, [], [], true).bytes));
    expect(parseSegment(many, 1)).toMatchObject({ tail: 'damaged', tailVersion: SEGMENT_VERSIONS + 1 });
    expect(parseSegment(many, 1).records).toHaveLength(SEGMENT_VERSIONS);
    // Each record ends, its seal line included, where the next begins.
    const records = parseSegment(many, 1).records;
    for (let i = 1; i < records.length; i++) expect(records[i - 1].sealedEnd).toBe(records[i].start);
    expect(many.subarray(records[0].end, records[0].sealedEnd).toString()).toMatch(/^\{"seal":1,"sha256":"[0-9a-f]{64}"\}\n$/);
  });
});

describe('saves under the lease', () => {
  it('append to one file per sixteen versions, and read back like one file per version', async () => {
    const store = openStore(dir);
    const saved = await savedTask(41, held, store);
    // Version 1 is created before any lease; 2..17, 18..33 and 34..41 are segments.
    expect(await files()).toEqual([1, 2, 18, 34].map(versionFileName));
    // checkpoint.json names the last version of the last full segment, and the next version is a file of its own.
    expect(await hotVersion()).toBe(33);
    await expectReadsBack(saved);
    const listed = (await openStore(dir).listTasks()).find((t) => t.task_id === TASK);
    expect(listed?.checkpoint?.version).toBe(41);
    expect(listed?.problems).toEqual([]);
    const entry = await openStore(dir).getTask(TASK);
    expect(entry?.checkpoint).toEqual(saved.get(41));
    expect(entry?.problems).toEqual([]);
    const report = await recoveryReport(dir, TASK);
    expect(report).toMatchObject({ latest_version: 41, hot_version: 33, interrupted_versions: [] });
    expect(report.account).toHaveLength(1);
    // A history entry's bytes are its record's, in the file as written (a full segment may be compressed by now).
    const sizes = (await store.history(TASK)).slice(17, 33).reduce((n, h) => n + h.bytes, 0);
    const sealLines = 16 * `{"seal":20,"sha256":"${'0'.repeat(64)}"}\n`.length;
    const written = async (v: number) => {
      const bytes = await fs.readFile(path.join(versionsDir(), versionFileName(v)));
      return isCompressed(bytes) ? gunzipSync(bytes) : bytes;
    };
    expect(sizes + sealLines).toBe((await written(18)).length);

    // Letting the lease go brings checkpoint.json up to the last version, once the full segments are compressed.
    expect(await store.settle(TASK)).toEqual([]);
    expect(await hotVersion()).toBe(41);
    expect((await openStore(dir).getTask(TASK))?.checkpoint).toEqual(saved.get(41));
    const raw = async (v: number) => fs.readFile(path.join(versionsDir(), versionFileName(v)));
    expect([isCompressed(await raw(2)), isCompressed(await raw(18)), isCompressed(await raw(34))]).toEqual([true, true, false]);
    expect((await raw(18)).length * 3).toBeLessThan((await written(18)).length);
    // Compressed, every version reads back the same, and the task lists and opens without a problem.
    await expectReadsBack(saved);
    expect((await openStore(dir).listTasks()).find((t) => t.task_id === TASK)?.problems).toEqual([]);
    expect(await recoveryReport(dir, TASK)).toMatchObject({ latest_version: 41, interrupted_versions: [], leftover_temp_files: [] });
  });

  it('a writer in another process starts a file of its own, and the one after it appends', async () => {
    const saved = await savedTask(9);
    const other = openStore(dir);
    let cp = saved.get(9)!;
    for (let v = 10; v <= 12; v++) {
      cp = (await other.save(TASK, { ...loopedSave(cp, v, PLAN, 40 + v), lease: held })).checkpoint;
      saved.set(v, cp);
    }
    expect(await files()).toEqual([1, 2, 10].map(versionFileName));
    await expectReadsBack(saved);
  });

  it('a save without the lease ends the segment: its version is a file of its own, and checkpoint.json names it', async () => {
    const store = openStore(dir);
    const saved = await savedTask(5, held, store);
    const cp = (await store.save(TASK, loopedSave(saved.get(5)!, 6, PLAN, 46))).checkpoint;
    saved.set(6, cp);
    expect(await files()).toEqual([1, 2, 6].map(versionFileName));
    expect(await hotVersion()).toBe(6);
    // A lease no longer held is no lease.
    const gone = (await store.save(TASK, { ...loopedSave(cp, 7, PLAN, 47), lease: { taskId: TASK, held: false, generation: 1 } }))
      .checkpoint;
    saved.set(7, gone);
    expect(await files()).toEqual([1, 2, 6, 7].map(versionFileName));
    await expectReadsBack(saved);
  });

  it('a record cut short is never read, is named by the recovery report, and its version is saved again as a file', async () => {
    const saved = await savedTask(8);
    const segment = path.join(versionsDir(), versionFileName(2));
    const bytes = await fs.readFile(segment);
    const records = parseSegment(bytes, 2).records;
    const lastStart = records.at(-1)!.start;
    // Every cut inside version 8's record, a sample of them for speed.
    for (const cut of [lastStart + 1, lastStart + 50, records.at(-1)!.end - 1, records.at(-1)!.end + 10, bytes.length - 1]) {
      await fs.writeFile(segment, bytes.subarray(0, cut));
      const entry = await openStore(dir).getTask(TASK);
      expect(entry?.checkpoint?.version, `cut at ${cut}`).toBe(7);
      expect(entry?.problems.filter((p) => p.severity === 'error')).toEqual([]);
      const report = await recoveryReport(dir, TASK);
      expect(report).toMatchObject({ latest_version: 7, interrupted_versions: [8] });
      expect(report.account.join('\n')).toContain('the save of version 8 was interrupted before its commit point');
    }
    const again = openStore(dir);
    const cp = (await again.save(TASK, { ...loopedSave(saved.get(7)!, 8, PLAN, 48), lease: held })).checkpoint;
    saved.set(8, cp);
    expect(await files()).toEqual([1, 2, 8].map(versionFileName));
    await expectReadsBack(saved);
    expect((await recoveryReport(dir, TASK)).interrupted_versions).toEqual([]);
  });

  it("a version's own file wins over its record, and a lease holder never appends over one", async () => {
    const store = openStore(dir);
    const saved = await savedTask(5, held, store);
    // Another process ignoring the lease writes version 6 as a file of its own.
    const intruder = (await openStore(dir).save(TASK, loopedSave(saved.get(5)!, 6, PLAN, 7))).checkpoint;
    await expect(store.save(TASK, { ...loopedSave(saved.get(5)!, 6, PLAN, 46), lease: held })).rejects.toBeInstanceOf(ConflictError);
    expect(await openStore(dir).readVersion(TASK, 6)).toEqual(intruder);
    // The holder saves on after the version it lost.
    const seven = (await store.save(TASK, { ...loopedSave(intruder, 7, PLAN, 47), lease: held })).checkpoint;
    expect(await files()).toEqual([1, 2, 6, 7].map(versionFileName));
    expect(await openStore(dir).readVersion(TASK, 7)).toEqual(seven);

    // A file made for a version a segment already holds (by hand, or by a writer whose fdatasync failed) wins too,
    // and the records after it in that segment, built on the record it replaced, go with that record.
    const four = (await openStore(dir).readVersion(TASK, 4)) as Checkpoint;
    const fresh = encodeFull(4, Buffer.from(JSON.stringify({ ...four, phase: 'from its own file' })));
    await fs.writeFile(path.join(versionsDir(), versionFileName(4)), fresh.bytes);
    const reader = openStore(dir);
    expect((await reader.readVersion(TASK, 4)).phase).toBe('from its own file');
    expect((await reader.history(TASK)).map((h) => h.version)).toEqual([1, 2, 3, 4, 6, 7]);
    await expect(reader.readVersion(TASK, 5)).rejects.toThrow(/version 5 does not exist/);
  });

  it('a writer that derived the task before a lease holder appended to it does not create a file over the appended version', async () => {
    const holder = openStore(dir);
    const saved = await savedTask(5, held, holder);
    let six: Checkpoint | null = null;
    // Another writer (say, a new lease holder after a takeover the old holder has not noticed yet) has read the
    // task at version 5 and is writing version 6's file when the old holder appends version 6 to its segment.
    const racing: StoreFs = {
      ...nodeFs,
      open: async (file, flags, mode) => {
        if (six === null && path.basename(file).startsWith(`.${versionFileName(6)}.`)) {
          six = (await holder.save(TASK, { ...loopedSave(saved.get(5)!, 6, PLAN, 46), lease: held })).checkpoint;
        }
        return nodeFs.open(file, flags, mode);
      },
    };
    const other = openStore(dir, { fs: racing });
    // Its file would win over the record the old holder was told is saved: it is refused instead.
    await expect(other.save(TASK, loopedSave(saved.get(5)!, 6, PLAN, 2))).rejects.toBeInstanceOf(ConflictError);
    expect(six).not.toBeNull();
    expect(await openStore(dir).readVersion(TASK, 6)).toEqual(six);
    expect(await files()).toEqual([1, 2].map(versionFileName));
    expect((await fs.readdir(versionsDir())).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('a record changed after it was written: the versions before it are shown, and no save or resume follows it', async () => {
    await savedTask(8);
    const segment = path.join(versionsDir(), versionFileName(2));
    const bytes = await fs.readFile(segment);
    const six = parseSegment(bytes, 2).records.find((r) => r.version === 6)!;
    bytes[six.end - 3] ^= 1;
    await fs.writeFile(segment, bytes);
    const before = await hashTree(dir);
    const entry = await openStore(dir).getTask(TASK);
    expect(entry?.checkpoint?.version).toBe(5);
    const errors = entry!.problems.filter((p) => p.severity === 'error');
    expect(errors.map((p) => `${p.file}: ${p.message}`)).toContain(
      `${TASK}/versions/${versionFileName(2)}: version 6: its bytes do not hash to its seal: they were changed after they were written`,
    );
    await expect(loadForWrite(openStore(dir), TASK)).rejects.toThrow(
      /cannot be saved after its newest version file: .*version 6: its bytes do not hash/,
    );
    await expect(openStore(dir).save(TASK, { ...loopedSave(entry!.checkpoint!, 6, PLAN, 1), lease: held })).rejects.toThrow(
      /version 6: its bytes do not hash/,
    );
    expect(await hashTree(dir)).toEqual(before);
  });

  it('a failed append takes its bytes back off the file; the next save is a file of its own', async () => {
    let failWrites = false;
    const failing: StoreFs = {
      ...nodeFs,
      open: async (file, flags, mode) => {
        const handle = await nodeFs.open(file, flags, mode);
        return {
          ...handle,
          write: async (data, position) => {
            await handle.write(data, position);
            if (failWrites) throw Object.assign(new Error('EIO: injected'), { code: 'EIO' });
          },
          datasync: () => handle.datasync(),
          truncate: (length) => handle.truncate(length),
          writeFile: (data) => handle.writeFile(data),
          readFile: () => handle.readFile(),
          read: (b, o, l, p) => handle.read(b, o, l, p),
          stat: () => handle.stat(),
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };
    const store = openStore(dir, { fs: failing });
    const saved = await savedTask(4, held, store);
    const segment = path.join(versionsDir(), versionFileName(2));
    const before = await fs.readFile(segment);
    failWrites = true;
    const request: SaveRequest = { ...loopedSave(saved.get(4)!, 5, PLAN, 45), lease: held };
    const err = await store.save(TASK, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreWriteError);
    expect((err as Error).message).toMatch(/could not save version 5 \(EIO\); nothing was written/);
    expect(await fs.readFile(segment)).toEqual(before);
    expect((await openStore(dir).getTask(TASK))?.checkpoint?.version).toBe(4);
    failWrites = false;
    saved.set(5, (await store.save(TASK, request)).checkpoint);
    expect(await files()).toEqual([1, 2, 5].map(versionFileName));
    await expectReadsBack(saved);
  });
});
