import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import type { Checkpoint, HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion, type Without } from './store-test-helpers.js';

/** JSON values as they come back from disk. */
const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const extraKey = fc.string({ minLength: 1, maxLength: 8 }).map((k) => `x_${k}`);

/** One save: plan edits, new results, appended messages, unknown fields anywhere. */
const saveStep = fc.record({
  statuses: fc.array(fc.tuple(fc.nat(20), fc.constantFrom('pending', 'running', 'done', 'failed', 'skipped' as const)), { maxLength: 3 }),
  addSteps: fc.nat(2),
  dropSteps: fc.nat(1),
  results: fc.array(fc.tuple(fc.nat(20), json), { maxLength: 2 }),
  messages: fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.string({ maxLength: 30 }) }), { maxLength: 3 }),
  topExtra: fc.option(fc.tuple(extraKey, json), { nil: undefined }),
  stepExtra: fc.option(fc.tuple(fc.nat(20), extraKey, json), { nil: undefined }),
  runExtra: fc.option(fc.tuple(extraKey, json), { nil: undefined }),
  goal: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
});
type SaveStep = typeof saveStep extends fc.Arbitrary<infer T> ? T : never;

function applyStep(cp: Checkpoint, s: SaveStep, n: number): { next: Record<string, unknown>; results: Record<string, unknown> } {
  const next = structuredClone(withoutVersion(cp)) as Record<string, unknown> & Without<Checkpoint, 'version'>;
  for (let i = 0; i < s.addSteps; i++) next.plan.push({ id: `n${n}-${i}`, name: `added ${n}`, status: 'pending', attempts: 0 });
  for (let i = 0; i < s.dropSteps && next.plan.length > 1; i++) next.plan.pop();
  for (const [i, status] of s.statuses) if (next.plan.length) next.plan[i % next.plan.length].status = status;
  if (s.topExtra) next[s.topExtra[0]] = s.topExtra[1];
  if (s.stepExtra && next.plan.length)
    (next.plan[s.stepExtra[0] % next.plan.length] as Record<string, unknown>)[s.stepExtra[1]] = s.stepExtra[2];
  if (s.runExtra) (next.run as Record<string, unknown>)[s.runExtra[0]] = s.runExtra[1];
  if (s.goal !== undefined) next.goal = s.goal;
  next.total_steps = next.plan.length;
  const results: Record<string, unknown> = {};
  for (const [i, value] of s.results) if (next.plan.length) results[next.plan[i % next.plan.length].id] = value;
  return { next, results };
}

describe('store invariants under random save sequences', () => {
  it('versions are contiguous, immutable and each reads back exactly as saved, with its blobs and history', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(saveStep, { minLength: 1, maxLength: 12 }), async (steps) => {
        const root = await tempRoot('waystation-prop-');
        try {
          const store = openStore(root);
          let cp = (await store.create(makeCheckpoint('p', 3))).checkpoint;
          const saved: Checkpoint[] = [cp];
          const messages: HistoryMessage[][] = [[]];
          const resultValues = new Map<string, unknown>();
          const versionBytes = new Map<string, string>();
          for (const [n, s] of steps.entries()) {
            const { next, results } = applyStep(cp, s, n);
            const res = await store.save('p', {
              expectedVersion: cp.version,
              checkpoint: next as never,
              results,
              appendHistory: s.messages,
            });
            cp = res.checkpoint;
            saved.push(cp);
            messages.push([...messages[messages.length - 1], ...s.messages]);
            for (const [id, value] of Object.entries(results)) resultValues.set(cp.plan.find((x) => x.id === id)!.result_ref!, value);
            // Every version file written so far is byte-for-byte what it was when first seen.
            const tree = await hashTree(path.join(root, 'p', 'versions'));
            for (const [f, h] of versionBytes) expect(tree[f]).toBe(h);
            for (const [f, h] of Object.entries(tree)) versionBytes.set(f, h);
          }
          // A new instance, so nothing comes from the writer's memory.
          const reader = openStore(root);
          const history = await reader.history('p');
          expect(history.map((h) => h.version)).toEqual(saved.map((_, i) => i + 1));
          expect((await reader.getTask('p'))?.problems).toEqual([]);
          for (const [i, want] of saved.entries()) {
            const got = await reader.readVersion('p', i + 1);
            expect(got).toEqual(JSON.parse(JSON.stringify(want)));
            expect(await reader.readHistory('p', i + 1)).toEqual(messages[i]);
          }
          for (const [ref, value] of resultValues) expect(await reader.readBlob('p', ref)).toEqual(value);
          expect((await reader.getTask('p'))?.checkpoint).toEqual(JSON.parse(JSON.stringify(saved[saved.length - 1])));
          expect((await reader.readEvents('p')).map((e) => e.version)).toEqual(saved.map((_, i) => i + 1));
          const names = await fs.readdir(path.join(root, 'p', 'versions'));
          expect(names.filter((x) => x.startsWith('.'))).toEqual([]);
        } finally {
          await cleanup(root);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('keyframes keep the deltas since a full snapshot under two snapshots, and every version reads back', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ minLength: 0, maxLength: 400 }), { minLength: 5, maxLength: 40 }), async (goals) => {
        const root = await tempRoot('waystation-prop-');
        try {
          const store = openStore(root);
          let cp = (await store.create(makeCheckpoint('k', 2))).checkpoint;
          for (const goal of goals)
            cp = (await store.save('k', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), goal } })).checkpoint;
          const dir = path.join(root, 'k', 'versions');
          const versions = Array.from({ length: cp.version }, (_, i) => i + 1);
          // All of them in one pass: each rebuilt from the one before it, or from its own full snapshot.
          const read = await store.readVersions('k', versions);
          expect(read.map((c) => c.goal)).toEqual(['test the store', ...goals]);
          let since = 0;
          for (const v of versions) {
            const bytes = await fs.readFile(path.join(dir, `${String(v).padStart(8, '0')}.json`));
            const kind = JSON.parse(bytes.toString('utf8')).kind as string;
            if (v === 1) expect(kind).toBe('full');
            if (kind === 'full') {
              since = 0;
              continue;
            }
            since += bytes.length;
            // What a full snapshot of this version would take: the writer writes one before the deltas reach two.
            const full = Buffer.byteLength(
              `{"format":"waystation-version","version":${v},"kind":"full","checkpoint":${JSON.stringify(read[v - 1])}}`,
            );
            expect(since).toBeLessThan(2 * full);
          }
        } finally {
          await cleanup(root);
        }
      }),
      { numRuns: 15 },
    );
  });
});
