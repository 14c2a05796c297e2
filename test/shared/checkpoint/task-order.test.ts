import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newestFirst } from '../../../shared/checkpoint/task-order.js';

const row = fc.record({
  task_id: fc.stringMatching(/^[a-c]{1,3}$/),
  updated_at: fc.option(
    fc
      .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    { nil: null },
  ),
});

describe('the task list order', () => {
  it('puts the most recently updated first, then orders by task id, and never ties two ids', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 30 }), (rows) => {
        const sorted = [...rows].sort(newestFirst);
        for (let i = 1; i < sorted.length; i++) {
          const [a, b] = [sorted[i - 1], sorted[i]];
          const [at, bt] = [a.updated_at ? Date.parse(a.updated_at) : -Infinity, b.updated_at ? Date.parse(b.updated_at) : -Infinity];
          expect(at).toBeGreaterThanOrEqual(bt);
          if (at === bt) expect(a.task_id <= b.task_id).toBe(true);
          expect(newestFirst(a, b) === 0).toBe(a.task_id === b.task_id && a.updated_at === b.updated_at);
        }
      }),
    );
  });
});
