import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { openStore } from '../../../electron/store/directory-store.js';
import { ConflictError, ReadOnlyError, StoreWriteError, TaskReadError, type CheckpointStore } from '../../../electron/store/store-types.js';
import { cleanup, listFiles, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

let root: string;
let store: CheckpointStore;

beforeEach(async () => {
  root = await tempRoot();
  store = openStore(root);
});
afterEach(async () => {
  await cleanup(root);
});

async function envelope(taskId: string, version: number): Promise<{ kind: string; base?: number; ops?: unknown[] }> {
  return JSON.parse(await fs.readFile(path.join(root, taskId, 'versions', `${String(version).padStart(8, '0')}.json`), 'utf8'));
}

describe('create', () => {
  it('writes version 1 as a full snapshot, the hot snapshot and a version event', async () => {
    const res = await store.create(makeCheckpoint('t1'));
    expect(res.checkpoint.version).toBe(1);
    expect(res.bytesWritten).toBeGreaterThan(0);
    expect((await envelope('t1', 1)).kind).toBe('full');
    const hot = JSON.parse(await fs.readFile(path.join(root, 't1', 'checkpoint.json'), 'utf8'));
    expect(hot).toEqual(JSON.parse(JSON.stringify(res.checkpoint)));
    expect(await store.readEvents('t1')).toMatchObject([{ id: 1, task_id: 't1', type: 'version', version: 1 }]);
  });

  it('fills schema defaults and the version', async () => {
    const { artifacts: _a, side_effects: _s, ...lean } = makeCheckpoint('t1');
    const res = await store.create(lean);
    expect(res.checkpoint.artifacts).toEqual([]);
    expect(res.checkpoint.side_effects).toEqual([]);
    expect(res.checkpoint.history).toEqual({ count: 0, head: null });
  });

  it('refuses a second create of the same task with ConflictError', async () => {
    await store.create(makeCheckpoint('t1'));
    await expect(store.create(makeCheckpoint('t1'))).rejects.toBeInstanceOf(ConflictError);
    expect(await store.history('t1')).toHaveLength(1);
  });

  it('refuses an invalid checkpoint before touching the disk', async () => {
    const bad = { ...makeCheckpoint('t1'), current_step: 'two' } as unknown as ReturnType<typeof makeCheckpoint>;
    await expect(store.create(bad)).rejects.toThrow(/current_step: expected number, got string "two"/);
    expect(await listFiles(root).catch(() => [])).not.toContain(path.join('t1', 'versions', '00000001.json'));
  });

  it('refuses task ids that cannot be a folder name', async () => {
    for (const id of ['../escape', '.hidden', 'a/b', 'x.tmp', 'x.json']) {
      await expect(store.create(makeCheckpoint(id))).rejects.toBeInstanceOf(StoreWriteError);
    }
    expect(await store.listTasks()).toEqual([]);
  });
});

describe('save', () => {
  it('writes contiguous versions, deltas after the first, and updates the hot snapshot', async () => {
    let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    for (let v = 1; v <= 4; v++) {
      const next = { ...withoutVersion(cp), current_step: v, phase: `p${v}` };
      cp = (await store.save('t1', { expectedVersion: v, checkpoint: next })).checkpoint;
      expect(cp.version).toBe(v + 1);
    }
    expect((await envelope('t1', 2)).kind).toBe('delta');
    expect((await envelope('t1', 2)).base).toBe(1);
    expect((await store.getTask('t1'))?.checkpoint?.phase).toBe('p4');
    expect((await store.history('t1')).map((h) => h.version)).toEqual([1, 2, 3, 4, 5]);
  });

  it('stores results as blobs and sets result_ref', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const res = await store.save('t1', {
      expectedVersion: 1,
      checkpoint: withoutVersion(cp),
      results: { s2: { answer: 42, text: 'done' } },
    });
    const ref = res.checkpoint.plan[1].result_ref!;
    // Carried by the version that introduced it: version 2's file, on the line after its envelope.
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}@2$/);
    expect(await store.readBlob('t1', ref)).toEqual({ answer: 42, text: 'done' });
    const lines = (await fs.readFile(path.join(root, 't1', 'versions', '00000002.json'), 'utf8')).split('\n');
    expect(JSON.parse(lines[0]).kind).toBe('delta');
    expect(createHash('sha256').update(lines[1]).digest('hex')).toBe(ref.slice(7, 71));
    expect(JSON.parse(lines[1])).toEqual({ answer: 42, text: 'done' });
    await expect(
      store.save('t1', { expectedVersion: 2, checkpoint: withoutVersion(res.checkpoint), results: { nope: 1 } }),
    ).rejects.toThrow(/not in the plan/);
  });

  it('appends history as a chain of chunks and reads it back as of any version', async () => {
    let cp = (await store.create(makeCheckpoint('t1'), { appendHistory: [{ role: 'user', content: 'hello' }] })).checkpoint;
    expect(cp.history.count).toBe(1);
    cp = (
      await store.save('t1', {
        expectedVersion: 1,
        checkpoint: withoutVersion(cp),
        appendHistory: [
          { role: 'assistant', content: 'hi' },
          { role: 'user', content: 'go' },
        ],
      })
    ).checkpoint;
    cp = (await store.save('t1', { expectedVersion: 2, checkpoint: withoutVersion(cp) })).checkpoint;
    expect(cp.history.count).toBe(3);
    expect((await store.readHistory('t1')).map((m) => m.content)).toEqual(['hello', 'hi', 'go']);
    expect((await store.readHistory('t1', 1)).map((m) => m.content)).toEqual(['hello']);
  });

  it('keeps the history when the writer omits it', async () => {
    const cp = (await store.create(makeCheckpoint('t1'), { appendHistory: [{ role: 'user', content: 'a' }] })).checkpoint;
    const { history: _h, ...rest } = withoutVersion(cp);
    const res = await store.save('t1', { expectedVersion: 1, checkpoint: rest });
    expect(res.checkpoint.history).toEqual(cp.history);
  });

  it('rejects a stale expectedVersion with ConflictError and a future one with a clear error', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    await store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(cp) });
    await expect(store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(cp) })).rejects.toBeInstanceOf(ConflictError);
    await expect(store.save('t1', { expectedVersion: 7, checkpoint: withoutVersion(cp) })).rejects.toThrow(/no version 7/);
  });

  it('validates every save, including ones that change only a step (the incremental check)', async () => {
    let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    cp = (await store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(cp) })).checkpoint;
    const badPlan = cp.plan.map((s, i) => (i === 1 ? { ...s, status: 'finished' } : s));
    const err = await store
      .save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(cp), plan: badPlan } as never })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreWriteError);
    expect(String(err)).toContain('plan[1].status: expected one of');
    const badRun = { ...cp.run, tokens_in: -1 };
    await expect(store.save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(cp), run: badRun } })).rejects.toThrow(
      /run\.tokens_in/,
    );
    await expect(
      store.save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(cp), extra_field: { any: ['thing'] } } }),
    ).resolves.toBeDefined();
    expect((await store.history('t1')).map((h) => h.version)).toEqual([1, 2, 3]);
  });

  it('fills defaults in changed parts and reads them back (new steps, omitted fields)', async () => {
    let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    cp = (await store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(cp) })).checkpoint;
    const { artifacts: _a, ...noArtifacts } = withoutVersion(cp);
    const res = await store.save('t1', {
      expectedVersion: 2,
      checkpoint: { ...noArtifacts, plan: [...cp.plan, { id: 's4', name: 'four', status: 'pending' }] },
    });
    expect(res.checkpoint.plan[3].attempts).toBe(0);
    expect(res.checkpoint.artifacts).toEqual([]);
    expect(await openStore(root).readVersion('t1', 3)).toEqual(JSON.parse(JSON.stringify(res.checkpoint)));
  });

  it('returns a frozen checkpoint: mutating it in place throws, and immutable updates save as expected', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    expect(() => {
      cp.plan[0].status = 'done';
    }).toThrow(TypeError);
    expect(() => (cp as Record<string, unknown[]>).plan.push({})).toThrow(TypeError);
    // The next state is built by replacing what changes and sharing the rest.
    const extra = { nested: [1] };
    const v2 = (
      await store.save('t1', {
        expectedVersion: 1,
        checkpoint: { ...withoutVersion(cp), plan: cp.plan.map((s, i) => (i === 0 ? { ...s, status: 'done' as const } : s)), extra },
      })
    ).checkpoint;
    expect(v2.plan[1]).toBe(cp.plan[1]);
    // What was handed to save now belongs to the saved version: changing it later throws instead of rewriting history.
    expect(() => extra.nested.push(2)).toThrow(TypeError);
    await store.save('t1', {
      expectedVersion: 2,
      checkpoint: {
        ...withoutVersion(v2),
        plan: v2.plan.map((s, i) => (i === 1 ? { ...s, status: 'running' as const } : s)),
        extra: { nested: [1, 2] },
      },
    });
    const read2 = await openStore(root).readVersion('t1', 2);
    const read3 = await openStore(root).readVersion('t1', 3);
    expect(read2.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
    expect((read2 as Record<string, unknown>).extra).toEqual({ nested: [1] });
    expect(read3.plan.map((s) => s.status)).toEqual(['done', 'running', 'pending']);
    expect((read3 as Record<string, unknown>).extra).toEqual({ nested: [1, 2] });
  });

  it('saves a structuredClone of the returned checkpoint, mutated, like a deep-copying caller', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const next = structuredClone(withoutVersion(cp));
    next.plan[2].status = 'skipped';
    next.run.tokens_in = 7;
    const saved = (await store.save('t1', { expectedVersion: 1, checkpoint: next })).checkpoint;
    expect(saved.plan.map((s) => s.status)).toEqual(['pending', 'pending', 'skipped']);
    expect(saved.run.tokens_in).toBe(7);
    expect(Object.isFrozen(saved.plan[2])).toBe(true);
    expect(await openStore(root).readVersion('t1', 2)).toEqual(JSON.parse(JSON.stringify(saved)));
  });

  it('stores values that are not plain JSON the way JSON writes them', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const when = new Date('2026-02-03T04:05:06.000Z');
    const saved = (
      await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), extra: { when, list: [1, undefined, 3] } } })
    ).checkpoint;
    expect((saved as Record<string, unknown>).extra).toEqual({ when: '2026-02-03T04:05:06.000Z', list: [1, null, 3] });
    expect(await openStore(root).readVersion('t1', 2)).toEqual(JSON.parse(JSON.stringify(saved)));
  });

  it('carries on from the disk in a new store instance (writer state re-derived)', async () => {
    let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    cp = (await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), phase: 'x' } })).checkpoint;
    const again = openStore(root);
    const res = await again.save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(cp), phase: 'y' } });
    expect(res.checkpoint.version).toBe(3);
    expect((await again.readVersion('t1', 3)).phase).toBe('y');
    expect((await again.readEvents('t1')).map((e) => e.id)).toEqual([1, 2, 3]);
  });

  it('writes a full snapshot once the deltas since the last one would outweigh two snapshots', async () => {
    let cp = (await store.create(makeCheckpoint('t1', 1))).checkpoint;
    const kinds: string[] = [];
    // What a full snapshot of each version would take: the envelope's head, the document (the hot snapshot), '}'.
    const fullSize: number[] = [0, 0];
    for (let v = 1; v <= 30; v++) {
      cp = (await store.save('t1', { expectedVersion: v, checkpoint: { ...withoutVersion(cp), goal: `goal number ${v} `.repeat(8) } }))
        .checkpoint;
      kinds.push((await envelope('t1', v + 1)).kind);
      const head = `{"format":"waystation-version","version":${v + 1},"kind":"full","checkpoint":`.length;
      fullSize.push(head + (await fs.stat(path.join(root, 't1', 'checkpoint.json'))).size + 1);
    }
    expect(kinds).toContain('full');
    expect(kinds).toContain('delta');
    // Between two full snapshots the deltas stay under two snapshots (none of these versions carries blobs).
    const sizes = await Promise.all(
      Array.from({ length: 31 }, (_, i) =>
        fs.stat(path.join(root, 't1', 'versions', `${String(i + 1).padStart(8, '0')}.json`)).then((s) => s.size),
      ),
    );
    let since = 0;
    for (let v = 2; v <= 31; v++) {
      if (kinds[v - 2] === 'full') {
        expect(sizes[v - 1]).toBe(fullSize[v]);
        since = 0;
      } else {
        since += sizes[v - 1];
        expect(since).toBeLessThan(2 * fullSize[v]);
      }
    }
    for (let v = 1; v <= 31; v++) expect((await store.readVersion('t1', v)).version).toBe(v);
  });

  it('refuses to save a legacy task and points at importTask', async () => {
    await fs.writeFile(
      path.join(root, 'old.json'),
      JSON.stringify({ task_id: 'old', current_step: 0, total_steps: 1, history: [], results: {} }),
    );
    await expect(store.save('old', { expectedVersion: 1, checkpoint: makeCheckpoint('old') })).rejects.toBeInstanceOf(ReadOnlyError);
  });

  it('leaves no temp files behind', async () => {
    let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    cp = (
      await store.save('t1', {
        expectedVersion: 1,
        checkpoint: withoutVersion(cp),
        results: { s1: 'r' },
        appendHistory: [{ role: 'u', content: 'c' }],
      })
    ).checkpoint;
    await store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(cp) }).catch(() => {});
    expect((await listFiles(root)).filter((f) => path.basename(f).startsWith('.') || f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('reads', () => {
  it('getTask returns null for unknown or unsafe ids', async () => {
    expect(await store.getTask('nope')).toBeNull();
    expect(await store.getTask('../etc')).toBeNull();
  });

  it('readVersion of a version that does not exist throws TaskReadError with missing-version', async () => {
    await store.create(makeCheckpoint('t1'));
    const err = await store.readVersion('t1', 5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskReadError);
    expect((err as TaskReadError).problems[0].reason).toBe('missing-version');
  });

  it('history lists source, updated_at and bytes per version', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    await store.save('t1', {
      expectedVersion: 1,
      checkpoint: {
        ...withoutVersion(cp),
        source: { kind: 'human-edit', actor: 'ana' },
        run: { ...cp.run, updated_at: '2026-02-02T00:00:00Z' },
      },
    });
    const h = await store.history('t1');
    expect(h.map((x) => [x.version, x.source.kind, x.updated_at])).toEqual([
      [1, 'runtime', '2026-01-01T00:00:00Z'],
      [2, 'human-edit', '2026-02-02T00:00:00Z'],
    ]);
    expect(h.every((x) => x.bytes > 0)).toBe(true);
  });

  it('readBlob refuses a carried blob whose bytes no longer match its name, and the version still reads', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const res = await store.save('t1', { expectedVersion: 1, checkpoint: withoutVersion(cp), results: { s1: 'ok' } });
    const file = path.join(root, 't1', 'versions', '00000002.json');
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace('\n"ok"\n', '\n"OK"\n'));
    const err = await store.readBlob('t1', res.checkpoint.plan[0].result_ref!).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskReadError);
    expect((err as TaskReadError).problems[0]).toMatchObject({ file: path.join('t1', 'versions', '00000002.json'), reason: 'invariant' });
    expect((await openStore(root).readVersion('t1', 2)).plan[0].result_ref).toBe(res.checkpoint.plan[0].result_ref);
  });

  it('readBlob refuses a loose blob whose bytes no longer match its name', async () => {
    const cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
    const value = 'ok';
    const hex = createHash('sha256').update(JSON.stringify(value)).digest('hex');
    await fs.mkdir(path.join(root, 't1', 'blobs'));
    await fs.writeFile(path.join(root, 't1', 'blobs', hex), JSON.stringify(value));
    const plan = cp.plan.map((s, i) => (i === 0 ? { ...s, result_ref: `sha256:${hex}` } : s));
    const res = await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(cp), plan } });
    expect(await store.readBlob('t1', res.checkpoint.plan[0].result_ref!)).toBe('ok');
    await fs.writeFile(path.join(root, 't1', 'blobs', hex), '"tampered"');
    const err = await store.readBlob('t1', res.checkpoint.plan[0].result_ref!).catch((e: unknown) => e);
    expect((err as TaskReadError).problems[0].reason).toBe('invariant');
  });

  it('ignores temp files left by a crashed writer', async () => {
    await store.create(makeCheckpoint('t1'));
    await fs.writeFile(path.join(root, 't1', 'versions', '.00000002.json.abc.tmp'), '{"torn');
    await fs.writeFile(path.join(root, 't1', '.checkpoint.json.abc.tmp'), '{');
    await fs.writeFile(path.join(root, '.t2.tmp'), '{');
    const tasks = await store.listTasks();
    expect(tasks.map((t) => [t.task_id, t.problems])).toEqual([['t1', []]]);
    expect((await store.getTask('t1'))?.problems).toEqual([]);
  });
});

describe('events', () => {
  it('appends with increasing ids and reads after an id', async () => {
    await store.create(makeCheckpoint('t1'));
    const e2 = await store.appendEvent('t1', { type: 'step-start', step_id: 's1' });
    const e3 = await store.appendEvent('t1', { type: 'log', data: { line: 'x' }, at: '2026-01-01T00:00:00Z' });
    expect([e2.id, e3.id]).toEqual([2, 3]);
    expect(e3.at).toBe('2026-01-01T00:00:00Z');
    expect((await store.readEvents('t1', 1)).map((e) => e.type)).toEqual(['step-start', 'log']);
  });

  it('skips a torn last line and starts the next event on a new line', async () => {
    await store.create(makeCheckpoint('t1'));
    await fs.appendFile(path.join(root, 't1', 'events.jsonl'), '{"id":2,"task_id":"t1","ty');
    const fresh = openStore(root);
    expect((await fresh.readEvents('t1')).map((e) => e.id)).toEqual([1]);
    const e = await fresh.appendEvent('t1', { type: 'log' });
    expect(e.id).toBe(2);
    expect((await fresh.readEvents('t1')).map((x) => x.id)).toEqual([1, 2]);
  });

  it('refuses events for a task that does not exist', async () => {
    await expect(store.appendEvent('ghost', { type: 'log' })).rejects.toBeInstanceOf(TaskReadError);
    expect(await store.readEvents('ghost')).toEqual([]);
  });
});

describe('listTasks', () => {
  it('lists native tasks sorted by id, each read once', async () => {
    await store.create(makeCheckpoint('b'));
    await store.create(makeCheckpoint('a'));
    await fs.mkdir(path.join(root, 'not-a-task'));
    await fs.writeFile(path.join(root, 'waystation.config.json'), '{"agents":[]}');
    const tasks = await store.listTasks();
    expect(tasks.map((t) => [t.task_id, t.format, t.read_only, t.checkpoint?.version])).toEqual([
      ['a', 'waystation', false, 1],
      ['b', 'waystation', false, 1],
    ]);
  });

  it('a root that does not exist lists nothing', async () => {
    expect(await openStore(path.join(root, 'missing')).listTasks()).toEqual([]);
  });
});
