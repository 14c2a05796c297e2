import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { ConflictError } from '../../../electron/store/store-types.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

describe('two writers racing for the same version', () => {
  it('exactly one wins; the loser gets ConflictError and leaves nothing on disk', async () => {
    const setup = openStore(root);
    const base = (await setup.create(makeCheckpoint('t1'), { appendHistory: [{ role: 'user', content: 'start' }] })).checkpoint;
    for (let round = 0; round < 20; round++) {
      // Fresh instances: each derives its writer state from disk, as two processes would.
      const a = openStore(root);
      const b = openStore(root);
      const latest = (await a.getTask('t1'))!.checkpoint!;
      await b.getTask('t1');
      const expected = latest.version;
      const before = await hashTree(root);
      const outcomes = await Promise.allSettled([
        a.save('t1', {
          expectedVersion: expected,
          checkpoint: { ...withoutVersion(latest), phase: `a${round}` },
          results: { s1: `a-result-${round}` },
          appendHistory: [{ role: 'a', content: `a${round}` }],
        }),
        b.save('t1', {
          expectedVersion: expected,
          checkpoint: { ...withoutVersion(latest), phase: `b${round}` },
          results: { s2: `b-result-${round}` },
          appendHistory: [{ role: 'b', content: `b${round}` }],
        }),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0].reason).toBeInstanceOf(ConflictError);
      expect((lost[0].reason as ConflictError).version).toBe(expected + 1);

      const winner = outcomes.indexOf(won[0]) === 0 ? 'a' : 'b';
      const loser = winner === 'a' ? 'b' : 'a';
      const after = await hashTree(root);
      const added = Object.keys(after).filter((f) => !(f in before));
      const changed = Object.keys(before).filter((f) => f in after && after[f] !== before[f]);
      // The winner's version file (carrying its two blobs) and nothing else appeared.
      expect(added).toEqual([path.join('t1', 'versions', `${String(expected + 1).padStart(8, '0')}.json`)]);
      expect(changed.sort()).toEqual([path.join('t1', 'checkpoint.json'), path.join('t1', 'events.jsonl')].sort());
      const cp = (await openStore(root).getTask('t1'))!.checkpoint!;
      expect(cp.phase).toBe(`${winner}${round}`);
      const history = await openStore(root).readHistory('t1');
      expect(history.map((m) => m.content)).not.toContain(`${loser}${round}`);
      expect(history[history.length - 1]).toEqual({ role: winner, content: `${winner}${round}` });
      const texts = await Promise.all(added.map((f) => fs.readFile(path.join(root, f), 'utf8')));
      expect(texts.some((t) => t.includes(`${loser}-result-${round}`) || t.includes(`"${loser}${round}"`))).toBe(false);
    }
    expect((await openStore(root).history('t1')).map((h) => h.version)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(base.version).toBe(1);
  });

  it('two creates of the same task: one wins, the other gets ConflictError', async () => {
    const outcomes = await Promise.allSettled([
      openStore(root).create(makeCheckpoint('t2', 2, { goal: 'a' })),
      openStore(root).create(makeCheckpoint('t2', 2, { goal: 'b' })),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ConflictError);
    const won = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ checkpoint: { goal: string } }>).value;
    expect((await openStore(root).getTask('t2'))?.checkpoint?.goal).toBe(won.checkpoint.goal);
  });

  it('the same instance saving twice concurrently serialises: the second is a conflict', async () => {
    const store = openStore(root);
    const cp = (await store.create(makeCheckpoint('t3'))).checkpoint;
    const outcomes = await Promise.allSettled([
      store.save('t3', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'x' } }),
      store.save('t3', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'y' } }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect((await store.getTask('t3'))?.checkpoint?.phase).toBe('x');
  });
});
