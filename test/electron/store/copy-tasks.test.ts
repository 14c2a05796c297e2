/**
 * Copying tasks between two stores: every version, blob, message and event,
 * checked by hash; an interrupted copy continued; a destination that differs
 * refused with nothing written; the source only read.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { copyTasks } from '../../../electron/store/copy-tasks.js';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let from: string;
let to: string;
beforeEach(async () => {
  from = await tempRoot('waystation-copy-from-');
  to = await tempRoot('waystation-copy-to-');
});
afterEach(async () => {
  await cleanup(from);
  await cleanup(to);
});

/** One more version of `cp`: step `s<n>` done with a result, a message appended. */
async function step(store: CheckpointStore, cp: Checkpoint, n: number): Promise<Checkpoint> {
  const next = withoutVersion(cp);
  next.plan = next.plan.map((s) => (s.id === `s${n}` ? { ...s, status: 'done' as const } : s));
  return (
    await store.save(cp.task_id, {
      expectedVersion: cp.version,
      checkpoint: next,
      results: { [`s${n}`]: { step: n, rows: Array.from({ length: n }, (_, i) => i) } },
      appendHistory: [{ role: 'assistant', content: `done with s${n}` }],
    })
  ).checkpoint;
}

/** Task `id` in `store`: version 1 with the user's message, then `steps` steps, and an event of the task's own. */
async function task(store: CheckpointStore, id: string, steps: number, ask = 'go'): Promise<Checkpoint> {
  let cp = (await store.create(makeCheckpoint(id, 3), { appendHistory: [{ role: 'user', content: ask }] })).checkpoint;
  for (let n = 1; n <= steps; n++) cp = await step(store, cp, n);
  await store.appendEvent(id, { type: 'log', data: { note: 'a line of the task' } });
  return cp;
}

/** What a reader sees of each version of a task: the checkpoint, its step results and its messages. */
async function seen(store: CheckpointStore, id: string) {
  const out = [];
  for (const { version } of await store.history(id)) {
    const cp = await store.readVersion(id, version);
    const results = await Promise.all(cp.plan.map((s) => (s.result_ref ? store.readBlob(id, s.result_ref) : null)));
    out.push({ cp, results, messages: await store.readHistory(id, version) });
  }
  return out;
}

describe('copyTasks', () => {
  it('copies every version with its results, messages and events, verified, and leaves the source as it was', async () => {
    const source = openStore(from);
    await task(source, 'a', 3);
    await task(source, 'b', 1);
    const before = await hashTree(from);

    const dest = openStore(to);
    const outcomes = await copyTasks(openStore(from), dest);
    expect(outcomes.map((o) => [o.task_id, o.status, o.versions])).toEqual([
      ['a', 'copied', 4],
      ['b', 'copied', 2],
    ]);
    for (const [i, id] of ['a', 'b'].entries()) {
      expect(await seen(dest, id)).toEqual(await seen(source, id));
      // Every event as the source's log has it, the version events' times included, and each counted.
      const events = await source.readEvents(id);
      expect(await dest.readEvents(id)).toEqual(events);
      expect(outcomes[i].events).toBe(events.length);
    }
    expect(await hashTree(from)).toEqual(before);

    // Copied again: nothing to do, nothing written.
    const destBefore = await hashTree(to);
    expect((await copyTasks(openStore(from), openStore(to))).map((o) => [o.status, o.versions])).toEqual([
      ['up-to-date', 0],
      ['up-to-date', 0],
    ]);
    expect(await hashTree(to)).toEqual(destBefore);
  });

  it('continues a copy the destination holds the first versions of, from the version after them', async () => {
    const source = openStore(from);
    const cp = await task(source, 'a', 1);
    expect((await copyTasks(source, openStore(to)))[0]).toMatchObject({ status: 'copied', versions: 2 });
    await step(source, await step(source, cp, 2), 3);

    const [outcome] = await copyTasks(openStore(from), openStore(to), { taskId: 'a' });
    expect(outcome).toMatchObject({ task_id: 'a', status: 'copied', versions: 2 });
    expect(await seen(openStore(to), 'a')).toEqual(await seen(openStore(from), 'a'));
  });

  it('refuses a task the destination holds otherwise, and one it holds more of, writing nothing', async () => {
    await task(openStore(from), 'a', 2);
    const other = openStore(to);
    // Asked something else, it is another task under the same name from its first version on.
    const theirs = await task(other, 'a', 1, 'something else');
    await fs.writeFile(path.join(to, 'marker'), 'unchanged');
    const destBefore = await hashTree(to);

    const [differs] = await copyTasks(openStore(from), openStore(to));
    expect(differs).toMatchObject({ status: 'refused', versions: 0 });
    expect(differs.reason).toMatch(/holds a different version 1 of it; nothing was copied/);
    expect(await hashTree(to)).toEqual(destBefore);

    await step(other, await step(other, await step(other, theirs, 2), 3), 1);
    const [more] = await copyTasks(openStore(from), openStore(to));
    expect(more.status).toBe('refused');
    expect(more.reason).toMatch(/holds more versions of it \(5\) than .* \(3\); nothing was copied/);
  });

  it('refuses a task whose versions have a gap, one not there and one in the article format, saying why', async () => {
    const source = openStore(from);
    await task(source, 'a', 2);
    // Saved without the lease, each version has a file of its own: the second one goes missing, and the third, a
    // change to it, cannot be rebuilt.
    await fs.rm(path.join(from, 'a', 'versions', '00000002.json'));
    await fs.mkdir(path.join(from, 'legacy'));
    await fs.writeFile(
      path.join(from, 'legacy', 'checkpoint.json'),
      JSON.stringify({ task_id: 'legacy', phase: 'draft', steps: [{ name: 'one', status: 'done' }], resume_hint: 'go on' }),
    );

    const outcomes = await copyTasks(openStore(from), openStore(to));
    const byId = new Map(outcomes.map((o) => [o.task_id, o]));
    expect(byId.get('a')).toMatchObject({ status: 'refused' });
    expect(byId.get('a')!.reason).toMatch(/its history has gaps \(versions 1 of 3\); nothing was copied/);
    expect(byId.get('legacy')).toMatchObject({ status: 'refused' });
    expect(byId.get('legacy')!.reason).toMatch(/legacy .* format, shown read-only: it is copied once imported as a Waystation task/);
    // It no longer names a command that may refuse the task: which agent, if any, imports it is the listing's to say.
    expect(byId.get('legacy')!.reason).not.toContain('waystation resume imports it');
    const [missing] = await copyTasks(openStore(from), openStore(to), { taskId: 'nope' });
    expect(missing).toMatchObject({ status: 'refused', reason: expect.stringMatching(/there is no task nope in /) });
    expect(await fs.readdir(to)).toEqual([]);
  });
});
