import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatIssues, safeParseReporting } from '../../../electron/store/checkpoint-check.js';
import { Checkpoint, PlanStep } from '../../../shared/checkpoint/schema.js';
import { makeCheckpoint } from './store-test-helpers.js';

// A plan step with each field either well formed or of a wrong kind, so both outcomes of a parse come up.
const anyField = fc.oneof(
  fc.string(),
  fc.integer({ min: -2, max: 3 }),
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom('done', 'pending'),
);
const stepLike = fc.record(
  {
    id: fc.oneof(fc.constant('s1'), anyField),
    name: fc.oneof(fc.constant('Step'), anyField),
    status: fc.oneof(fc.constantFrom('pending', 'running', 'done'), anyField),
    attempts: fc.oneof(fc.nat(5), anyField),
    result_ref: fc.oneof(fc.constant(`sha256:${'ab'.repeat(32)}@3`), anyField),
    note: anyField,
  },
  { requiredKeys: [] },
);

describe('safeParseReporting', () => {
  it('gives what a parse with the input reported gives: the same data when valid, the same issues with their input when not', () => {
    fc.assert(
      fc.property(stepLike, (step) => {
        const ours = safeParseReporting(PlanStep, step);
        const reporting = PlanStep.safeParse(step, { reportInput: true });
        expect(ours.success).toBe(reporting.success);
        if (ours.success && reporting.success) expect(ours.data).toEqual(reporting.data);
        if (!ours.success && !reporting.success) {
          expect(ours.error.issues).toEqual(reporting.error.issues);
          // What the message is built from: the value found at each failing place.
          expect(formatIssues(ours.error.issues, step)).toBe(formatIssues(reporting.error.issues, step));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('parses a whole checkpoint as the schema does, defaults filled in', () => {
    const cp = { ...makeCheckpoint('t', 3), version: 1 } as unknown as Record<string, unknown>;
    const plan = (cp.plan as Record<string, unknown>[]).map(({ attempts: _dropped, ...step }) => step);
    const parsed = safeParseReporting(Checkpoint, { ...cp, plan });
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(Checkpoint.parse({ ...cp, plan }));
    expect(parsed.data?.plan.every((s) => s.attempts === 0)).toBe(true);
    const broken = safeParseReporting(Checkpoint, { ...cp, current_step: 'two' });
    expect(broken.success).toBe(false);
    expect(formatIssues(broken.error!.issues, { ...cp, current_step: 'two' })).toContain('current_step: expected number, got string "two"');
  });
});
