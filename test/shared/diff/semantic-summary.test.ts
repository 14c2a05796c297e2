import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isEmptySummary, structuredDiff, summarizeChange, toJsonPointer, ChangeSummary } from '../../../shared/diff/semantic-summary.js';
import { applyDiff } from '../../../shared/diff/json-diff.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { sampleCheckpoint, HEX_A, HEX_B } from '../checkpoint/sample-checkpoint.js';

/** The sample after step s2 finished: what the runtime's next save would look like. */
function nextVersion(a: Checkpoint): Checkpoint {
  const b = structuredClone(a);
  b.version = a.version + 1;
  b.phase = 'publishing';
  b.plan[1] = { ...b.plan[1], status: 'done', finished_at: '2026-01-10T10:03:00Z', result_ref: `sha256:${'e'.repeat(64)}` };
  b.plan[2] = { ...b.plan[2], status: 'running' };
  b.current_step = 2;
  b.artifacts[0] = { ...b.artifacts[0], sha256: HEX_B, size: 40 };
  b.artifacts.push({ type: 'file', path: 'out/draft.md', sha256: HEX_A, size: 99, status: 'written', step_id: 's2' });
  b.side_effects[0] = { ...b.side_effects[0], attempts: 2 };
  b.side_effects.push({ id: 'e2', type: 'git_commit', status: 'intent', idempotency_key: 'task-1-e2', attempts: 0, step_id: 's3' });
  b.errors.push({ at: '2026-01-10T10:02:00Z', step_id: 's2', what: 'rate limited', fix: 'waited 20 s' });
  b.run = { ...b.run, updated_at: '2026-01-10T10:03:00Z', tokens_in: 300, tokens_out: 80, cost_usd: 0.03, elapsed_ms: 180_000 };
  b.source = { kind: 'runtime', actor: 'runner-1' };
  return b;
}

describe('summarizeChange', () => {
  it('says what the runtime did between two versions', () => {
    const a = sampleCheckpoint();
    const s = summarizeChange(a, nextVersion(a));
    expect(ChangeSummary.parse(s)).toEqual(s);
    expect(s).toMatchObject({ task_id: 'task-1', from_version: 1, to_version: 2 });
    expect(s.phase).toEqual({ from: 'drafting', to: 'publishing' });
    expect(s.status).toBeNull();
    expect(s.current_step).toEqual({ from: 1, to: 2 });
    expect(s.step_transitions).toEqual([
      { id: 's2', name: 'draft', from: 'running', to: 'done' },
      { id: 's3', name: 'publish', from: 'pending', to: 'running' },
    ]);
    expect(s.results_changed).toEqual([{ id: 's2', name: 'draft' }]);
    expect(s.effects_added).toEqual([{ id: 'e2', type: 'git_commit', key: 'task-1-e2', status: 'intent' }]);
    expect(s.effects_changed).toEqual([{ id: 'e1', type: 'http_post', key: 'task-1-e1', from: 'done', to: 'done', fields: ['attempts'] }]);
    expect(s.artifacts_added.map((x) => x.path)).toEqual(['out/draft.md']);
    expect(s.artifacts_changed).toEqual([
      {
        path: 'out/outline.md',
        sha256: { from: HEX_A, to: HEX_B },
        size: { from: 12, to: 40 },
        status: { from: 'written', to: 'written' },
      },
    ]);
    expect(s.spend).toEqual({ tokens_in: 200, tokens_out: 30, cost_usd: 0.02, elapsed_ms: 120_000 });
    expect(s.source).toEqual({ kind: 'runtime', actor: 'runner-1' });
    expect(s.errors_added.map((e) => e.what)).toEqual(['rate limited']);
    expect(s.approval).toBeNull();
  });

  it('reports steps, effects and artifacts that disappeared when going back in history', () => {
    const a = sampleCheckpoint();
    const s = summarizeChange(nextVersion(a), a);
    expect(s.effects_removed.map((e) => e.id)).toEqual(['e2']);
    expect(s.artifacts_removed.map((x) => x.path)).toEqual(['out/draft.md']);
    expect(s.spend.tokens_in).toBe(-200);
    expect(s.errors_added).toEqual([]);
  });

  it('reports plan steps added and removed by id', () => {
    const a = sampleCheckpoint();
    const b = structuredClone(a);
    b.plan = [b.plan[0], b.plan[1], { id: 's4', name: 'review', status: 'pending', attempts: 0 }];
    const s = summarizeChange(a, b);
    expect(s.steps_added).toEqual([{ id: 's4', name: 'review', status: 'pending' }]);
    expect(s.steps_removed).toEqual([{ id: 's3', name: 'publish', status: 'pending' }]);
  });

  it('sees a pending approval appear, get replaced and clear', () => {
    const plain = sampleCheckpoint();
    const asking = (id: string) =>
      sampleCheckpoint({
        status: 'waiting_approval',
        recovery: { mode: 'confirm', pending_approval: { id, requested_at: '2026-01-10T10:05:00Z', plan: { rerun_step: 's2' } } },
      });
    expect(summarizeChange(plain, asking('ap1')).approval).toEqual({ change: 'appeared', from: null, to: 'ap1' });
    expect(summarizeChange(asking('ap1'), asking('ap2')).approval).toEqual({ change: 'replaced', from: 'ap1', to: 'ap2' });
    expect(summarizeChange(asking('ap1'), plain).approval).toEqual({ change: 'cleared', from: 'ap1', to: null });
    expect(summarizeChange(plain, asking('ap1')).status).toEqual({ from: 'running', to: 'waiting_approval' });
  });

  it('names a human edit as the source of the later version', () => {
    const a = sampleCheckpoint();
    const b = structuredClone(a);
    b.source = { kind: 'human-edit', actor: 'ana', edit: { step_id: 's1', before: 'x', after: 'y' } };
    b.plan[0] = { ...b.plan[0], result: { text: 'y' } };
    const s = summarizeChange(a, b);
    expect(s.source.kind).toBe('human-edit');
    expect(s.results_changed).toEqual([{ id: 's1', name: 'outline' }]);
  });

  it('is empty exactly when nothing a reader cares about changed', () => {
    const a = sampleCheckpoint();
    expect(isEmptySummary(summarizeChange(a, structuredClone(a)))).toBe(true);
    expect(isEmptySummary(summarizeChange(a, nextVersion(a)))).toBe(false);
    const reordered = structuredClone(a);
    reordered.side_effects = [...reordered.side_effects].reverse();
    expect(isEmptySummary(summarizeChange(a, reordered))).toBe(true);
  });
});

describe('toJsonPointer', () => {
  it('escapes ~ and / inside keys as RFC 6901 requires', () => {
    expect(toJsonPointer([])).toBe('');
    expect(toJsonPointer(['plan', 2, 'status'])).toBe('/plan/2/status');
    expect(toJsonPointer(['a/b', 'c~d'])).toBe('/a~1b/c~0d');
  });
});

/** Read a JSON Pointer back into segments, for checking that rendering loses nothing. */
function fromPointer(p: string): string[] {
  return p === ''
    ? []
    : p
        .slice(1)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

describe('structuredDiff', () => {
  it('lists each changed field with its value before and after', () => {
    const a = sampleCheckpoint();
    const entries = structuredDiff(a, nextVersion(a));
    expect(entries).toContainEqual({ op: 'replace', path: '/phase', before: 'drafting', after: 'publishing' });
    expect(entries).toContainEqual({ op: 'replace', path: '/plan/1/status', before: 'running', after: 'done' });
    expect(entries).toContainEqual(
      expect.objectContaining({ op: 'add', path: '/side_effects/1', after: expect.objectContaining({ id: 'e2' }) }),
    );
    expect(entries.find((e) => e.op === 'add')).not.toHaveProperty('before');
    expect(structuredDiff(a, structuredClone(a))).toEqual([]);
  });

  it('keeps enough to rebuild the later version from the earlier one', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.integer(),
        fc.string(),
        fc.boolean(),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b/c', 'd~e', 'f'), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, json, (a, b) => {
        const ops = structuredDiff(a, b).map((e) => ({
          op: e.op,
          // Pointer segments of array parents are indices; give them back as numbers.
          path: fromPointer(e.path).map((seg) => (/^\d+$/.test(seg) ? Number(seg) : seg)),
          value: e.after,
          old: e.before,
        }));
        expect(applyDiff(a, ops)).toEqual(b);
      }),
    );
  });
});

describe('summarizeChange over random plan moves', () => {
  it('reports exactly the steps whose status differs', () => {
    const statuses = fc.constantFrom('pending', 'running', 'done', 'failed', 'skipped') as fc.Arbitrary<
      Checkpoint['plan'][number]['status']
    >;
    fc.assert(
      fc.property(fc.array(fc.tuple(statuses, statuses), { minLength: 1, maxLength: 8 }), (pairs) => {
        const a = sampleCheckpoint({ plan: pairs.map(([s], i) => ({ id: `s${i}`, name: `n${i}`, status: s })) });
        const b = sampleCheckpoint({ plan: pairs.map(([, s], i) => ({ id: `s${i}`, name: `n${i}`, status: s })) });
        const moved = summarizeChange(a, b).step_transitions;
        expect(moved.map((t) => t.id)).toEqual(pairs.flatMap(([x, y], i) => (x === y ? [] : [`s${i}`])));
        expect(moved.every((t) => t.from !== t.to)).toBe(true);
        expect(summarizeChange(b, a).step_transitions.map((t) => [t.id, t.to, t.from])).toEqual(moved.map((t) => [t.id, t.from, t.to]));
      }),
    );
  });
});
