/**
 * Writers accept only what readers read back: a save whose value nests deeper
 * than readers accept, or whose file would be larger than they load, is
 * refused with a typed error naming the limit, nothing written, whoever
 * calls the store: the store itself, an edit through the runtime, the CLI.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../electron/store/directory-store.js';
import { MAX_JSON_DEPTH } from '../../../electron/store/file-reader.js';
import { MAX_VALUE_DEPTH, WriteLimitError } from '../../../electron/store/write-limits.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { captureCli as cli } from '../cli/capture-cli.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
useOfflineWorkers({ SKIP_FAILURE: '1' });
beforeEach(async () => {
  root = await tempRoot('waystation-limits-');
});
afterEach(async () => {
  await cleanup(root);
});

/** A value nested `depth` levels: arrays in arrays, a number at the bottom. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}
/** The same as objects, `{"a": {...}}`. */
function nestedObject(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

async function refusal(p: Promise<unknown>): Promise<WriteLimitError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WriteLimitError);
  return err as WriteLimitError;
}

describe('the store refuses what its readers would refuse', () => {
  it('a step result 600 levels deep: refused naming the limit, the task unchanged and readable', async () => {
    const store = openStore(root);
    const first = await store.create(makeCheckpoint('t'));
    const err = await refusal(
      store.save('t', { expectedVersion: 1, checkpoint: withoutVersion(first.checkpoint), results: { s1: nested(600) } }),
    );
    expect(err.limit).toBe('depth');
    expect(err.message).toContain(`more than ${MAX_VALUE_DEPTH} levels`);
    expect(err.message).toContain('nothing was written');
    const entry = await openStore(root).getTask('t');
    expect(entry!.problems).toEqual([]);
    expect(entry!.checkpoint!.version).toBe(1);
    // And the task goes on: the next save is version 2.
    expect((await store.save('t', { expectedVersion: 1, checkpoint: withoutVersion(first.checkpoint) })).checkpoint.version).toBe(2);
  });

  it('a checkpoint value, or a message, past the limit: refused the same way', async () => {
    const store = openStore(root);
    const first = await store.create(makeCheckpoint('t'));
    const cp = withoutVersion(first.checkpoint);
    const plan = cp.plan.map((s, i) => (i === 0 ? { ...s, result: nestedObject(600) } : s));
    expect((await refusal(store.save('t', { expectedVersion: 1, checkpoint: { ...cp, plan } }))).limit).toBe('depth');
    const message = { role: 'user' as const, content: JSON.stringify(1), extra: nested(600) };
    expect((await refusal(store.save('t', { expectedVersion: 1, checkpoint: cp, appendHistory: [message as never] }))).limit).toBe('depth');
    expect((await openStore(root).history('t')).length).toBe(1);
  });

  it('a deep value among the parts a save shares with the version before it is found all the same', async () => {
    const store = openStore(root);
    let cp = withoutVersion((await store.create(makeCheckpoint('t', 600))).checkpoint);
    // A few accepted saves first: each passes the last checkpoint back with one step changed.
    for (let v = 1; v <= 3; v++) {
      const plan = cp.plan.map((s, i) => (i === v ? { ...s, status: 'done' as const } : s));
      cp = withoutVersion((await store.save('t', { expectedVersion: v, checkpoint: { ...cp, plan } })).checkpoint);
    }
    const deep = nestedObject(600);
    // The last checkpoint's own plan (two levels) at the bottom of a chain that, without it, would be within the limit.
    let chain: unknown = cp.plan;
    for (let i = 0; i < MAX_VALUE_DEPTH - 2; i++) chain = { a: chain };
    const refusals = [
      // Inside a member spread from the last checkpoint, beside its unchanged members.
      { ...cp, recovery: { ...cp.recovery, extra: deep } },
      // In the one step of 600 that changed (a plan long enough to be walked from a copy: frozen-arrays.ts).
      { ...cp, plan: cp.plan.map((s, i) => (i === 40 ? { ...s, result: { kept: s, deep } } : s)) },
      // Under an own "__proto__" key, as JSON.parse makes one.
      { ...cp, plan: cp.plan.map((s, i) => (i === 0 ? { ...s, ...(JSON.parse(`{"__proto__":${JSON.stringify(deep)}}`) as object) } : s)) },
      // A part of the last checkpoint moved to where it nests deeper than it did.
      { ...cp, wrapped: chain },
    ];
    for (const checkpoint of refusals) {
      expect((await refusal(store.save('t', { expectedVersion: 4, checkpoint: checkpoint as typeof cp }))).limit).toBe('depth');
    }
    // Nothing of them was written: the task stands at version 4, and saves on from it.
    expect((await openStore(root).getTask('t'))!.checkpoint!.version).toBe(4);
    expect((await store.save('t', { expectedVersion: 4, checkpoint: cp })).checkpoint.version).toBe(5);
  });

  it('a creation past the limit writes no folder', async () => {
    const store = openStore(root);
    const cp = makeCheckpoint('deep');
    await refusal(store.create({ ...cp, plan: cp.plan.map((s, i) => (i === 0 ? { ...s, result: nested(600) } : s)) }));
    await expect(fs.access(path.join(root, 'deep', 'versions', '00000001.json'))).rejects.toThrow();
  });

  it('at the limit exactly, the value is saved and every reader reads it back', async () => {
    const store = openStore(root);
    const first = await store.create(makeCheckpoint('t'));
    const cp = withoutVersion(first.checkpoint);
    const plan = cp.plan.map((s, i) => (i === 1 ? { ...s, result: nestedObject(MAX_VALUE_DEPTH - 4) } : s));
    const saved = await store.save('t', { expectedVersion: 1, checkpoint: { ...cp, plan }, results: { s1: nested(MAX_VALUE_DEPTH) } });
    expect(MAX_VALUE_DEPTH).toBeLessThan(MAX_JSON_DEPTH);
    const fresh = openStore(root);
    const entry = await fresh.getTask('t');
    expect(entry!.problems).toEqual([]);
    expect(entry!.checkpoint!.version).toBe(2);
    expect(await fresh.readBlob('t', saved.checkpoint.plan[0].result_ref!)).toEqual(nested(MAX_VALUE_DEPTH));
    expect((await fresh.readVersion('t', 2)).plan[1].result).toEqual(nestedObject(MAX_VALUE_DEPTH - 4));
  });

  it('a file larger than readers load: refused naming the size limit', async () => {
    const store = openStore(root, { maxFileBytes: 64 * 1024 });
    const first = await store.create(makeCheckpoint('t'));
    const err = await refusal(
      store.save('t', { expectedVersion: 1, checkpoint: withoutVersion(first.checkpoint), results: { s1: 'x'.repeat(100 * 1024) } }),
    );
    expect(err.limit).toBe('file-size');
    expect(err.message).toContain('65536-byte limit');
    expect((await openStore(root, { maxFileBytes: 64 * 1024 }).getTask('t'))!.problems).toEqual([]);
  });
});

describe('edits past the limit', () => {
  /** A task whose steps declare no output schema: any JSON value is a valid edit, so only the depth can refuse it. */
  async function demoTask(): Promise<void> {
    await openStore(root).create(makeCheckpoint('d'));
  }

  it('an edit 600 levels deep through the runner is refused as bad input; the task stays resumable', async () => {
    await demoTask();
    const before = (await openStore(root).getTask('d'))!.checkpoint!.version;
    const runner = new Runner({ root });
    const step = (await openStore(root).getTask('d'))!.checkpoint!.plan[0].id;
    const outcome = await runner.edit('d', step, nestedObject(600));
    expect(outcome.error).toBe('invalid');
    expect(outcome.exitCode).toBe(2);
    expect(outcome.message).toContain(`more than ${MAX_VALUE_DEPTH} levels`);
    const entry = await openStore(root).getTask('d');
    expect(entry!.problems).toEqual([]);
    expect(entry!.checkpoint!.version).toBe(before);
  });

  it('the CLI edit at 520 levels exits 2 and ls shows the task healthy at its version', async () => {
    await demoTask();
    const cp = (await openStore(root).getTask('d'))!.checkpoint!;
    const r = await cli('edit', root, 'd', cp.plan[0].id, '--value', JSON.stringify(nestedObject(520)));
    expect(r.code).toBe(2);
    expect(r.err).toContain('nested more than');
    const ls = await cli('ls', root, '--json');
    expect(ls.code).toBe(0);
    const [row] = JSON.parse(ls.out) as { version: number; problems: unknown[] }[];
    expect(row).toMatchObject({ version: cp.version });
  });
});
