import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EncodeArena, encodeJson, isPlainJson, isSealed, sealJson, toPlainJson } from '../../../electron/store/frozen-json.js';
import { applyDiff, computeDiff, type DiffOp } from '../../../shared/diff/json-diff.js';

/** JSON values as JSON.parse gives them (fast-check's may hold -0, which JSON writes as 0 anyway). */
const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
/** Values JSON writes, but not as they are: undefined members, Dates, NaN, holes. */
const loose = fc.anything({
  withDate: true,
  withNullPrototype: true,
  withSparseArray: true,
  withBoxedValues: false,
  withBigInt: false,
  withMap: false,
  withSet: false,
  withTypedArray: false,
});

/** A document shaped like a checkpoint: a few fields and a long plan. */
function document(steps: number): Record<string, unknown> {
  return {
    task_id: 't',
    plan: Array.from({ length: steps }, (_, i) => ({ id: `s${i}`, name: `step ${i} «ü»`, status: 'pending', attempts: 0 })),
    run: { tokens_in: 0, llm_calls: Array.from({ length: 40 }, (_, i) => ({ n: i })) },
  };
}

const change = fc.oneof(
  fc.record({ kind: fc.constant('status' as const), i: fc.nat(), value: fc.constantFrom('done', 'running', 'fa"iled\n', '日本') }),
  fc.record({ kind: fc.constant('push' as const), value: json }),
  fc.record({ kind: fc.constant('pop' as const) }),
  fc.record({ kind: fc.constant('run' as const), value: json }),
  fc.record({ kind: fc.constant('call' as const), i: fc.nat(), value: json }),
);

type Change = typeof change extends fc.Arbitrary<infer T> ? T : never;

function opsFor(doc: Record<string, unknown>, c: Change): DiffOp[] {
  const plan = doc.plan as unknown[];
  const calls = (doc.run as { llm_calls: unknown[] }).llm_calls;
  switch (c.kind) {
    case 'status':
      return plan.length ? [{ op: 'replace', path: ['plan', c.i % plan.length, 'status'], value: c.value }] : [];
    case 'push':
      return [{ op: 'add', path: ['plan', plan.length], value: { id: 'new', extra: c.value } }];
    case 'pop':
      return plan.length ? [{ op: 'remove', path: ['plan', plan.length - 1] }] : [];
    case 'run':
      return [{ op: 'replace', path: ['run', 'tokens_in'], value: c.value }];
    case 'call':
      return calls.length ? [{ op: 'replace', path: ['run', 'llm_calls', c.i % calls.length], value: c.value }] : [];
  }
}

describe('encodeJson', () => {
  it('gives the bytes of JSON.stringify for any sealed JSON value', () => {
    fc.assert(
      fc.property(json, (v) => {
        const sealed = sealJson(structuredClone(v));
        expect(encodeJson(sealed).toString('utf8')).toBe(JSON.stringify(v));
        // Twice: the second time from remembered encodings.
        expect(encodeJson(sealed).toString('utf8')).toBe(JSON.stringify(v));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the bytes of JSON.stringify for values it does not own, sealed or not', () => {
    fc.assert(
      fc.property(loose, (v) => {
        const text = JSON.stringify(v) as string | undefined;
        if (text === undefined) expect(() => encodeJson(v)).toThrow(TypeError);
        else expect(encodeJson(v).toString('utf8')).toBe(text);
        // Made plain and sealed, the value encodes as JSON wrote it.
        if (text !== undefined) expect(encodeJson(sealJson(toPlainJson(v))).toString('utf8')).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('stays exact across versions that share their unchanged parts, long arrays spliced', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 80 }), fc.array(change, { minLength: 1, maxLength: 25 }), (steps, changes) => {
        const arena = new EncodeArena();
        let doc = sealJson(document(steps));
        const versions = [doc];
        expect(encodeJson(doc, arena).toString('utf8')).toBe(JSON.stringify(doc));
        for (const c of changes) {
          const next = sealJson(applyDiff(doc, opsFor(doc, c)) as Record<string, unknown>, doc);
          expect(encodeJson(next, arena).toString('utf8')).toBe(JSON.stringify(next));
          versions.push(next);
          doc = next;
        }
        // Older versions still encode exactly, though the arena's buffers were reused under them.
        for (const v of versions) expect(encodeJson(v).toString('utf8')).toBe(JSON.stringify(v));
      }),
      { numRuns: 200 },
    );
  });

  it('stays exact, and diffs to what was changed, across versions of plans long enough to be walked from copies', () => {
    fc.assert(
      fc.property(fc.integer({ min: 500, max: 700 }), fc.array(change, { minLength: 1, maxLength: 12 }), (steps, changes) => {
        const arena = new EncodeArena();
        let doc = sealJson(document(steps));
        encodeJson(doc, arena);
        for (const c of changes) {
          const next = sealJson(applyDiff(doc, opsFor(doc, c)) as Record<string, unknown>, doc);
          expect(encodeJson(next, arena).toString('utf8')).toBe(JSON.stringify(next));
          expect(applyDiff(doc, computeDiff(doc, next))).toEqual(next);
          doc = next;
        }
      }),
      { numRuns: 40 },
    );
  });

  it('encodes a 10,000-step plan with one step changed to the same bytes as JSON.stringify', () => {
    const arena = new EncodeArena();
    const doc = sealJson(document(10_000));
    encodeJson(doc, arena);
    const next = sealJson(
      applyDiff(doc, [{ op: 'replace', path: ['plan', 5000, 'status'], value: 'done' }]) as Record<string, unknown>,
      doc,
    );
    expect(encodeJson(next, arena).equals(Buffer.from(JSON.stringify(next)))).toBe(true);
  });
});

describe('sealJson', () => {
  it('freezes the whole tree, so a change in place throws', () => {
    const doc = sealJson({ a: { b: [1, { c: 2 }] } });
    expect(isSealed(doc) && isSealed(doc.a) && isSealed(doc.a.b) && isSealed(doc.a.b[1])).toBe(true);
    expect(() => {
      (doc.a.b[1] as { c: number }).c = 3;
    }).toThrow(TypeError);
    expect(() => (doc.a.b as unknown[]).push(3)).toThrow(TypeError);
  });

  it('seals the new parts of a version built from a sealed one, and leaves the shared parts as they are', () => {
    const base = sealJson({ keep: { x: 1 }, list: [{ y: 1 }] });
    const next = sealJson({ ...base, list: [...base.list, { y: 2 }] }, base);
    expect(next.keep).toBe(base.keep);
    expect(Object.isFrozen(next.list) && Object.isFrozen(next.list[1])).toBe(true);
  });

  it('does not trust an object someone else froze: it is walked and sealed like any other', () => {
    const inner = { n: 1 };
    const outer = Object.freeze({ inner });
    expect(isSealed(outer)).toBe(false);
    sealJson(outer);
    expect(isSealed(outer) && Object.isFrozen(inner)).toBe(true);
  });
});

describe('isPlainJson', () => {
  it('accepts what survives a JSON round trip unchanged and refuses the rest', () => {
    expect(isPlainJson({ a: [1, 'x', null, true], b: undefined })).toBe(true);
    expect(isPlainJson({ when: new Date(0) })).toBe(false);
    expect(isPlainJson([1, undefined])).toBe(false);
    expect(isPlainJson({ n: Number.NaN })).toBe(false);
    expect(isPlainJson({ toJSON: () => 1 })).toBe(false);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(isPlainJson(cyclic)).toBe(false);
    expect(() => toPlainJson(cyclic)).toThrow(TypeError);
  });
});

describe('EncodeArena', () => {
  it('encodes a part that the document before last held, and the last did not, from bytes it does not overwrite', () => {
    const arena = new EncodeArena();
    const big = (tag: string) => Array.from({ length: 2000 }, (_, i) => ({ i, tag, text: 'x'.repeat(40) }));
    const kept = sealJson({ list: big('kept') });
    const docs = [
      sealJson({ a: kept, b: big('one') }),
      sealJson({ b: big('two'), c: big('three') }),
      // No larger than the first, so the arena reuses its buffer: the new list is written over where `kept` was.
      sealJson({ c: big('four').slice(0, 1500), a: kept }),
    ];
    for (const doc of docs) expect(encodeJson(doc, arena).toString('utf8')).toBe(JSON.stringify(doc));
  });
});
