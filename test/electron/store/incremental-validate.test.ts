import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkDeltas, validateChanges } from '../../../electron/store/incremental-validate.js';
import { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { applyDiff, computeDiff, type DiffOp } from '../../../shared/diff/json-diff.js';
import { edit, edited, validBase, type Doc } from './checkpoint-edits.js';

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
