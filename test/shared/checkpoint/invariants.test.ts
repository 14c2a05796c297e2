import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkInvariants, expectedCurrentStep, expectedCurrentStepSince } from '../../../shared/checkpoint/invariants.js';
import { StepStatus } from '../../../shared/checkpoint/schema.js';
import { noteLineage } from '../../../shared/diff/array-lineage.js';
import { sampleCheckpoint } from './sample-checkpoint.js';

const messages = (cp: ReturnType<typeof sampleCheckpoint>) => checkInvariants(cp).map((p) => p.message);

describe('expectedCurrentStepSince', () => {
  const status = fc.constantFrom(...StepStatus.options);
  it('gives what expectedCurrentStep gives, reading only what changed when the plan is a recorded copy', () => {
    fc.assert(
      fc.property(
        fc.array(status, { maxLength: 20 }),
        fc.array(fc.tuple(fc.nat(25), status), { maxLength: 5 }),
        fc.nat(25),
        fc.array(status, { maxLength: 3 }),
        (before, changes, keep, appended) => {
          const known = Object.freeze(before.map((s) => Object.freeze({ status: s })));
          const plan = known.slice(0, keep) as { status: StepStatus }[];
          const written: number[] = [];
          for (const [at, s] of changes) {
            if (at >= plan.length) continue;
            plan[at] = { status: s };
            written.push(at);
          }
          // Places past the cut are filled anew: written too, as a draft records them.
          for (const s of appended) written.push(plan.push({ status: s }) - 1);
          noteLineage(plan, known, written);
          Object.freeze(plan);
          const expected = expectedCurrentStep(plan);
          expect(expectedCurrentStepSince(plan, { plan: known, current: expectedCurrentStep(known) })).toBe(expected);
          // A plan with no record is walked whole.
          expect(expectedCurrentStepSince([...plan], { plan: known, current: 0 })).toBe(expected);
        },
      ),
    );
  });
});

describe('expectedCurrentStep', () => {
  it('counts leading done or skipped steps and stops at the first unfinished one', () => {
    expect(expectedCurrentStep([])).toBe(0);
    expect(expectedCurrentStep([{ status: 'done' }, { status: 'skipped' }, { status: 'pending' }, { status: 'done' }])).toBe(2);
    expect(expectedCurrentStep([{ status: 'failed' }, { status: 'done' }])).toBe(0);
  });

  it('is the length of the longest finished prefix for any plan', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...StepStatus.options), { maxLength: 12 }), (statuses) => {
        const n = expectedCurrentStep(statuses.map((status) => ({ status })));
        expect(statuses.slice(0, n).every((s) => s === 'done' || s === 'skipped')).toBe(true);
        if (n < statuses.length) expect(['done', 'skipped']).not.toContain(statuses[n]);
      }),
    );
  });
});

describe('checkInvariants', () => {
  it('finds nothing wrong with a consistent checkpoint', () => {
    expect(checkInvariants(sampleCheckpoint())).toEqual([]);
  });

  it('reports problems with reason invariant against the given file', () => {
    const [p] = checkInvariants(sampleCheckpoint({ total_steps: 5 }), 'task-1/checkpoint.json');
    expect(p).toMatchObject({ file: 'task-1/checkpoint.json', reason: 'invariant', severity: 'error' });
    expect(p.message).toMatch(/total_steps is 5 but the plan has 3/);
  });

  it('checks current_step against the finished prefix of the plan', () => {
    expect(messages(sampleCheckpoint({ current_step: 2 }))).toEqual([expect.stringMatching(/current_step is 2 but 1 leading/)]);
  });

  it('reports duplicate step ids, effect ids and idempotency keys', () => {
    const cp = sampleCheckpoint({
      plan: [
        { id: 's1', name: 'a', status: 'done' },
        { id: 's1', name: 'b', status: 'pending' },
      ],
      total_steps: 2,
      current_step: 1,
      artifacts: [],
      side_effects: [
        { id: 'e1', type: 'x', status: 'done', idempotency_key: 'k' },
        { id: 'e1', type: 'x', status: 'done', idempotency_key: 'k' },
      ],
    });
    const found = messages(cp);
    expect(found).toContainEqual(expect.stringMatching(/plan step id "s1" is used more than once/));
    expect(found).toContainEqual(expect.stringMatching(/side effect id "e1" is used more than once/));
    expect(found).toContainEqual(expect.stringMatching(/idempotency key "k"/));
  });

  it('reports references to steps that are not in the plan', () => {
    const cp = sampleCheckpoint({
      artifacts: [{ type: 'file', path: 'x', sha256: 'c'.repeat(64), size: 1, step_id: 'nope' }],
      errors: [{ at: '2026-01-10T10:00:00Z', step_id: 'gone', what: 'timeout' }],
    });
    const found = messages(cp);
    expect(found).toContainEqual(expect.stringMatching(/artifact x names step "nope"/));
    expect(found).toContainEqual(expect.stringMatching(/error "timeout" names step "gone"/));
  });

  it('requires a done task to have every step done or skipped', () => {
    expect(messages(sampleCheckpoint({ status: 'done' }))).toContainEqual(
      expect.stringMatching(/status is done but 2 plan step\(s\).*s2, s3/),
    );
    const finished = sampleCheckpoint({
      status: 'done',
      plan: [
        { id: 's1', name: 'a', status: 'done' },
        { id: 's2', name: 'b', status: 'skipped' },
      ],
      total_steps: 2,
      current_step: 2,
      artifacts: [],
      side_effects: [],
    });
    expect(checkInvariants(finished)).toEqual([]);
  });

  it('ties waiting_approval to a pending approval, both ways', () => {
    expect(messages(sampleCheckpoint({ status: 'waiting_approval' }))).toContainEqual(expect.stringMatching(/nothing to approve/));
    const pending = { id: 'ap1', requested_at: '2026-01-10T10:02:00Z', plan: { rerun_step: 's2', probe_effects: ['e1'] } };
    expect(
      checkInvariants(sampleCheckpoint({ status: 'waiting_approval', recovery: { mode: 'confirm', pending_approval: pending } })),
    ).toEqual([]);
    expect(messages(sampleCheckpoint({ status: 'running', recovery: { mode: 'confirm', pending_approval: pending } }))).toContainEqual(
      expect.stringMatching(/pending_approval ap1 is set but status is running/),
    );
  });

  it('checks that a pending resume plan names real steps and effects', () => {
    const pending = { id: 'ap1', requested_at: '2026-01-10T10:02:00Z', plan: { rerun_step: 's9', retry_effects: ['e7'] } };
    const found = messages(sampleCheckpoint({ status: 'waiting_approval', recovery: { mode: 'confirm', pending_approval: pending } }));
    expect(found).toContainEqual(expect.stringMatching(/reruns step "s9"/));
    expect(found).toContainEqual(expect.stringMatching(/side effect "e7"/));
  });

  it('requires a failed task to show a failed step or a recorded error', () => {
    expect(messages(sampleCheckpoint({ status: 'failed' }))).toContainEqual(
      expect.stringMatching(/status is failed but no plan step failed/),
    );
    expect(
      checkInvariants(sampleCheckpoint({ status: 'failed', errors: [{ at: '2026-01-10T10:02:00Z', what: 'budget exhausted' }] })),
    ).toEqual([]);
  });

  it('rejects timestamps that do not parse or run backwards', () => {
    const cp = sampleCheckpoint({
      run: { created_at: '2026-01-10T10:00:00Z', updated_at: '2026-01-09T10:00:00Z' },
      plan: [
        { id: 's1', name: 'a', status: 'done', started_at: '2026-01-10T10:05:00Z', finished_at: '2026-01-10T10:01:00Z' },
        { id: 's2', name: 'b', status: 'running', started_at: 'yesterday-ish' },
        { id: 's3', name: 'c', status: 'pending' },
      ],
    });
    const found = messages(cp);
    expect(found).toContainEqual(expect.stringMatching(/updated_at .* is before run.created_at/));
    expect(found).toContainEqual(expect.stringMatching(/step s1 finished .* before it started/));
    expect(found).toContainEqual(expect.stringMatching(/step s2: started_at "yesterday-ish" is not a timestamp/));
  });

  it('checks that the history count and head agree', () => {
    expect(messages(sampleCheckpoint({ history: { count: 3, head: null } }))).toContainEqual(expect.stringMatching(/history.count is 3/));
    expect(messages(sampleCheckpoint({ history: { count: 0, head: `sha256:${'d'.repeat(64)}` } }))).toContainEqual(
      expect.stringMatching(/history.head points at a chunk/),
    );
  });

  it('accepts any plan whose counters are derived from it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('pending', 'done', 'skipped', 'running') as fc.Arbitrary<StepStatus>, { maxLength: 8 }),
        (statuses) => {
          const plan = statuses.map((status, i) => ({ id: `s${i}`, name: `step ${i}`, status }));
          const cp = sampleCheckpoint({
            plan,
            total_steps: plan.length,
            current_step: expectedCurrentStep(plan),
            artifacts: [],
            side_effects: [],
          });
          expect(checkInvariants(cp)).toEqual([]);
        },
      ),
    );
  });
});

describe('checkInvariants on a converted article-format checkpoint', () => {
  it('accepts an inline history without a blob head', () => {
    const cp = sampleCheckpoint({ history: { count: 2, head: null } });
    expect(checkInvariants(cp, 'legacy-001.json', { legacy: true })).toEqual([]);
  });
});
