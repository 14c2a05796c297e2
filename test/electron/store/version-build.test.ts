import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sealJson, toPlainJson } from '../../../electron/store/frozen-json.js';
import { StoreWriteError, type SaveRequest } from '../../../electron/store/store-types.js';
import { buildVersion, type BuildBase, type BuiltVersion } from '../../../electron/store/version-build.js';
import { edit, edited, validBase, type Doc } from './checkpoint-edits.js';

const TASK = 'task-1';

/** The base as a writer holds the version it saved last: plain JSON, sealed. */
function sealedBase(): Doc {
  return sealJson(toPlainJson(validBase()) as unknown as Doc);
}

/** What building `request` on `base` gives, trusted (checking what changed) or not (checking the whole). */
function built(request: SaveRequest, base: Doc, trusted: boolean): BuiltVersion | { refused: string[] } {
  const at: BuildBase = { taskId: TASK, base, trusted, file: `${TASK}/versions/00000002.json` };
  try {
    return buildVersion(request, (base.version as number) + 1, at);
  } catch (err) {
    if (!(err instanceof StoreWriteError)) throw err;
    return { refused: err.problems.map((p) => p.reason) };
  }
}

const extras = fc.record({
  result: fc.option(fc.constantFrom<unknown>({ rows: 3 }, 'text', null), { nil: undefined }),
  messages: fc.option(fc.constantFrom<unknown[]>([{ role: 'user', content: 'go on' }], [{ role: 'assistant' }]), { nil: undefined }),
});

describe('buildVersion', () => {
  it('builds the same version from a trusted base, checking what changed, as from checking the whole', () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 0, maxLength: 4 }), extras, (edits, { result, messages }) => {
        const base = sealedBase();
        const checkpoint = edits.reduce<Doc>((doc, e) => edited(doc, e), base);
        const request: SaveRequest = {
          expectedVersion: base.version as number,
          checkpoint: checkpoint as SaveRequest['checkpoint'],
          ...(result !== undefined ? { results: { s1: result } } : {}),
          ...(messages ? { appendHistory: messages as SaveRequest['appendHistory'] } : {}),
        };
        const fast = built(request, base, true);
        const whole = built(request, base, false);
        if ('refused' in whole) {
          expect(fast).toEqual(whole);
          return;
        }
        expect('refused' in fast).toBe(false);
        const ok = fast as BuiltVersion;
        expect(ok.normalized).toEqual(whole.normalized);
        expect(ok.ops).toEqual(whole.ops);
        expect(ok.blobs.map((b) => b.ref)).toEqual(whole.blobs.map((b) => b.ref));
        expect(Object.isFrozen(ok.normalized)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a checkpoint of another task, naming both, and writes nothing', () => {
    const base = sealedBase();
    const request: SaveRequest = { expectedVersion: 1, checkpoint: { ...base, task_id: 'other' } as SaveRequest['checkpoint'] };
    expect(() => buildVersion(request, 2, { taskId: TASK, base, trusted: true, file: 'f' })).toThrow(
      /task_id is "other", not "task-1"; nothing was written/,
    );
  });
});
