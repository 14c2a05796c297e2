/**
 * The hot snapshots a store keeps parsed and checked (kept-checkpoints.ts): a
 * store kept open answers every read as a store opened afresh would, whatever
 * was written between (saves appended to a segment, a checkpoint.json
 * rewritten to the same size, a version that does not validate), and what it
 * hands out is frozen, so no caller can change the next read's answer.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FILE_BYTES, openStore } from '../../../electron/store/directory-store.js';
import { readFolder } from '../../../electron/store/directory-scan.js';
import { DETAIL, LISTING } from '../../../electron/store/task-reader.js';
import { nodeFs } from '../../../electron/store/store-fs.js';
import { freezeDeep, freezeSince, KeptCheckpoints } from '../../../electron/store/kept-checkpoints.js';
import { applyDiff, type DiffOp } from '../../../shared/diff/json-diff.js';
import { checkCheckpoint } from '../../../electron/store/checkpoint-check.js';
import { encodeDelta, encodeFull, rebuildVersion, versionFileName, type Envelope } from '../../../electron/store/version-file.js';
import { parseSegment } from '../../../electron/store/version-records.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { cleanup, countingWholeReads, loopedSave, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

const TASK = 'kept';
const PLAN = 6;
const held: SaveLease = { taskId: TASK, held: true, generation: 1 };

let dir: string;
beforeEach(async () => {
  dir = await tempRoot('ws-kept-');
});
afterEach(() => cleanup(dir));

const hotPath = () => path.join(dir, TASK, 'checkpoint.json');

describe('KeptCheckpoints', () => {
  const bytes = (text: string) => Buffer.from(text);

  it('gives back a snapshot for exactly the bytes it was kept with, and lets it go otherwise', () => {
    const kept = new KeptCheckpoints();
    const snapshot = kept.keep('/a', bytes('{"n":1}'), { n: 1 });
    expect(kept.match('/a', bytes('{"n":1}'))).toBe(snapshot);
    expect(kept.match('/a', bytes('{"n":2}'))).toBeNull();
    // A snapshot whose bytes were not matched is gone: the read that missed keeps what it read instead.
    expect(kept.match('/a', bytes('{"n":1}'))).toBeNull();
    expect(kept.match('/b', bytes('{"n":1}'))).toBeNull();
  });

  it('keeps the tasks used last, within a count and a number of bytes; a snapshot larger than the bound is not kept', () => {
    const kept = new KeptCheckpoints(2, 10);
    kept.keep('/a', bytes('aaaa'), 'a');
    kept.keep('/b', bytes('bbbb'), 'b');
    expect(kept.match('/a', bytes('aaaa'))).not.toBeNull();
    // Three is one too many: /b, used longest ago, goes.
    kept.keep('/c', bytes('cc'), 'c');
    expect(kept.size).toBe(2);
    expect(kept.match('/b', bytes('bbbb'))).toBeNull();
    // 4 + 2 + 8 bytes is over 10: the oldest go until it fits.
    kept.keep('/d', bytes('dddddddd'), 'd');
    expect(kept.match('/a', bytes('aaaa'))).toBeNull();
    expect(kept.match('/d', bytes('dddddddd'))).not.toBeNull();
    expect(kept.keep('/e', bytes('e'.repeat(11)), 'e')).toBeNull();
    expect(kept.match('/e', bytes('e'.repeat(11)))).toBeNull();
  });

  it('freezes the document it keeps and each check made of it, and makes each check once', () => {
    const kept = new KeptCheckpoints();
    const doc = { schema_version: 1, plan: [{ id: 's' }] };
    const snapshot = kept.keep('/a', bytes(JSON.stringify(doc)), doc)!;
    expect(Object.isFrozen(doc.plan[0])).toBe(true);
    let calls = 0;
    const check = (d: unknown) => {
      calls++;
      return { checkpoint: { ...(d as object), copied: { deep: true } } as never, problems: [], readOnly: false };
    };
    const first = snapshot.checked(check, 'a');
    expect(snapshot.checked(check, 'a')).toBe(first);
    expect(calls).toBe(1);
    expect(Object.isFrozen((first.checkpoint as unknown as { copied: object }).copied)).toBe(true);
  });

  it('freezeDeep freezes every object below the value, arrays included', () => {
    const v = freezeDeep({ a: [{ b: { c: 1 } }], d: null });
    expect(Object.isFrozen(v.a)).toBe(true);
    expect(Object.isFrozen(v.a[0].b)).toBe(true);
  });

  describe('freezeSince', () => {
    type Doc = { phase: string; plan: { id: string; status: string; extra?: { deep: number[] } }[] };
    const base = () => freezeDeep<Doc>({ phase: 'a', plan: Array.from({ length: 600 }, (_, i) => ({ id: `s${i}`, status: 'pending' })) });
    const ops: DiffOp[] = [
      { op: 'replace', path: ['plan', 5, 'status'], value: 'done' },
      { op: 'add', path: ['plan', 600], value: { id: 'new', status: 'pending', extra: { deep: [1, 2] } } },
      { op: 'replace', path: ['phase'], value: 'b' },
    ];
    const everyObjectFrozen = (v: unknown): boolean =>
      typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(everyObjectFrozen));

    it('freezes all that a delta made of a frozen document, with its lineage or without', () => {
      for (const lineage of [true, false]) {
        const before = base();
        const next = freezeSince(applyDiff(before, ops, lineage) as Doc, before);
        expect(everyObjectFrozen(next)).toBe(true);
        expect(next.plan[5].status).toBe('done');
        expect(next.plan[600].extra?.deep).toEqual([1, 2]);
        // What the delta did not touch is the very same object.
        expect(next.plan[4]).toBe(before.plan[4]);
      }
    });

    it('visits a copied array only at the places its lineage says changed', () => {
      const before = base();
      const next = applyDiff(before, ops, true) as Doc;
      // A write the lineage does not know of (which applyDiff never makes): left alone, so not visited.
      const unrecorded = { id: 's7', status: 'pending' };
      next.plan[7] = unrecorded;
      freezeSince(next, before);
      expect(Object.isFrozen(next.plan[5])).toBe(true);
      expect(Object.isFrozen(unrecorded)).toBe(false);
    });

    it('freezes the whole value when the previous one is not frozen', () => {
      const next = freezeSince({ a: [{ b: {} }] }, { a: [] });
      expect(everyObjectFrozen(next)).toBe(true);
    });
  });
});

/** Version 1 created, then saved with the lease through `last`: the hot snapshot lags while each segment fills. */
async function leasedSaves(from: Checkpoint | null, last: number, store = openStore(dir), plan = PLAN): Promise<Checkpoint> {
  let cp = from ?? (await store.create(makeCheckpoint(TASK, plan))).checkpoint;
  for (let v = cp.version + 1; v <= last; v++)
    cp = (await store.save(TASK, { ...loopedSave(cp, v, plan, 40 + v), lease: held })).checkpoint;
  return cp;
}

describe('a store kept open', () => {
  it('answers each read as a store opened afresh, after every save of a segment filling and of the next', async () => {
    const writer = openStore(dir);
    const kept = openStore(dir);
    let cp = await leasedSaves(null, 1, writer);
    for (let v = 2; v <= 40; v++) {
      cp = await leasedSaves(cp, v, writer);
      const fresh = openStore(dir);
      const [mine, theirs] = [await kept.getTask(TASK), await fresh.getTask(TASK)];
      expect(mine).toEqual(theirs);
      expect(mine?.checkpoint).toEqual(cp);
      expect(await kept.readHistory(TASK)).toEqual(await fresh.readHistory(TASK));
      // As a host asks for the messages of the version it shows.
      expect(await kept.readHistory(TASK, cp.version)).toEqual(await fresh.readHistory(TASK, cp.version));
    }
    await writer.settle(TASK);
    expect(await kept.getTask(TASK)).toEqual(await openStore(dir).getTask(TASK));
  });

  it('answers as a fresh store for any run of saves, with or without the lease, the task read between any of them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ leased: fc.boolean(), read: fc.boolean(), phase: fc.string({ maxLength: 8 }), step: fc.nat(PLAN - 1) }), {
          minLength: 1,
          maxLength: 24,
        }),
        async (saves) => {
          await fs.rm(path.join(dir, TASK), { recursive: true, force: true });
          const writer = openStore(dir);
          const kept = openStore(dir);
          let cp = (await writer.create(makeCheckpoint(TASK, PLAN))).checkpoint;
          for (const s of saves) {
            const next = withoutVersion(cp);
            next.plan = next.plan.map((p, i) => (i === s.step ? { ...p, status: p.status === 'done' ? 'pending' : 'done' } : p));
            next.phase = s.phase;
            cp = (await writer.save(TASK, { expectedVersion: cp.version, checkpoint: next, ...(s.leased ? { lease: held } : {}) }))
              .checkpoint;
            if (s.read) expect(await kept.getTask(TASK)).toEqual(await openStore(dir).getTask(TASK));
          }
          expect((await kept.getTask(TASK))?.checkpoint).toEqual(cp);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reads a task removed and written anew under its name as the new task, segments and all', async () => {
    const kept = openStore(dir);
    await leasedSaves(null, 20);
    expect((await kept.getTask(TASK))?.checkpoint?.version).toBe(20);
    // The writer may still be compressing its full segment: its temporary file can appear in versions/ as the folder
    // is removed (ENOTEMPTY, retried), and its rename must not land on the segment of the task written anew.
    await fs.rm(path.join(dir, TASK), { recursive: true, maxRetries: 5 });
    const again = await leasedSaves(null, 7);
    const [mine, theirs] = [await kept.getTask(TASK), await openStore(dir).getTask(TASK)];
    expect(mine?.checkpoint).toEqual(again);
    expect(mine).toEqual(theirs);
    expect(await kept.readHistory(TASK)).toEqual(await openStore(dir).readHistory(TASK));
  });

  it('sees a checkpoint.json rewritten to the same size with other content', async () => {
    const store = openStore(dir);
    await store.create(makeCheckpoint(TASK, PLAN, { phase: 'aaaa' }));
    expect((await store.getTask(TASK))?.checkpoint?.phase).toBe('aaaa');
    const before = await fs.readFile(hotPath(), 'utf8');
    const after = before.replace('"phase":"aaaa"', '"phase":"bbbb"');
    expect(after.length).toBe(before.length);
    await fs.writeFile(hotPath(), after);
    expect((await store.getTask(TASK))?.checkpoint?.phase).toBe('bbbb');
  });

  it('reports a version after the kept snapshot that does not validate exactly as a fresh store does', async () => {
    const store = openStore(dir);
    const created = (await store.create(makeCheckpoint(TASK, PLAN))).checkpoint;
    expect((await store.getTask(TASK))?.problems).toEqual([]);
    // Version 2 written by another program: a delta that gives a step a status the schema does not know.
    const bad = encodeDelta(2, [{ op: 'replace', path: ['plan', 0, 'status'], value: 'bogus' }]);
    await fs.writeFile(path.join(dir, TASK, 'versions', versionFileName(2)), bad.bytes);
    const [mine, theirs] = [await store.getTask(TASK), await openStore(dir).getTask(TASK)];
    expect(mine).toEqual(theirs);
    expect(mine?.checkpoint?.version).toBe(created.version);
    expect(mine?.problems.some((p) => p.file === `${TASK}/versions/${versionFileName(2)}` && p.reason === 'schema')).toBe(true);
  });

  it('hands out frozen checkpoints, so a caller that changes one gets an error and the next read the stored state', async () => {
    const store = openStore(dir);
    await leasedSaves(null, 5, store);
    for (const entry of [await store.getTask(TASK), await store.getTask(TASK)]) {
      const cp = entry!.checkpoint!;
      expect(() => {
        (cp as { phase: string }).phase = 'changed';
      }).toThrow(TypeError);
      expect(() => {
        cp.plan[0].status = 'failed';
      }).toThrow(TypeError);
    }
    expect((await store.getTask(TASK))?.checkpoint).toEqual((await openStore(dir).getTask(TASK))?.checkpoint);
  });

  it('keeps a snapshot of a task opened, and none of a task listed', async () => {
    await openStore(dir).create(makeCheckpoint(TASK, PLAN));
    const kept = new KeptCheckpoints();
    const ctx = { fs: nodeFs, root: dir, realRoot: dir, maxFileBytes: DEFAULT_MAX_FILE_BYTES, kept };
    expect((await readFolder(ctx, TASK, LISTING))?.entry.checkpoint?.version).toBe(1);
    expect(kept.size).toBe(0);
    const opened = (await readFolder(ctx, TASK, DETAIL))?.entry.checkpoint;
    expect(kept.size).toBe(1);
    expect(Object.isFrozen(opened)).toBe(true);
    expect(opened).toEqual(checkCheckpoint(JSON.parse(await fs.readFile(hotPath(), 'utf8')), 'x').checkpoint);
    expect((await readFolder(ctx, TASK, DETAIL))?.entry.checkpoint).toBe(opened);
  });
});

const segmentPath = () => path.join(dir, TASK, 'versions', versionFileName(2));

/**
 * Rewrite version `version`'s record in the segment of version 2 with the ops `edit` makes of its own, the blobs it
 * carries kept, sealed as a writer seals a record.
 */
async function resealRecord(version: number, edit: (ops: DiffOp[]) => DiffOp[]): Promise<void> {
  const bytes = await fs.readFile(segmentPath());
  const span = parseSegment(bytes, 2).records.find((r) => r.version === version)!;
  const envelope = JSON.parse(bytes.subarray(span.start, span.envelopeEnd!).toString()) as Extract<Envelope, { kind: 'delta' }>;
  const lines = bytes
    .subarray(span.envelopeEnd! + 1, span.end)
    .toString()
    .split('\n')
    .filter(Boolean);
  const blobs = lines.map((l) => ({ hex: createHash('sha256').update(l).digest('hex'), bytes: Buffer.from(l) }));
  const record = encodeDelta(version, edit(envelope.ops), blobs, true).bytes;
  await fs.writeFile(segmentPath(), Buffer.concat([bytes.subarray(0, span.start), record, bytes.subarray(span.sealedEnd)]));
}

describe('the version kept after the snapshot', () => {
  const readCtx = (kept: KeptCheckpoints) => ({ fs: nodeFs, root: dir, realRoot: dir, maxFileBytes: DEFAULT_MAX_FILE_BYTES, kept });
  const keptOf = async (kept: KeptCheckpoints) => kept.match(hotPath(), await fs.readFile(hotPath()));
  // A plan large beside what a save changes: the segment's versions are all deltas (no full snapshot ends a walk).
  const saves = (from: Checkpoint | null, last: number, writer: ReturnType<typeof openStore>) => leasedSaves(from, last, writer, 60);

  it('is the newest version a read rebuilt, and the next read applies only the deltas after it', async () => {
    // Version 1 is checkpoint.json; one writer's versions 2 to 17 fill the segment named for version 2.
    const writer = openStore(dir);
    const eight = await saves(null, 8, writer);
    const kept = new KeptCheckpoints();
    const ctx = readCtx(kept);
    expect((await readFolder(ctx, TASK, DETAIL))?.entry.checkpoint?.version).toBe(8);
    const later = (await keptOf(kept))?.later;
    expect(later?.version).toBe(8);
    expect(Object.isFrozen(later?.doc)).toBe(true);
    const cp = await saves(eight, 11, writer);
    const hot = {
      version: 1,
      rebuilt: { doc: JSON.parse(await fs.readFile(hotPath(), 'utf8')), fullBytes: 0, deltaBytes: 0, fullVersion: 1 },
    };
    const rebuilt = await rebuildVersion(ctx, path.join(dir, TASK), 11, [later!.known, hot]);
    expect(rebuilt.ok && rebuilt.value.from).toBe(8);
    expect(rebuilt.ok && rebuilt.value.since?.map((d) => d.version)).toEqual([9, 10, 11]);
    expect((await readFolder(ctx, TASK, DETAIL))?.entry.checkpoint).toEqual(cp);
    expect((await keptOf(kept))?.later?.version).toBe(11);
  });

  it("is not taken once a record before it was rewritten and sealed anew: the read is a fresh store's", async () => {
    const [store, writer] = [openStore(dir), openStore(dir)];
    const eight = await saves(null, 8, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(8);
    await saves(eight, 10, writer);
    await resealRecord(5, (ops) => [...ops, { op: 'replace', path: ['goal'], value: 'rewritten' }]);
    const [mine, theirs] = [await store.getTask(TASK), await openStore(dir).getTask(TASK)];
    expect(theirs?.checkpoint?.goal).toBe('rewritten');
    expect(mine).toEqual(theirs);
  });

  it("is not taken once a version before it has a file of its own: the read is a fresh store's", async () => {
    const [store, writer] = [openStore(dir), openStore(dir)];
    const six = await saves(null, 6, writer);
    const eight = await saves(six, 8, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(8);
    await saves(eight, 10, writer);
    // A file for version 6 put in versions/: it wins over version 6's record in the segment, and holds no later one.
    await fs.writeFile(path.join(dir, TASK, 'versions', versionFileName(6)), encodeFull(6, Buffer.from(JSON.stringify(six))).bytes);
    const [mine, theirs] = [await store.getTask(TASK), await openStore(dir).getTask(TASK)];
    expect(theirs?.checkpoint?.version).not.toBe(10);
    expect(mine).toEqual(theirs);
  });
});

describe('the messages of the version a store kept open showed', () => {
  // As above: a plan large beside what a save changes, so the segment's versions are all deltas.
  const saves = (from: Checkpoint | null, last: number, writer: ReturnType<typeof openStore>) => leasedSaves(from, last, writer, 60);
  it('are read from the version the last read kept, without rebuilding it, as a fresh store reads them', async () => {
    const writer = openStore(dir);
    const seven = await saves(null, 7, writer);
    const { fs: counted, reads } = countingWholeReads();
    const store = openStore(dir, { fs: counted });
    const mark = { head: seven.history.head, count: seven.history.count };
    await saves(seven, 10, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(10);
    reads.clear();
    const tail = await store.readHistoryAfter(TASK, 10, mark);
    expect(tail).toEqual(await openStore(dir).readHistoryAfter(TASK, 10, mark));
    expect(tail.messages.map((m) => m.content)).toEqual(['m8', 'm9', 'm10']);
    // Version 1's full snapshot, which a rebuild of version 10 starts from, is not read, nor is anything twice.
    expect(reads.get(versionFileName(1))).toBeUndefined();
    expect(Math.max(...reads.values())).toBe(1);
  });

  it("are a fresh store's once the version's record was rewritten and sealed anew", async () => {
    const writer = openStore(dir);
    const store = openStore(dir);
    const nine = await saves(null, 9, writer);
    await saves(nine, 10, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(10);
    // Version 10 made to leave the history as version 9 had it: a fresh read of version 10 finds nine messages.
    await resealRecord(10, (ops) => ops.filter((op) => op.path[0] !== 'history'));
    const theirs = await openStore(dir).readHistory(TASK, 10);
    expect(theirs).toHaveLength(nine.history.count);
    expect(await store.readHistory(TASK, 10)).toEqual(theirs);
  });

  it('are read from the kept version though checkpoint.json was written anew: a version is read from versions/', async () => {
    const writer = openStore(dir);
    const { fs: counted, reads } = countingWholeReads();
    const store = openStore(dir, { fs: counted });
    await saves(null, 6, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(6);
    // The same snapshot written out again, with other bytes: a store opened afresh reads version 6 without it.
    const hot = JSON.parse(await fs.readFile(hotPath(), 'utf8')) as unknown;
    await fs.writeFile(hotPath(), JSON.stringify(hot, null, 1));
    reads.clear();
    expect(await store.readHistory(TASK, 6)).toEqual(await openStore(dir).readHistory(TASK, 6));
    expect(reads.get(versionFileName(1))).toBeUndefined();
    expect(reads.get('checkpoint.json')).toBeUndefined();
  });

  it("are read from the kept snapshot when the version shown is checkpoint.json's own", async () => {
    const writer = openStore(dir);
    // Versions 2 to 17 fill the segment of version 2, and checkpoint.json is written at its last.
    const last = await saves(null, 17, writer);
    const { fs: counted, reads } = countingWholeReads();
    const store = openStore(dir, { fs: counted });
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(17);
    reads.clear();
    const messages = await store.readHistory(TASK, 17);
    expect(messages).toEqual(await openStore(dir).readHistory(TASK, 17));
    expect(messages).toHaveLength(last.history.count);
    expect(reads.get(versionFileName(1))).toBeUndefined();
    // checkpoint.json with other bytes: the snapshot kept is not what the version is read from any more.
    const hot = JSON.parse(await fs.readFile(hotPath(), 'utf8')) as unknown;
    await fs.writeFile(hotPath(), JSON.stringify(hot, null, 1));
    reads.clear();
    expect(await store.readHistory(TASK, 17)).toEqual(messages);
    expect(reads.get(versionFileName(1))).toBe(1);
  });

  it('are read the long way once the task folder is a symbolic link, which leads out of the root', async () => {
    const writer = openStore(dir);
    const store = openStore(dir);
    await saves(null, 6, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(6);
    const outside = await tempRoot('ws-kept-outside-');
    try {
      await fs.rename(path.join(dir, TASK), path.join(outside, TASK));
      await fs.symlink(path.join(outside, TASK), path.join(dir, TASK));
      const outcome = (read: Promise<unknown>) =>
        read.then(
          (value) => ({ value }),
          (err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }),
        );
      const theirs = await outcome(openStore(dir).readHistory(TASK, 6));
      expect(theirs).toHaveProperty('error');
      expect(await outcome(store.readHistory(TASK, 6))).toEqual(theirs);
    } finally {
      await cleanup(outside);
    }
  });

  it('are those of a version the store did not keep, read the long way', async () => {
    const writer = openStore(dir);
    const store = openStore(dir);
    const five = await saves(null, 5, writer);
    await saves(five, 8, writer);
    expect((await store.getTask(TASK))?.checkpoint?.version).toBe(8);
    expect(await store.readHistory(TASK, 5)).toEqual(await openStore(dir).readHistory(TASK, 5));
    expect(await store.readHistory(TASK, 5)).toHaveLength(five.history.count);
  });
});
