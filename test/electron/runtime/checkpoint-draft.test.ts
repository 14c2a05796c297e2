/** A draft copies what a save changes in place and shares the rest with the frozen version it was made from. */
import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { detached, draftOf, freezeDraft, own, ownWhere } from '../../../electron/runtime/checkpoint-draft.js';

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
