import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkDeltas, validateChanges } from '../../../electron/store/incremental-validate.js';
import { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { applyDiff, computeDiff, type DiffOp } from '../../../shared/diff/json-diff.js';
import { HEX_A, sampleCheckpoint } from '../../shared/checkpoint/sample-checkpoint.js';

type Doc = Record<string, unknown>;

/** A valid checkpoint as the store holds one: parsed, defaults filled, with a few model calls on record. */
function validBase(): Checkpoint {
  const cp = sampleCheckpoint();
  const call = { step_id: 's1', model: 'gpt-test', tokens_in: 10, tokens_out: 5, latency_ms: 3 };
  return Checkpoint.parse({ ...cp, run: { ...cp.run, llm_calls: [call, { ...call, step_id: 's2' }] } });
}

/** Values that some fields take and others refuse, so that a change is as often valid as not. */
const value = fc.constantFrom<unknown>(
  0,
  2,
  -1,
  1.5,
  '',
  'x',
  'done',
  'running',
  'bogus',
  null,
  true,
  {},
  [],
  '2026-01-10T10:05:00Z',
  `sha256:${HEX_A}`,
  `sha256:${HEX_A}@3`,
  { count: 2, head: `sha256:${HEX_A}@2` },
  { message: 'boom' },
);
const topKey = fc.constantFrom(
  'version',
  'status',
  'phase',
  'goal',
  'task_name',
  'current_step',
  'total_steps',
  'resume_hint',
  'schema_version',
  'history',
  'agent',
  'forked_from',
  'an_unknown_field',
);
const runKey = fc.constantFrom('updated_at', 'model', 'tokens_in', 'tokens_out', 'cost_usd', 'elapsed_ms');
const stepKey = fc.constantFrom('id', 'name', 'status', 'attempts', 'result_ref', 'error', 'elapsed_ms', 'tokens_in', 'started_at');
const callKey = fc.constantFrom('model', 'tokens_in', 'latency_ms', 'retries');

/** One edit a writer (or a hand, or a bug) may make to a checkpoint between two versions. */
const edit = fc.oneof(
  fc.record({ kind: fc.constant('top' as const), key: topKey, value }),
  fc.record({ kind: fc.constant('drop-top' as const), key: fc.constantFrom('resume_hint', 'history', 'agent', 'run', 'errors', 'plan') }),
  fc.record({ kind: fc.constant('run' as const), key: runKey, value }),
  fc.record({ kind: fc.constant('drop-run' as const), key: runKey }),
  fc.record({ kind: fc.constant('step' as const), i: fc.nat(), key: stepKey, value }),
  fc.record({ kind: fc.constant('drop-step-field' as const), i: fc.nat(), key: stepKey }),
  fc.record({ kind: fc.constant('add-step' as const), valid: fc.boolean() }),
  fc.record({ kind: fc.constant('remove-step' as const), i: fc.nat() }),
  fc.record({ kind: fc.constant('call' as const), i: fc.nat(), key: callKey, value }),
  fc.record({ kind: fc.constant('add-call' as const), valid: fc.boolean() }),
  fc.record({ kind: fc.constant('effect' as const), status: fc.constantFrom('done', 'pending', 'bogus') }),
  fc.record({ kind: fc.constant('recovery' as const), mode: fc.constantFrom('manual', 'auto', 'confirm', 'sometimes') }),
);
type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

/** `doc` with `e` made, as a new document whose untouched parts are `doc`'s own, as a writer's immutable update is. */
function edited(doc: Doc, e: Edit): Doc {
  const plan = doc.plan as Doc[] | undefined;
  const run = doc.run as Doc | undefined;
  const calls = run?.llm_calls as Doc[] | undefined;
  const withStep = (i: number, change: (step: Doc) => Doc): Doc => {
    if (!Array.isArray(plan) || plan.length === 0) return doc;
    const at = i % plan.length;
    return { ...doc, plan: plan.map((s, j) => (j === at ? change(s) : s)) };
  };
  const without = (o: Doc, key: string): Doc => {
    const copy = { ...o };
    delete copy[key];
    return copy;
  };
  switch (e.kind) {
    case 'top':
      return { ...doc, [e.key]: e.value };
    case 'drop-top':
      return without(doc, e.key);
    case 'run':
      return run ? { ...doc, run: { ...run, [e.key]: e.value } } : doc;
    case 'drop-run':
      return run ? { ...doc, run: without(run, e.key) } : doc;
    case 'step':
      return withStep(e.i, (s) => ({ ...s, [e.key]: e.value }));
    case 'drop-step-field':
      return withStep(e.i, (s) => without(s, e.key));
    case 'add-step':
      return Array.isArray(plan)
        ? { ...doc, plan: [...plan, e.valid ? { id: `s${plan.length + 1}`, name: 'more', status: 'pending' } : { name: 'no id' }] }
        : doc;
    case 'remove-step':
      return Array.isArray(plan) && plan.length ? { ...doc, plan: plan.filter((_, j) => j !== e.i % plan.length) } : doc;
    case 'call':
      if (!run || !Array.isArray(calls) || calls.length === 0) return doc;
      return { ...doc, run: { ...run, llm_calls: calls.map((c, j) => (j === e.i % calls.length ? { ...c, [e.key]: e.value } : c)) } };
    case 'add-call': {
      if (!run || !Array.isArray(calls)) return doc;
      const call = e.valid ? { model: 'm', tokens_in: 1, tokens_out: 1, latency_ms: 0 } : { model: 'm', tokens_in: -1 };
      return { ...doc, run: { ...run, llm_calls: [...calls, call] } };
    }
    case 'effect': {
      const effects = doc.side_effects as Doc[];
      return { ...doc, side_effects: effects.map((x, j) => (j === 0 ? { ...x, status: e.status } : x)) };
    }
    case 'recovery':
      return { ...doc, recovery: { ...(doc.recovery as Doc), mode: e.mode } };
  }
}

/** Issues as where and what, in a stable order: the messages are zod's own either way. */
function issueKeys(issues: readonly { path: readonly PropertyKey[]; code: string }[]): string[] {
  return issues.map((i) => JSON.stringify([i.path.map(String), i.code])).sort();
}

const noDefaults = (doc: Doc): Doc => JSON.parse(JSON.stringify(doc)) as Doc;

describe('validateChanges', () => {
  it('finds a changed checkpoint valid exactly when the whole schema does, and gives what parsing the whole gives', () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        const base = validBase();
        const next = edits.reduce<Doc>((doc, e) => edited(doc, e), base as unknown as Doc);
        const ops = computeDiff(base, next);
        const incremental = validateChanges(next, ops);
        const whole = Checkpoint.safeParse(next);
        if (incremental.ok) {
          expect(whole.success).toBe(true);
          expect(applyDiff(base, incremental.changes as DiffOp[])).toEqual(whole.data);
        } else {
          expect(incremental.issues).not.toBeNull();
          expect(whole.success).toBe(false);
          expect(issueKeys(incremental.issues!)).toEqual(issueKeys(whole.error!.issues));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('fills the defaults of a unit as the whole schema does', () => {
    const base = validBase();
    const next: Doc = { ...(base as unknown as Doc), plan: [...base.plan, { id: 's4', name: 'late', status: 'pending' }] };
    delete next.resume_hint;
    const check = validateChanges(next, computeDiff(base, next));
    expect(check.ok).toBe(true);
    const made = applyDiff(base, (check as { changes: DiffOp[] }).changes) as Checkpoint;
    expect(made.plan[3].attempts).toBe(0);
    expect(made.resume_hint).toBe('');
    expect(made).toEqual(Checkpoint.parse(next));
  });

  it('leaves a change of the whole document to the caller', () => {
    const base = validBase();
    expect(validateChanges([], [{ op: 'replace', path: [], value: [] }])).toEqual({ ok: false, issues: null });
    expect(validateChanges(base, computeDiff(base, base))).toEqual({ ok: true, changes: [] });
  });
});

describe('checkDeltas', () => {
  it('gives the checkpoint parsing the last document gives when every delta is valid, and null as soon as one is not', () => {
    fc.assert(
      fc.property(fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }), (versions) => {
        const base = validBase();
        const deltas: { version: number; ops: DiffOp[]; doc: unknown }[] = [];
        let doc = base as unknown as Doc;
        let everyValid = true;
        for (const [i, edits] of versions.entries()) {
          // Each version as a reader rebuilds it: the document as stored, without the defaults a parse fills.
          const next = noDefaults(edits.reduce<Doc>((d, e) => edited(d, e), doc));
          deltas.push({ version: base.version + i + 1, ops: computeDiff(doc, next), doc: next });
          everyValid &&= Checkpoint.safeParse(next).success;
          doc = next;
        }
        const checked = checkDeltas(base, deltas);
        if (everyValid) expect(checked).toEqual(Checkpoint.parse(doc));
        else expect(checked).toBeNull();
      }),
      { numRuns: 300 },
    );
  });
});
