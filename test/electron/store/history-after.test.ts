/**
 * Reading after what a reader already holds, as the app does while a task
 * runs on: the messages appended since (only the chunks written since are
 * read) and the versions written since; everything otherwise.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';
import { TaskReadError, type CheckpointStore, type HistoryMark } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

/** Task `t`: version 1 says m0, each later version k + 1 appends mk, up to m5 at version 6. The mark of each version. */
async function sixVersions(store: CheckpointStore): Promise<{ cp: Checkpoint; marks: Map<number, HistoryMark> }> {
  let cp = (await store.create(makeCheckpoint('t', 2), { appendHistory: [{ role: 'user', content: 'm0' }] })).checkpoint;
  const marks = new Map<number, HistoryMark>([[cp.version, { ...cp.history }]]);
  for (let k = 1; k <= 5; k++) {
    cp = (
      await store.save('t', {
        expectedVersion: cp.version,
        checkpoint: withoutVersion(cp),
        appendHistory: [{ role: 'assistant', content: `m${k}` }],
      })
    ).checkpoint;
    marks.set(cp.version, { ...cp.history });
  }
  return { cp, marks };
}

const contents = (tail: { messages: { content: string }[] }) => tail.messages.map((m) => m.content);

describe('readHistoryAfter', () => {
  it('answers only the messages appended since the mark, and never reads the chunks before it', async () => {
    const store = openStore(root);
    const { marks } = await sixVersions(store);
    const at3 = marks.get(3)!;
    expect(at3.count).toBe(3);
    const tail = await store.readHistoryAfter('t', undefined, at3);
    expect(tail.from).toBe(3);
    expect(contents(tail)).toEqual(['m3', 'm4', 'm5']);
    expect(contents(await store.readHistoryAfter('t', 5, at3))).toEqual(['m3', 'm4']);
    // Nothing new since the mark: nothing to send.
    expect(await store.readHistoryAfter('t', 6, marks.get(6)!)).toEqual({ from: 6, messages: [] });

    // Version 2's chunk (m1) is damaged: the whole history no longer reads, the part after version 3 still does.
    const v2 = path.join(root, 't', 'versions', '00000002.json');
    const text = await fs.readFile(v2, 'utf8');
    expect(text).toContain('"content":"m1"');
    await fs.writeFile(v2, text.replace('"content":"m1"', '"content":"mX"'));
    const fresh = openStore(root);
    await expect(fresh.readHistory('t')).rejects.toBeInstanceOf(TaskReadError);
    expect(contents(await fresh.readHistoryAfter('t', undefined, at3))).toEqual(['m3', 'm4', 'm5']);
  });

  it('answers every message, from 0, when the history does not pass through the mark as held', async () => {
    const store = openStore(root);
    const { cp, marks } = await sixVersions(store);
    const all = ['m0', 'm1', 'm2', 'm3', 'm4', 'm5'];
    // No mark, or one whose count does not match where its head is in the chain.
    expect(await store.readHistoryAfter('t')).toEqual({ from: 0, messages: expect.any(Array) });
    expect(contents(await store.readHistoryAfter('t'))).toEqual(all);
    expect(await store.readHistoryAfter('t', undefined, { head: marks.get(3)!.head, count: 2 })).toMatchObject({ from: 0 });
    expect(contents(await store.readHistoryAfter('t', undefined, { head: marks.get(3)!.head, count: 2 }))).toEqual(all);
    // An older version than the mark's: its own history, whole.
    const older = await store.readHistoryAfter('t', 2, marks.get(5)!);
    expect(older.from).toBe(0);
    expect(contents(older)).toEqual(['m0', 'm1']);
    // A history the writer replaced (emptied, then a message appended): what the reader holds is not its start.
    const emptied = await store.save('t', {
      expectedVersion: cp.version,
      checkpoint: { ...withoutVersion(cp), history: { count: 0, head: null } },
    });
    const replaced = await store.save('t', {
      expectedVersion: emptied.checkpoint.version,
      checkpoint: withoutVersion(emptied.checkpoint),
      appendHistory: [{ role: 'user', content: 'a fresh start' }],
    });
    expect(replaced.checkpoint.history.count).toBe(1);
    const after = await store.readHistoryAfter('t', undefined, marks.get(6)!);
    expect(after.from).toBe(0);
    expect(contents(after)).toEqual(['a fresh start']);
  });
});

describe('historyAfter', () => {
  const markOf = (v: { version: number; updated_at: string; bytes: number }) => ({
    version: v.version,
    updated_at: v.updated_at,
    bytes: v.bytes,
  });

  it('lists only the versions after the entry held, as the whole list has them, on either reader', async () => {
    const store = openStore(root);
    await sixVersions(store);
    const all = await store.history('t');
    expect(all.map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await store.historyAfter('t', markOf(all[2]))).toEqual({ after: 3, versions: all.slice(3) });
    expect(await store.historyAfter('t', markOf(all[5]))).toEqual({ after: 6, versions: [] });
    // A StoreFs whose reads are its own (as fault-injecting ones are) gives the same answers through them.
    const wrapped: StoreFs = { ...nodeFs, readWholeFile: (p, opts) => nodeFs.readWholeFile(p, opts) };
    expect(await openStore(root, { fs: wrapped }).history('t')).toEqual(all);
    expect(await openStore(root, { fs: wrapped }).historyAfter('t', markOf(all[2]))).toEqual({ after: 3, versions: all.slice(3) });
  });

  it("lists every version when the entry held is not the task's any more", async () => {
    const store = openStore(root);
    await sixVersions(store);
    const all = await store.history('t');
    const mark = markOf(all[2]);
    expect(await store.historyAfter('t')).toEqual({ after: 0, versions: all });
    expect(await store.historyAfter('t', { ...mark, updated_at: 'another time' })).toEqual({ after: 0, versions: all });
    expect(await store.historyAfter('t', { ...mark, version: 7 })).toEqual({ after: 0, versions: all });
    // The task folder removed and written anew under the same id, with other contents.
    await fs.rm(path.join(root, 't'), { recursive: true });
    const again = openStore(root);
    let cp = (await again.create(makeCheckpoint('t', 2), { appendHistory: [{ role: 'user', content: 'another start, longer than m0' }] }))
      .checkpoint;
    for (let k = 1; k <= 3; k++) cp = (await again.save('t', { expectedVersion: cp.version, checkpoint: withoutVersion(cp) })).checkpoint;
    const anew = await again.history('t');
    expect(await again.historyAfter('t', mark)).toEqual({ after: 0, versions: anew });
  });
});
