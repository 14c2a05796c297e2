/**
 * The contract every CheckpointStore keeps, as tests that run against any
 * implementation: versions, history, several versions at once, blobs and
 * history messages, races for one version, leases with takeover and
 * fencing, stop requests bound to one holding of the lease, events with no gap and no duplicate, and the subscription to
 * changes. A backend proves itself by passing this suite; what only one
 * backend can have (segments, power cuts, a dropped connection) is tested
 * beside it, in that backend's own files.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Checkpoint } from '../../../../shared/checkpoint/schema.js';
import { encodeBlob } from '../../../../electron/store/blob-store.js';
import { LeaseHeldError, LeaseLostError } from '../../../../electron/store/lease-rules.js';
import {
  ConflictError,
  StoreWriteError,
  TaskReadError,
  type CheckpointStore,
  type StoreChange,
  type TaskEvent,
} from '../../../../electron/store/store-types.js';
import { MAX_VALUE_DEPTH, WriteLimitError } from '../../../../electron/store/write-limits.js';
import { makeCheckpoint, withoutVersion } from '../store-test-helpers.js';

/** One store's storage, opened as many times as a test needs (each open is another process's view). */
export interface StoreHarness {
  /** A new store over the same storage. */
  open(): CheckpointStore;
  /** What `openLocation` opens it by, for child processes. */
  location: string;
  /** Every stored text, keyed by where it is: what a losing writer must not have left anything in. */
  footprint(): Promise<Map<string, string>>;
  cleanup(): Promise<void>;
}

const CHILD = path.join(import.meta.dirname, 'lease-holder-child.ts');

/** Save the next version of `cp` with `phase` and optional results and messages. */
function next(
  store: CheckpointStore,
  cp: Checkpoint,
  phase: string,
  more: { results?: Record<string, unknown>; messages?: string[] } = {},
) {
  return store.save(cp.task_id, {
    expectedVersion: cp.version,
    checkpoint: { ...withoutVersion(cp), phase },
    ...(more.results ? { results: more.results } : {}),
    ...(more.messages ? { appendHistory: more.messages.map((content) => ({ role: 'user', content })) } : {}),
  });
}

/** Run the contract tests against the store `makeHarness` sets up (a fresh, empty one per test). */
export function describeStoreConformance(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(`${name}: the store contract`, () => {
    let h: StoreHarness;
    let store: CheckpointStore;
    const opened: CheckpointStore[] = [];
    const open = () => {
      const s = h.open();
      opened.push(s);
      return s;
    };
    beforeEach(async () => {
      h = await makeHarness();
      store = open();
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      await h.cleanup();
    });

    describe('versions', () => {
      it('creates version 1, saves the next ones, and reads each back whole', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        expect(v1.version).toBe(1);
        const v2 = (await next(store, v1, 'second')).checkpoint;
        const v3 = (await next(store, v2, 'third')).checkpoint;
        expect(v3.version).toBe(3);
        expect((await store.getTask('t1'))?.checkpoint).toEqual(v3);
        expect((await store.readVersion('t1', 1)).phase).toBe('start');
        expect((await store.readVersion('t1', 2)).phase).toBe('second');
        // Another instance (another process) reads the same and carries on from it.
        const other = open();
        expect((await other.readVersion('t1', 3)).phase).toBe('third');
        const v4 = (await next(other, (await other.getTask('t1'))!.checkpoint!, 'fourth')).checkpoint;
        expect((await store.getTask('t1'))?.checkpoint?.phase).toBe(v4.phase);
      });

      it('lists every task in id order and answers null for an unknown one', async () => {
        for (const id of ['b', 'a', 'c']) await store.create(makeCheckpoint(id));
        const listed = await store.listTasks();
        expect(listed.map((t) => t.task_id)).toEqual(['a', 'b', 'c']);
        expect(listed.every((t) => t.format === 'waystation' && t.problems.length === 0 && t.checkpoint?.version === 1)).toBe(true);
        const kept = await store.listTasks((entries) => entries.map((e) => e.task_id.toUpperCase()));
        expect(kept).toEqual(['A', 'B', 'C']);
        expect(await store.getTask('nope')).toBeNull();
        // What a listing does not read for: nothing, for tasks whose stored versions are the versions they are named for.
        expect(await store.fileProblems(listed)).toEqual([[], [], []]);
      });

      it('refuses a second create, a stale or a future expectedVersion, and an invalid checkpoint, writing nothing', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        await expect(open().create(makeCheckpoint('t1'))).rejects.toBeInstanceOf(ConflictError);
        const v2 = (await next(store, v1, 'two')).checkpoint;
        await expect(next(store, v1, 'stale')).rejects.toBeInstanceOf(ConflictError);
        await expect(store.save('t1', { expectedVersion: 7, checkpoint: withoutVersion(v2) })).rejects.toBeInstanceOf(StoreWriteError);
        await expect(
          store.save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(v2), status: 'sleeping' as never } }),
        ).rejects.toBeInstanceOf(StoreWriteError);
        expect((await store.history('t1')).map((v) => v.version)).toEqual([1, 2]);
        expect((await open().getTask('t1'))?.checkpoint?.phase).toBe('two');
      });

      it('says which version is missing', async () => {
        await store.create(makeCheckpoint('t1'));
        const err = await store.readVersion('t1', 5).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TaskReadError);
        expect((err as TaskReadError).problems.map((p) => p.reason)).toContain('missing-version');
      });

      it('keeps a long task readable at every version across its full snapshots (deltas in between)', async () => {
        let cp = (await store.create(makeCheckpoint('t1', 80))).checkpoint;
        for (let v = 2; v <= 40; v++) cp = (await next(store, cp, `phase ${v}`, { messages: [`m${v}`] })).checkpoint;
        const reader = open();
        for (const v of [1, 2, 17, 39, 40]) expect((await reader.readVersion('t1', v)).phase).toBe(v === 1 ? 'start' : `phase ${v}`);
        const sizes = (await reader.history('t1')).map((x) => x.bytes);
        // History stays linear: most versions are deltas, far smaller than the first full snapshot.
        expect(sizes.filter((b) => b < sizes[0] / 2).length).toBeGreaterThan(sizes.length / 2);
      });
    });

    describe('history', () => {
      it('lists source, updated_at and bytes per version, and only the versions after the entry held', async () => {
        let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
        for (let i = 0; i < 4; i++) cp = (await next(store, cp, `p${i}`)).checkpoint;
        const all = await store.history('t1');
        expect(all.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
        expect(all.every((v) => v.bytes > 0 && typeof v.updated_at === 'string' && typeof v.source.kind === 'string')).toBe(true);
        const held = all[2];
        const after = await open().historyAfter('t1', held);
        expect(after).toEqual({ after: 3, versions: all.slice(3) });
        // An entry that is not the task's (another task of that id before) gets the whole list.
        expect(await store.historyAfter('t1', { ...held, bytes: held.bytes + 1 })).toEqual({ after: 0, versions: all });
        expect(await store.historyAfter('t1')).toEqual({ after: 0, versions: all });
      });
    });

    describe('readVersions', () => {
      it('gives what readVersion gives for each, in the order asked', async () => {
        let cp = (await store.create(makeCheckpoint('t1'))).checkpoint;
        for (let i = 0; i < 6; i++) cp = (await next(store, cp, `p${i}`)).checkpoint;
        const asked = [5, 1, 7, 3];
        const many = await open().readVersions('t1', asked);
        expect(many).toEqual(await Promise.all(asked.map((v) => store.readVersion('t1', v))));
        await expect(store.readVersions('t1', [2, 9])).rejects.toBeInstanceOf(TaskReadError);
      });
    });

    describe('blobs and messages', () => {
      it('stores results as blobs behind result_ref and reads them back', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        const stepId = v1.plan[0].id;
        const value = { text: 'résumé 总结', items: [1, 2, 3], nested: { ok: true } };
        const v2 = (await next(store, v1, 'done', { results: { [stepId]: value } })).checkpoint;
        const ref = v2.plan[0].result_ref!;
        expect(ref).toMatch(/^sha256:[0-9a-f]{64}/);
        expect(await open().readBlob('t1', ref)).toEqual(value);
        await expect(store.readBlob('t1', `sha256:${'0'.repeat(64)}`)).rejects.toBeInstanceOf(TaskReadError);
      });

      it('appends messages and reads the history as of any version, or only what came after a mark', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'), { appendHistory: [{ role: 'user', content: 'first' }] })).checkpoint;
        const v2 = (await next(store, v1, 'b', { messages: ['second', 'third'] })).checkpoint;
        const v3 = (await next(store, v2, 'c')).checkpoint;
        const v4 = (await next(store, v3, 'd', { messages: ['fourth'] })).checkpoint;
        const reader = open();
        expect((await reader.readHistory('t1')).map((m) => m.content)).toEqual(['first', 'second', 'third', 'fourth']);
        expect((await reader.readHistory('t1', 1)).map((m) => m.content)).toEqual(['first']);
        expect((await reader.readHistory('t1', 3)).map((m) => m.content)).toEqual(['first', 'second', 'third']);
        const tail = await reader.readHistoryAfter('t1', undefined, { head: v2.history.head, count: v2.history.count });
        expect(tail).toEqual({ from: 3, messages: [{ role: 'user', content: 'fourth' }] });
        const whole = await reader.readHistoryAfter('t1', 4, { head: 'sha256:' + 'f'.repeat(64), count: 1 });
        expect(whole.from).toBe(0);
        expect(whole.messages).toHaveLength(v4.history.count);
      });
    });

    describe('races', () => {
      it('of two writers racing for one version exactly one wins; the loser gets ConflictError and leaves nothing', async () => {
        await store.create(makeCheckpoint('t1'), { appendHistory: [{ role: 'user', content: 'start' }] });
        for (let round = 0; round < 8; round++) {
          // Fresh instances: each derives its writer state from storage, as two processes would.
          const a = open();
          const b = open();
          const latest = (await a.getTask('t1'))!.checkpoint!;
          await b.getTask('t1');
          const outcomes = await Promise.allSettled([
            next(a, latest, `a${round}`, { results: { [latest.plan[0].id]: `a-result-${round}` }, messages: [`a${round}`] }),
            next(b, latest, `b${round}`, { results: { [latest.plan[1].id]: `b-result-${round}` }, messages: [`b${round}`] }),
          ]);
          const won = outcomes.filter((o) => o.status === 'fulfilled');
          const lost = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
          expect(won).toHaveLength(1);
          expect(lost).toHaveLength(1);
          expect(lost[0].reason).toBeInstanceOf(ConflictError);
          expect((lost[0].reason as ConflictError).version).toBe(latest.version + 1);
          const winner = outcomes.indexOf(won[0]) === 0 ? 'a' : 'b';
          const loser = winner === 'a' ? 'b' : 'a';
          expect((await open().getTask('t1'))?.checkpoint?.phase).toBe(`${winner}${round}`);
          const history = await open().readHistory('t1');
          expect(history[history.length - 1].content).toBe(`${winner}${round}`);
          expect(history.map((m) => m.content)).not.toContain(`${loser}${round}`);
          // Nothing of the loser anywhere: not its result, not its message, not a blob of either.
          const texts = [...(await h.footprint()).values()];
          expect(texts.some((t) => t.includes(`${loser}-result-${round}`) || t.includes(`"${loser}${round}"`))).toBe(false);
          const loserBlob = encodeBlob(`${loser}-result-${round}`, latest.version + 1);
          await expect(store.readBlob('t1', loserBlob.ref)).rejects.toBeInstanceOf(TaskReadError);
        }
        expect((await open().history('t1')).map((v) => v.version)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
      });

      it('of two creates of one task one wins and the other gets ConflictError', async () => {
        const outcomes = await Promise.allSettled([
          open().create(makeCheckpoint('t2', 2, { goal: 'a' })),
          open().create(makeCheckpoint('t2', 2, { goal: 'b' })),
        ]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(ConflictError);
        const won = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ checkpoint: Checkpoint }>).value;
        expect((await open().getTask('t2'))?.checkpoint?.goal).toBe(won.checkpoint.goal);
        expect((await open().history('t2')).map((v) => v.version)).toEqual([1]);
      });

      it('one instance saving twice at once serialises the saves: the second is a conflict', async () => {
        const cp = (await store.create(makeCheckpoint('t3'))).checkpoint;
        const outcomes = await Promise.allSettled([next(store, cp, 'x'), next(store, cp, 'y')]);
        expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
        expect((await store.getTask('t3'))?.checkpoint?.phase).toBe('x');
      });
    });

    describe('leases', () => {
      it('is exclusive while held, readable by readers, and free once released', async () => {
        await store.create(makeCheckpoint('t1'));
        const a = await store.acquireLease('t1', { owner: 'a', heartbeatMs: 0 });
        expect(a.held).toBe(true);
        await expect(open().acquireLease('t1', { owner: 'b', heartbeatMs: 0 })).rejects.toBeInstanceOf(LeaseHeldError);
        const seen = await open().readLease('t1');
        expect(seen.info.held).toBe(true);
        expect(seen.info.pid).toBe(process.pid);
        expect(seen.entry?.owner).toMatch(/^a:/);
        await a.release();
        expect((await open().readLease('t1')).info.held).toBe(false);
        const b = await open().acquireLease('t1', { owner: 'b', heartbeatMs: 0 });
        expect(b.generation).toBeGreaterThan(a.generation);
        await b.release();
        expect((await store.readLease('never-leased')).info).toEqual({ held: false });
      });

      it('is taken over from a holder whose process died, and the saves under the old generation are refused', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        const child = spawn(process.execPath, ['--import', 'tsx', CHILD, h.location, 't1'], { stdio: ['ignore', 'pipe', 'inherit'] });
        const generation = await new Promise<number>((resolve, reject) => {
          let out = '';
          child.stdout!.on('data', (d: Buffer) => {
            out += d.toString();
            const m = /held (\d+)/.exec(out);
            if (m) resolve(Number(m[1]));
          });
          child.on('exit', (code) => reject(new Error(`the lease holder exited with ${code} before holding the lease`)));
        });
        await expect(store.acquireLease('t1', { owner: 'b', heartbeatMs: 0 })).rejects.toBeInstanceOf(LeaseHeldError);
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        const taken = await store.acquireLease('t1', { owner: 'b', heartbeatMs: 0 });
        expect(taken.generation).toBeGreaterThan(generation);
        // A save made under the dead holder's generation (it had not noticed yet) is fenced off.
        const stale = { taskId: 't1', held: true, generation };
        await expect(
          store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'old' }, lease: stale }),
        ).rejects.toBeInstanceOf(LeaseLostError);
        const v2 = (await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'new' }, lease: taken }))
          .checkpoint;
        expect(v2.phase).toBe('new');
        expect((await open().history('t1')).map((v) => v.version)).toEqual([1, 2]);
        await taken.release();
      });

      it('a holder whose lease was superseded learns it at its heartbeat and its saves are refused with nothing written', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        const a = await store.acquireLease('t1', { owner: 'a', heartbeatMs: 0 });
        const v2 = (await store.save('t1', { expectedVersion: 1, checkpoint: { ...withoutVersion(v1), phase: 'a1' }, lease: a }))
          .checkpoint;
        // The lease is let go and taken by another runner; `a` is kept by a buggy caller and used again.
        const aGeneration = a.generation;
        await a.release();
        const b = await open().acquireLease('t1', { owner: 'b', heartbeatMs: 0 });
        const stale = { taskId: 't1', held: true, generation: aGeneration };
        const err = await store
          .save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(v2), phase: 'a2' }, lease: stale })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LeaseLostError);
        expect((await open().history('t1')).map((v) => v.version)).toEqual([1, 2]);
        expect((await open().getTask('t1'))?.checkpoint?.phase).toBe('a1');
        await b.heartbeat();
        expect(b.lost).toBeNull();
        await b.release();
      });
    });

    describe('what is written', () => {
      it('refuses a value nested deeper than readers accept, naming the limit, with nothing written', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        const before = await h.footprint();
        let deep: unknown = 1;
        for (let i = 0; i < 600; i++) deep = [deep];
        const err = await store
          .save('t1', { expectedVersion: 1, checkpoint: withoutVersion(v1), results: { s1: deep } })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WriteLimitError);
        expect((err as WriteLimitError).limit).toBe('depth');
        expect((err as Error).message).toContain(`more than ${MAX_VALUE_DEPTH} levels`);
        expect(await h.footprint()).toEqual(before);
        expect((await next(store, v1, 'two')).checkpoint.version).toBe(2);
      });

      it('refuses a deep value put into the checkpoint a save after one it accepted, where the rest is not walked again', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        const v2 = (await next(store, v1, 'two')).checkpoint;
        const before = await h.footprint();
        let deep: unknown = 1;
        for (let i = 0; i < 600; i++) deep = { d: deep };
        const plan = v2.plan.map((s, i) => (i === 1 ? { ...s, result: deep } : s));
        const err = await store.save('t1', { expectedVersion: 2, checkpoint: { ...withoutVersion(v2), plan } }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WriteLimitError);
        expect((err as WriteLimitError).limit).toBe('depth');
        expect(await h.footprint()).toEqual(before);
        expect((await next(store, v2, 'three')).checkpoint.version).toBe(3);
      });

      it('writes no API key of the environment: scrubbed from versions, results, messages and events, and refused in a task id', async () => {
        const key = 'sk-conformance-5e1d7c3b9a';
        const saved = process.env.OPENAI_API_KEY;
        process.env.OPENAI_API_KEY = key;
        try {
          const v1 = (await store.create(makeCheckpoint('t1', 3, { goal: `goal with ${key}` }))).checkpoint;
          await next(store, v1, `phase ${key}`, { results: { s1: { [key]: `remembered ${key}` } }, messages: [`the key is ${key}`] });
          await store.appendEvent('t1', { type: 'log', data: { line: key } });
          const stored = [...(await h.footprint()).values()].join('\n');
          expect(stored).not.toContain(key);
          expect(stored).toContain('[redacted]');
          const fresh = open();
          expect(JSON.stringify(await fresh.getTask('t1'))).not.toContain(key);
          expect(JSON.stringify(await fresh.readHistory('t1'))).not.toContain(key);
          const refused = await store.create(makeCheckpoint(`task-${key}`)).catch((e: unknown) => e as Error);
          expect(refused).toBeInstanceOf(StoreWriteError);
          expect((refused as Error).message).not.toContain(key);
        } finally {
          if (saved === undefined) delete process.env.OPENAI_API_KEY;
          else process.env.OPENAI_API_KEY = saved;
        }
      });
    });

    describe('stop requests', () => {
      it('asks the live holding only, counts each ask, and the holder and any reader see it', async () => {
        await store.create(makeCheckpoint('t1'));
        const before = await h.footprint();
        // Nobody holds the lease: nothing to ask, and nothing is written.
        expect(await open().requestStop('t1', { by: 'grace' })).toBeNull();
        expect(await h.footprint()).toEqual(before);
        expect(await store.readStopRequest('t1')).toBeNull();

        const a = await store.acquireLease('t1', { owner: 'a', heartbeatMs: 0 });
        expect(await a.stopRequest()).toBeNull();
        expect((await open().readLease('t1')).generation).toBe(a.generation);
        const first = await open().requestStop('t1', { by: 'grace', reason: 'wrong input' });
        expect(first).toMatchObject({ generation: a.generation, request: { by: 'grace', reason: 'wrong input', count: 1 } });
        expect(first?.holder.owner).toMatch(/^a:/);
        expect(await a.stopRequest()).toMatchObject({ by: 'grace', reason: 'wrong input', count: 1 });
        const second = await open().requestStop('t1', { by: 'ada' });
        expect(second?.request).toMatchObject({ by: 'ada', count: 2 });
        expect(await open().readStopRequest('t1')).toMatchObject({ by: 'ada', count: 2 });
        // A heartbeat keeps the request: it is the holding's, not the entry's text.
        await a.heartbeat();
        expect(await a.stopRequest()).toMatchObject({ count: 2 });

        // Once the holder lets go, the next run starts with no stop asked of it.
        await a.release();
        expect(await open().readStopRequest('t1')).toBeNull();
        const b = await open().acquireLease('t1', { owner: 'b', heartbeatMs: 0 });
        expect(await b.stopRequest()).toBeNull();
        expect((await open().readLease('t1')).generation).toBe(b.generation);
        await b.release();
      });

      it("stays readable after its holder's process died, until another run takes the lease", async () => {
        await store.create(makeCheckpoint('t1'));
        const child = spawn(process.execPath, ['--import', 'tsx', CHILD, h.location, 't1'], { stdio: ['ignore', 'pipe', 'inherit'] });
        const generation = await new Promise<number>((resolve, reject) => {
          let out = '';
          child.stdout!.on('data', (d: Buffer) => {
            out += d.toString();
            const m = /held (\d+)/.exec(out);
            if (m) resolve(Number(m[1]));
          });
          child.on('exit', (code) => reject(new Error(`the lease holder exited with ${code} before holding the lease`)));
        });
        expect((await store.requestStop('t1', { by: 'grace' }))?.generation).toBe(generation);
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        // The holder is gone: no further ask, but the one made is what a supervisor finds.
        expect(await open().requestStop('t1', { by: 'grace' })).toBeNull();
        expect(await open().readStopRequest('t1')).toMatchObject({ by: 'grace', count: 1 });
        const taken = await store.acquireLease('t1', { owner: 'b', heartbeatMs: 0 });
        expect(await taken.stopRequest()).toBeNull();
        expect(await open().readStopRequest('t1')).toBeNull();
        await taken.release();
      });
    });

    describe('events', () => {
      it('logs a version event per save and appended events with ids increasing by one', async () => {
        const v1 = (await store.create(makeCheckpoint('t1'))).checkpoint;
        await store.appendEvent('t1', { type: 'step-start', step_id: 's1' });
        await next(store, v1, 'two');
        await store.appendEvent('t1', { type: 'log', data: { line: 'hello' } });
        const events = await open().readEvents('t1');
        expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4]);
        expect(events.map((e) => e.type)).toEqual(['version', 'step-start', 'version', 'log']);
        expect(events[2].version).toBe(2);
        expect(events.every((e) => e.task_id === 't1' && typeof e.at === 'string')).toBe(true);
        expect((await store.readEvents('t1', 2)).map((e) => e.id)).toEqual([3, 4]);
        await expect(store.appendEvent('nope', { type: 'log' })).rejects.toBeInstanceOf(TaskReadError);
      });

      it('keeps ids unique and without a gap when several instances take turns', async () => {
        const a = open();
        const b = open();
        await a.create(makeCheckpoint('t1'));
        for (let round = 0; round < 6; round++) {
          const writer = round % 2 === 0 ? a : b;
          await writer.appendEvent('t1', { type: 'step-start', step_id: `s${round}` });
          await writer.appendEvent('t1', { type: 'step-finish', step_id: `s${round}` });
        }
        const ids = (await open().readEvents('t1')).map((e) => e.id);
        expect(ids).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
      });
    });

    describe('subscription', () => {
      it('delivers every change made by another instance once, in order', async () => {
        await store.create(makeCheckpoint('old'));
        const changes: StoreChange[] = [];
        const sub = await store.subscribe((c) => changes.push(c));
        try {
          const writer = open();
          const v1 = (await writer.create(makeCheckpoint('t1'))).checkpoint;
          await writer.appendEvent('t1', { type: 'step-start', step_id: 's1' });
          await next(writer, v1, 'two');
          await writer.appendEvent('old', { type: 'log' });
          const delivered = (id: string): TaskEvent[] => changes.filter((c) => c.task_id === id).flatMap((c) => c.events);
          await vi.waitFor(
            () => {
              expect(delivered('t1')).toHaveLength(3);
              expect(delivered('old')).toHaveLength(1);
            },
            { timeout: 10_000, interval: 50 },
          );
          expect(delivered('t1')).toEqual(await store.readEvents('t1'));
          // What was in the log before the subscription is not delivered again.
          expect(delivered('old')).toEqual(await store.readEvents('old', 1));
        } finally {
          await sub.close();
        }
      });
    });
  });
}
