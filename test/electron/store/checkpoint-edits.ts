/**
 * Edits a writer, a hand or a bug may make to a checkpoint between two
 * versions, valid or not, for the properties that checking a checkpoint by
 * what changed agrees with checking it whole (incremental-validate.test.ts,
 * version-build.test.ts).
 */
import fc from 'fast-check';
import { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { HEX_A, sampleCheckpoint } from '../../shared/checkpoint/sample-checkpoint.js';

export type Doc = Record<string, unknown>;

/** A valid checkpoint as the store holds one: parsed, defaults filled, with a few model calls on record. */
export function validBase(): Checkpoint {
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
export const edit = fc.oneof(
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
export type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

/** `doc` with `e` made, as a new document whose untouched parts are `doc`'s own, as a writer's immutable update is. */
export function edited(doc: Doc, e: Edit): Doc {
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
