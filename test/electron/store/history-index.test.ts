/**
 * The history index is a cache of where a task's history chunks lie: a read
 * it places goes straight to the bytes, and whatever the index says, stale,
 * torn, damaged, pointing at the wrong bytes or missing, the messages read are
 * the ones the chain holds, or the same error a read without it gives.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { appendFile, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { openStore } from '../../../electron/store/directory-store.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { decodeIndexLines, encodeIndexLine, HISTORY_INDEX_FILE, historyIndexPath } from '../../../electron/store/history-index.js';
import { isCompressed } from '../../../electron/store/segment-compression.js';
import { cleanup, loopedSave, makeCheckpoint, tempRoot } from './store-test-helpers.js';

const TASK = 'indexed';
const PLAN = 5;
const LAST = 40;
const held: SaveLease = { taskId: TASK, held: true, generation: 1 };
const expected = Array.from({ length: LAST - 1 }, (_, i) => `m${i + 2}`);

let dir: string;
let taskDir: string;
beforeEach(async () => {
  dir = await tempRoot('ws-history-index-');
  taskDir = path.join(dir, TASK);
  const store = openStore(dir);
  let cp = (await store.create(makeCheckpoint(TASK, PLAN))).checkpoint;
  for (let v = 2; v <= LAST; v++) cp = (await store.save(TASK, { ...loopedSave(cp, v, PLAN, 30), lease: held })).checkpoint;
  await store.settle(TASK);
});
afterEach(() => cleanup(dir));

/** nodeFs with the reads of version files counted, by name: read whole, or opened to read a part. */
function countingFs() {
  const reads: string[] = [];
  const note = (p: string) => {
    if (path.basename(path.dirname(p)) === 'versions') reads.push(path.basename(p));
  };
  const fs: StoreFs = {
    ...nodeFs,
    readWholeFile: async (p, opts) => {
      const read = await nodeFs.readWholeFile(p, opts);
      note(p);
      return read;
    },
    open: async (p, flags, mode) => {
      const handle = await nodeFs.open(p, flags, mode);
      note(p);
      return handle;
    },
  };
  return { fs, reads };
}

const contents = async (store = openStore(dir)) => (await store.readHistory(TASK)).map((m) => m.content);

describe('the history index', () => {
  it('is written by the lease holder and places every chunk of the history', async () => {
    const lines = decodeIndexLines(await readFile(historyIndexPath(taskDir)));
    // One chunk per save after version 1 (its create appended none), in runs that each end at a segment's close.
    expect(lines.reduce((n, l) => n + l.chunks.length, 0)).toBe(LAST - 1);
    const head = (await openStore(dir).getTask(TASK))!.checkpoint!.history.head;
    expect(lines.at(-1)!.head).toBe(head);
  });

  it('sends the read straight to the version files that hold the chunks, each once, and lists nothing for the walk', async () => {
    // The two full segments were compressed when they filled: the index's places are in the bytes as written.
    for (const name of ['00000002.json', '00000018.json'])
      expect(isCompressed(await readFile(path.join(taskDir, 'versions', name)))).toBe(true);
    const { fs, reads } = countingFs();
    let listings = 0;
    const counted: StoreFs = {
      ...fs,
      readdirNames: (p) => {
        if (path.basename(p) === 'versions') listings++;
        return nodeFs.readdirNames(p);
      },
    };
    expect(await contents(openStore(dir, { fs: counted }))).toEqual(expected);
    const files = reads.filter((n) => n !== 'history-index.jsonl');
    const lines = decodeIndexLines(await readFile(historyIndexPath(taskDir)));
    const holding = new Set(lines.flatMap((l) => l.chunks.map(([f]) => `${String(f).padStart(8, '0')}.json`)));
    expect(new Set(files)).toEqual(holding);
    // Each once by the walk; opening the task also reads the one holding the checkpoint's version (is it there, and
    // does it hold that version), which is the newest.
    const newest = [...holding].sort().at(-1);
    for (const name of holding) if (name !== newest) expect(files.filter((f) => f === name)).toHaveLength(1);
    // The one listing of versions/ is the opening's: the checkpoint's version is a segment's last record, with no
    // file of its own, and the listing finds the segment that holds it.
    expect(listings).toBe(1);
  });

  it('reads the bytes a version file holds of the history in one read, not one a chunk', async () => {
    const readsOf = new Map<string, number>();
    const fs: StoreFs = {
      ...nodeFs,
      // A segment is read whole, a large file at the chunks' span through a handle: both counted.
      readWholeFile: (p, opts) => {
        const name = path.basename(p);
        if (path.basename(path.dirname(p)) === 'versions' && name !== HISTORY_INDEX_FILE) readsOf.set(name, (readsOf.get(name) ?? 0) + 1);
        return nodeFs.readWholeFile(p, opts);
      },
      open: async (p, flags, mode) => {
        const handle = await nodeFs.open(p, flags, mode);
        if (path.basename(path.dirname(p)) !== 'versions') return handle;
        const name = path.basename(p);
        const read = handle.read.bind(handle);
        handle.read = (...args: Parameters<typeof handle.read>) => {
          readsOf.set(name, (readsOf.get(name) ?? 0) + 1);
          return read(...args);
        };
        return handle;
      },
    };
    const store = openStore(dir, { fs });
    const shown = (await store.getTask(TASK))?.checkpoint?.version;
    readsOf.clear();
    // As a host asks, for the version it shows.
    expect((await store.readHistory(TASK, shown)).map((m) => m.content)).toEqual(expected);
    const lines = decodeIndexLines(await readFile(historyIndexPath(taskDir)));
    const chunksIn = new Map<string, number>();
    for (const [f] of lines.flatMap((l) => l.chunks)) {
      const name = `${String(f).padStart(8, '0')}.json`;
      chunksIn.set(name, (chunksIn.get(name) ?? 0) + 1);
    }
    // The segments hold several chunks each, so a read a chunk would show here.
    expect(Math.max(...chunksIn.values())).toBeGreaterThan(1);
    expect([...readsOf.keys()].sort()).toEqual([...chunksIn.keys()].sort());
    // Opening the task needs what the newest file's first and last bytes say (it holds the checkpoint's version as
    // its last record): the open above read them, and the store knows them while the file is the same file. The
    // walk reads each file once.
    for (const [, n] of readsOf) expect(n).toBe(1);
  });

  it('reads the same messages without it, at every version', async () => {
    const indexed = openStore(dir);
    const byVersion = [];
    for (let v = 1; v <= LAST; v++) byVersion.push(await indexed.readHistory(TASK, v));
    await rm(historyIndexPath(taskDir));
    const plain = openStore(dir);
    for (let v = 1; v <= LAST; v++) expect(await plain.readHistory(TASK, v)).toEqual(byVersion[v - 1]);
  });

  it('is checked against the chunk names: places that point at other bytes are not used', async () => {
    const lines = decodeIndexLines(await readFile(historyIndexPath(taskDir)));
    // Every place moved by one byte, and one pointing at another chunk: none hashes to the chunk's name.
    const shifted = lines.map((l) => ({ head: l.head, chunks: l.chunks.map(([f, s, e]) => [f, s + 1, e + 1] as const) }));
    const swapped = lines.map((l) => ({ head: l.head, chunks: [...l.chunks].reverse() }));
    for (const wrong of [shifted, swapped]) {
      await writeFile(historyIndexPath(taskDir), wrong.map(encodeIndexLine).join(''));
      expect(await contents()).toEqual(expected);
    }
  });

  it('is ignored where it is torn, garbled or of another layout', async () => {
    const bytes = await readFile(historyIndexPath(taskDir));
    await fc.assert(
      fc.asyncProperty(fc.nat(bytes.length), fc.uint8Array({ maxLength: 40 }), async (cut, junk) => {
        await writeFile(historyIndexPath(taskDir), Buffer.concat([bytes.subarray(0, cut), Buffer.from(junk)]));
        await appendFile(historyIndexPath(taskDir), '{"history-index":2,"head":"x","chunks":[[1,0,1]]}\n');
        expect(await contents()).toEqual(expected);
      }),
      { numRuns: 25 },
    );
  });

  it('reads through a version file that is a symbolic link inside the directory (the index does not follow it; the long way checks where it leads)', async () => {
    const lines = decodeIndexLines(await readFile(historyIndexPath(taskDir)));
    const [file] = lines[1].chunks[0];
    const abs = path.join(taskDir, 'versions', `${String(file).padStart(8, '0')}.json`);
    await rename(abs, path.join(dir, 'moved.json'));
    await symlink(path.join('..', '..', 'moved.json'), abs);
    expect(await contents()).toEqual(expected);
  });

  it('leaves a damaged chunk to the read that reports it, with the same error as without the index', async () => {
    const lines = decodeIndexLines(await readFile(historyIndexPath(taskDir)));
    const [file, start] = lines[1].chunks[0];
    const abs = path.join(taskDir, 'versions', `${String(file).padStart(8, '0')}.json`);
    const original = await readFile(abs);
    const damaged = Buffer.from(original);
    // A digit of a message's content changed: the line no longer hashes to the chunk's name.
    const at = damaged.indexOf('"content":"m', start) + '"content":"m'.length;
    damaged[at] = damaged[at] === 0x39 ? 0x38 : damaged[at] + 1;
    await writeFile(abs, damaged);
    const withIndex = await openStore(dir)
      .readHistory(TASK)
      .catch((e: unknown) => e);
    await rm(historyIndexPath(taskDir));
    const without = await openStore(dir)
      .readHistory(TASK)
      .catch((e: unknown) => e);
    expect(withIndex).toBeInstanceOf(Error);
    expect(String(withIndex)).toBe(String(without));
  });

  it('needs no line for the chunks saved since it was last written: those are found the long way', async () => {
    // Saves without the lease (files of their own), fewer than a segment's worth: not indexed yet.
    const store = openStore(dir);
    let cp = (await store.getTask(TASK))!.checkpoint!;
    for (let v = LAST + 1; v <= LAST + 3; v++) cp = (await store.save(TASK, loopedSave(cp, v, PLAN, 30))).checkpoint;
    expect(await contents()).toEqual([...expected, `m${LAST + 1}`, `m${LAST + 2}`, `m${LAST + 3}`]);
  });

  it('follows a history that was replaced: the new chain is read, not the indexed one', async () => {
    const store = openStore(dir);
    const cp = (await store.getTask(TASK))!.checkpoint!;
    const { version: _v, ...rest } = cp;
    const cleared = await store.save(TASK, { expectedVersion: cp.version, checkpoint: { ...rest, history: { count: 0, head: null } } });
    expect(await contents()).toEqual([]);
    const { version: _w, ...after } = cleared.checkpoint;
    await store.save(TASK, {
      expectedVersion: cleared.checkpoint.version,
      checkpoint: after,
      appendHistory: [{ role: 'user', content: 'fresh start' }],
    });
    expect(await contents()).toEqual(['fresh start']);
  });
});
