import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { cleanup, makeCheckpoint, tempRoot } from './store-test-helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot('waystation-event-ids-');
});
afterEach(async () => {
  await cleanup(root);
});

describe('event ids when several stores write the same task', () => {
  it('a long-lived store continues after the ids another store appended', async () => {
    const host = openStore(root);
    await host.create(makeCheckpoint('t1'));
    await host.appendEvent('t1', { type: 'log' });
    // Another process (a worker) appends with its own store.
    const worker = openStore(root);
    for (let i = 0; i < 3; i++) await worker.appendEvent('t1', { type: 'log' });
    const next = await host.appendEvent('t1', { type: 'log' });
    const ids = (await host.readEvents('t1')).map((e) => e.id);
    expect(next.id).toBe(Math.max(...ids.slice(0, -1)) + 1);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
  });

  it('alternating writers interleaved with saves keep every id unique and increasing', async () => {
    const a = openStore(root);
    const b = openStore(root);
    await a.create(makeCheckpoint('t1'));
    for (let round = 0; round < 4; round++) {
      const writer = round % 2 === 0 ? a : b;
      await writer.appendEvent('t1', { type: 'step-start', step_id: `s${round}` });
      await writer.appendEvent('t1', { type: 'step-finish', step_id: `s${round}` });
    }
    const ids = (await b.readEvents('t1')).map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]);
    expect(ids.length).toBe(9);
  });
});
