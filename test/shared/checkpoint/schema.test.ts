import { describe, expect, it } from 'vitest';
import { Checkpoint, CURRENT_SCHEMA_VERSION } from '../../../shared/checkpoint/schema.js';

const minimal = {
  schema_version: CURRENT_SCHEMA_VERSION,
  task_id: 't1',
  task_name: 'demo',
  version: 1,
  status: 'running',
  phase: 'plan',
  goal: 'g',
  plan: [{ id: 'p1', name: 'one', status: 'pending' }],
  current_step: 0,
  total_steps: 1,
  recovery: { mode: 'manual' },
  run: { created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' },
  source: { kind: 'runtime' },
};

describe('Checkpoint schema', () => {
  it('fills defaults for optional collections', () => {
    const cp = Checkpoint.parse(minimal);
    expect(cp.artifacts).toEqual([]);
    expect(cp.side_effects).toEqual([]);
    expect(cp.history).toEqual({ count: 0, head: null });
    expect(cp.plan[0].attempts).toBe(0);
  });

  it('keeps unknown fields at every level', () => {
    const doc = {
      ...minimal,
      x_vendor: { a: 1 },
      plan: [{ ...minimal.plan[0], x_step_note: 'kept' }],
      run: { ...minimal.run, x_gpu: 'h100' },
    };
    const cp = Checkpoint.parse(doc) as Record<string, unknown> & Checkpoint;
    expect(cp.x_vendor).toEqual({ a: 1 });
    expect((cp.plan[0] as Record<string, unknown>).x_step_note).toBe('kept');
    expect((cp.run as Record<string, unknown>).x_gpu).toBe('h100');
  });

  it('rejects a step status outside the state machine', () => {
    const result = Checkpoint.safeParse({ ...minimal, plan: [{ id: 'p1', name: 'one', status: 'paused' }] });
    expect(result.success).toBe(false);
  });
});
