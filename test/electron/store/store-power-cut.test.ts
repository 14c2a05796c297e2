/**
 * Durability under a power cut, with the disk keeping only what was fsynced:
 * every save that returned survives, and checkpoint.json never names a
 * version the versions folder could lose.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { PowerCutFs } from '../../torture/lib/power-cut-fs.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let base: string;
beforeEach(async () => {
  base = await tempRoot('waystation-power-');
});
afterEach(async () => {
  await cleanup(base);
});

/** The disk after the cut; by default only what was fsynced survives. */
async function durableImage(pfs: PowerCutFs, name: string, choose: () => number = () => 0): Promise<string> {
  const image = path.join(base, name);
  await fs.mkdir(image);
  await pfs.materialize(image, choose);
  return image;
}

/** Ways a disk may order un-fsynced changes: none kept, all kept, every other one kept. */
function choosers(): (() => number)[] {
  let flip = 0;
  return [() => 0, () => 0.99, () => (flip++ % 2 === 0 ? 0 : 0.99)];
}

describe('a power cut', () => {
  it('right after create returned keeps the new task and its version 1', async () => {
    const live = path.join(base, 'live');
    await fs.mkdir(live);
    const pfs = new PowerCutFs(live, Infinity);
    await openStore(live, { fs: pfs }).create(makeCheckpoint('t'));
    pfs.cutNow();
    const image = await durableImage(pfs, 'image');
    expect((await openStore(image).getTask('t'))?.checkpoint?.version).toBe(1);
  });

  it('at any write of create leaves no task, or version 1 that the next save follows', async () => {
    const probe = path.join(base, 'probe-create');
    await fs.mkdir(probe);
    const counter = new PowerCutFs(probe, Infinity);
    await openStore(probe, { fs: counter }).create(makeCheckpoint('t'));
    for (let k = 0; k <= counter.writes; k++) {
      const live = path.join(base, `create-${k}`);
      await fs.mkdir(live);
      const pfs = new PowerCutFs(live, k);
      await openStore(live, { fs: pfs })
        .create(makeCheckpoint('t'))
        .catch(() => null);
      pfs.cutNow();
      for (const [c, choose] of choosers().entries()) {
        const image = await durableImage(pfs, `create-image-${k}-${c}`, choose);
        const cp = (await openStore(image).getTask('t'))?.checkpoint;
        if (!cp) continue;
        const next = await openStore(image).save('t', {
          expectedVersion: cp.version,
          checkpoint: { ...withoutVersion(cp), phase: 'after' },
          results: { s1: 'r' },
        });
        expect(next.checkpoint.version, `cut at write ${k} of create, disk ordering ${c}`).toBe(2);
      }
    }
  });

  it('at any write of a save leaves checkpoint.json at or behind the durable versions, and the next save works', async () => {
    // Count the writes of one save, then cut at each of them in turn.
    const probe = path.join(base, 'probe');
    await fs.mkdir(probe);
    const counter = new PowerCutFs(probe, Infinity);
    const cp = (await openStore(probe, { fs: counter }).create(makeCheckpoint('t'))).checkpoint;
    const before = counter.writes;
    await openStore(probe, { fs: counter }).save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'two' } });
    const perSave = counter.writes - before;
    expect(perSave).toBeGreaterThan(5);

    for (let k = 0; k <= perSave; k++) {
      const live = path.join(base, `live-${k}`);
      await fs.mkdir(live);
      const pfs = new PowerCutFs(live, before + k);
      const store = openStore(live, { fs: pfs });
      const first = (await store.create(makeCheckpoint('t'))).checkpoint;
      await store.save('t', { expectedVersion: 1, checkpoint: { ...withoutVersion(first), phase: 'two' } }).catch(() => null);
      pfs.cutNow();
      for (const [c, choose] of choosers().entries()) {
        const image = await durableImage(pfs, `image-${k}-${c}`, choose);
        const entry = await openStore(image).getTask('t');
        const history = await openStore(image).history('t');
        const where = `cut at write ${k} of the save, disk ordering ${c}`;
        expect(
          history.map((h) => h.version),
          where,
        ).toEqual(Array.from({ length: entry!.checkpoint!.version }, (_, i) => i + 1));
        const next = await openStore(image).save('t', {
          expectedVersion: entry!.checkpoint!.version,
          checkpoint: { ...withoutVersion(entry!.checkpoint!), phase: 'after' },
        });
        expect(next.checkpoint.version, where).toBe(entry!.checkpoint!.version + 1);
      }
    }
  });
});
