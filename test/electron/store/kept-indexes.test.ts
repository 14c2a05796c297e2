/**
 * The history indexes a store keeps decoded (kept-indexes.ts): an index
 * appended to is decoded only where it grew, one changed anywhere before its
 * end is decoded anew, and a store kept open reads the messages a store opened
 * afresh reads, whatever happens to the index between its reads.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { decodeIndexLines, encodeIndexLine, historyIndexPath } from '../../../electron/store/history-index.js';
import { KeptIndexes } from '../../../electron/store/kept-indexes.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { cleanup, loopedSave, makeCheckpoint, tempRoot } from './store-test-helpers.js';

const head = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
/** An index line of one chunk, at bytes [10n, 10n + 5) of the version file named for `file`. */
const line = (n: number, file = 1) => encodeIndexLine({ head: head(n), chunks: [[file, n * 10, n * 10 + 5]] });
const bytes = (...lines: string[]) => Buffer.from(lines.join(''));

describe('KeptIndexes', () => {
  it('decodes only the lines appended since, into the index it kept', () => {
    const kept = new KeptIndexes();
    const first = kept.decoded('/i', bytes(line(1), line(2)));
    expect(first.lines).toEqual(decodeIndexLines(bytes(line(1), line(2))));
    const grown = bytes(line(1), line(2), line(3, 2));
    const second = kept.decoded('/i', grown);
    expect(second).toBe(first);
    expect(second.lines).toEqual(decodeIndexLines(grown));
    expect(second.heads.get(head(3))).toEqual({ line: 2, pos: 0 });
    expect(second.spans.get(1)).toEqual({ start: 10, end: 25 });
    expect(second.spans.get(2)).toEqual({ start: 30, end: 35 });
  });

  it('decodes anew an index changed before its end', () => {
    const kept = new KeptIndexes();
    const first = kept.decoded('/i', bytes(line(1), line(2)));
    const rewritten = bytes(line(4), line(2), line(5));
    const second = kept.decoded('/i', rewritten);
    expect(second).not.toBe(first);
    expect(second.lines).toEqual(decodeIndexLines(rewritten));
    expect(second.heads.has(head(1))).toBe(false);
    // Shorter than what was decoded: decoded anew too.
    expect(kept.decoded('/i', bytes(line(4))).lines).toEqual(decodeIndexLines(bytes(line(4))));
  });

  it('leaves a torn last line until its line break is written', () => {
    const kept = new KeptIndexes();
    const whole = line(3);
    const torn = kept.decoded('/i', Buffer.concat([bytes(line(1)), Buffer.from(whole.slice(0, 20))]));
    expect(torn.lines.map((l) => l.head)).toEqual([head(1)]);
    expect(kept.decoded('/i', bytes(line(1), whole)).lines.map((l) => l.head)).toEqual([head(1), head(3)]);
  });

  it('keeps the indexes read last, up to its bound', () => {
    const kept = new KeptIndexes(2);
    const a = kept.decoded('/a', bytes(line(1)));
    const b = kept.decoded('/b', bytes(line(1)));
    expect(kept.decoded('/a', bytes(line(1)))).toBe(a);
    kept.decoded('/c', bytes(line(1)));
    expect(kept.size).toBe(2);
    // /b was read longest ago: it was let go, and is decoded anew.
    expect(kept.decoded('/b', bytes(line(1)))).not.toBe(b);
  });
});

describe('a store kept open reading the messages of a task whose index grows', () => {
  const TASK = 'kept-index';
  const held: SaveLease = { taskId: TASK, held: true, generation: 1 };
  let dir: string;
  beforeEach(async () => {
    dir = await tempRoot('ws-kept-index-');
  });
  afterEach(() => cleanup(dir));

  const saveTo = async (store: ReturnType<typeof openStore>, from: Checkpoint, last: number): Promise<Checkpoint> => {
    let cp = from;
    for (let v = cp.version + 1; v <= last; v++) cp = (await store.save(TASK, { ...loopedSave(cp, v, 4, 30), lease: held })).checkpoint;
    return cp;
  };

  it('reads what a fresh store reads, as segments close and their lines are appended, and after the index is rewritten', async () => {
    const writer = openStore(dir);
    const reader = openStore(dir);
    let cp = (await writer.create(makeCheckpoint(TASK, 4))).checkpoint;
    const index = historyIndexPath(path.join(dir, TASK));
    for (const last of [20, 37, 52]) {
      cp = await saveTo(writer, cp, last);
      await writer.settle(TASK);
      expect(await reader.readHistory(TASK, cp.version)).toEqual(await openStore(dir).readHistory(TASK, cp.version));
    }
    expect(decodeIndexLines(await readFile(index)).length).toBeGreaterThan(1);
    // Every place moved ten bytes on, the lines kept in order: the bytes differ from the start, and no place is right.
    const moved = decodeIndexLines(await readFile(index)).map((l) =>
      encodeIndexLine({ head: l.head, chunks: l.chunks.map(([f, s, e]) => [f, s + 10, e + 10] as const) }),
    );
    await writeFile(index, moved.join(''));
    expect(await reader.readHistory(TASK, cp.version)).toEqual(await openStore(dir).readHistory(TASK, cp.version));
    // A line appended that places a chunk of the history at bytes that are not it.
    await appendFile(index, encodeIndexLine({ head: cp.history.head!, chunks: [[1, 0, 5]] }));
    const theirs = await openStore(dir).readHistory(TASK);
    expect(await reader.readHistory(TASK)).toEqual(theirs);
    expect(theirs).toHaveLength(cp.history.count);
  });
});
