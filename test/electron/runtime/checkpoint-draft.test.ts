/** A draft copies what a save changes in place and shares the rest with the frozen version it was made from. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { changedSince } from '../../../shared/diff/array-lineage.js';
import { computeDiff } from '../../../shared/diff/json-diff.js';
import { closeDraft, detached, draftOf, freezeDraft, own, ownWhere } from '../../../electron/runtime/checkpoint-draft.js';

const saved = freezeDraft(
  structuredClone({
    task_id: 't',
    plan: [
      { id: 'a', status: 'done', error: null },
      { id: 'b', status: 'pending', error: null },
    ],
    run: { tokens_in: 1, llm_calls: [{ model: 'm' }] },
    agent: { name: 'x', options: { deep: [1] } },
  }),
) as unknown as Checkpoint;

describe('draftOf', () => {
  it('gives the top level, its lists and objects, and their lists to the draft, and nothing deeper', () => {
    const d = draftOf(saved);
    d.plan.push({ id: 'c', name: 'c', status: 'pending', attempts: 0 });
    d.run.tokens_in = 2;
    d.run.llm_calls.push({ model: 'n' } as never);
    expect(saved.plan).toHaveLength(2);
    expect(saved.run.tokens_in).toBe(1);
    expect(saved.run.llm_calls).toHaveLength(1);
    expect(d.plan[0]).toBe(saved.plan[0]);
    expect(d.agent!.options).toBe(saved.agent!.options);
    expect(() => Object.assign(d.plan[1], { status: 'done' })).toThrow(TypeError);
  });

  it('replaces an element with its own copy only through own, once', () => {
    const d = draftOf(saved);
    const b = ownWhere(d.plan, (s) => s.id === 'b')!;
    b.status = 'done';
    expect(own(d.plan, 1)).toBe(b);
    expect(saved.plan[1].status).toBe('pending');
    expect(d.plan[0]).toBe(saved.plan[0]);
    expect(ownWhere(d.plan, (s) => s.id === 'none')).toBeUndefined();
    expect(() => own(d.plan, 5)).toThrow(/no element 5/);
  });

  it('freezes what the draft made new and leaves the draft read-only', () => {
    const d = draftOf(saved);
    own(d.plan, 1).error = { message: 'm', kind: 'k', at: 'now' } as never;
    const next = freezeDraft(d);
    expect(Object.isFrozen(next.plan)).toBe(true);
    expect(Object.isFrozen(next.plan[1].error)).toBe(true);
    expect(next.plan[0]).toBe(saved.plan[0]);
  });

  it('freezes an element pushed to a list, and the lists it holds, down to their elements', () => {
    const d = draftOf(saved);
    d.run.llm_calls.push({ model: 'n', messages: [{ role: 'user', parts: ['p'] }] } as never);
    const next = freezeDraft(d);
    const pushed = next.run.llm_calls[1] as unknown as { messages: { parts: string[] }[] };
    expect(Object.isFrozen(next.run.llm_calls)).toBe(true);
    expect(Object.isFrozen(pushed)).toBe(true);
    expect(Object.isFrozen(pushed.messages)).toBe(true);
    expect(Object.isFrozen(pushed.messages[0].parts)).toBe(true);
    expect(next.run.llm_calls[0]).toBe(saved.run.llm_calls[0]);
  });
});

/** Every way a list can be written to, each applied to a draft's list. */
type Write =
  | { kind: 'own' | 'assign' | 'delete-then-assign'; at: number }
  | { kind: 'push' | 'pop' | 'shift' | 'reverse' | 'sort' }
  | { kind: 'splice'; at: number; remove: number; insert: number }
  | { kind: 'length'; at: number };

const writes = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constantFrom('own' as const, 'assign' as const, 'delete-then-assign' as const), at: fc.nat(40) }),
    fc.record({ kind: fc.constantFrom('push' as const, 'pop' as const, 'shift' as const, 'reverse' as const, 'sort' as const) }),
    fc.record({ kind: fc.constant('splice' as const), at: fc.nat(40), remove: fc.nat(3), insert: fc.nat(2) }),
    fc.record({ kind: fc.constant('length' as const), at: fc.nat(40) }),
  ),
  { maxLength: 6 },
);

let made = 0;
function apply(list: { id: string; status?: string }[], w: Write): void {
  const fresh = () => ({ id: `new-${made++}`, status: 'pending' });
  const at = 'at' in w ? w.at % Math.max(1, list.length) : 0;
  switch (w.kind) {
    case 'own':
      if (list[at] !== undefined) own(list, at).status = 'done';
      break;
    case 'assign':
      if (list.length) list[at] = fresh();
      break;
    case 'delete-then-assign':
      if (list.length) {
        delete list[at];
        list[at] = fresh();
      }
      break;
    case 'push':
      list.push(fresh());
      break;
    case 'pop':
      list.pop();
      break;
    case 'shift':
      list.shift();
      break;
    case 'reverse':
      list.reverse();
      break;
    case 'sort':
      list.sort((x, y) => (x.id < y.id ? 1 : -1));
      break;
    case 'splice':
      list.splice(at, w.remove, ...Array.from({ length: w.insert }, fresh));
      break;
    case 'length': {
      // Cut, and every other time grown back by length alone (holes, which no write fills).
      const was = list.length;
      list.length = Math.min(list.length, at);
      if (w.at % 2 === 1) list.length = was;
      break;
    }
  }
}

describe('closeDraft', () => {
  it('records every place written to a list, however it was written, so a diff through the record is the diff by comparison', () => {
    fc.assert(
      fc.property(fc.nat(12), writes, writes, (length, planWrites, callWrites) => {
        const base = freezeDraft(
          structuredClone({
            task_id: 't',
            plan: Array.from({ length }, (_, i) => ({ id: `s${i}`, status: 'pending' })),
            run: { llm_calls: Array.from({ length }, (_, i) => ({ id: `c${i}` })) },
          }),
        ) as unknown as Checkpoint;
        const d = draftOf(base);
        for (const w of planWrites) apply(d.plan as never, w);
        for (const w of callWrites) apply(d.run.llm_calls as never, w);
        const closed = closeDraft(d);
        expect(Object.isFrozen(closed.plan)).toBe(true);
        expect(changedSince(closed.plan, base.plan)).not.toBeNull();
        expect(changedSince(closed.run.llm_calls, base.run.llm_calls)).not.toBeNull();
        // The same state in lists that carry no record: compared element by element.
        const unrecorded = { ...closed, plan: [...closed.plan], run: { ...closed.run, llm_calls: [...closed.run.llm_calls] } };
        expect(computeDiff(base, closed)).toEqual(computeDiff(base, unrecorded));
      }),
    );
  });

  it('leaves a list the change replaced whole without a record, and a draft closed twice as it was', () => {
    const d = draftOf(saved);
    d.plan = d.plan.map((s) => ({ ...s, status: 'pending' }));
    const closed = closeDraft(closeDraft(d));
    expect(changedSince(closed.plan, saved.plan)).toBeNull();
    expect(computeDiff(saved, closed).map((op) => op.path.join('/'))).toEqual(['plan/0/status']);
  });

  it('freezes what was written at any place of a closed list, and shares the rest', () => {
    const d = draftOf(saved);
    d.plan[1] = { id: 'b', status: 'done', error: { message: 'm' } } as never;
    const next = freezeDraft(d);
    expect(Object.isFrozen(next.plan[1])).toBe(true);
    expect(Object.isFrozen(next.plan[1].error)).toBe(true);
    expect(next.plan[0]).toBe(saved.plan[0]);
  });
});

describe('detached', () => {
  it('copies a JSON value, and passes on what JSON cannot hold for the store to refuse', () => {
    const value = { ids: [1] };
    const copy = detached(value);
    expect(copy).toEqual(value);
    expect(copy).not.toBe(value);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(detached(cyclic)).toBe(cyclic);
    expect(detached(undefined)).toBeUndefined();
  });
});
