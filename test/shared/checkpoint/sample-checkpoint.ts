/**
 * A consistent checkpoint to start tests from: three steps, the first done,
 * the second running, one artifact and one side effect.
 */
import { Checkpoint, CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../../shared/checkpoint/schema.js';

export const HEX_A = 'a'.repeat(64);
export const HEX_B = 'b'.repeat(64);

export function sampleCheckpoint(overrides: Partial<CheckpointInput> = {}): Checkpoint {
  const base: CheckpointInput = {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: 'task-1',
    task_name: 'Write the report',
    version: 1,
    status: 'running',
    phase: 'drafting',
    goal: 'Produce a reviewed report',
    plan: [
      { id: 's1', name: 'outline', status: 'done', started_at: '2026-01-10T10:00:00Z', finished_at: '2026-01-10T10:01:00Z' },
      { id: 's2', name: 'draft', status: 'running', started_at: '2026-01-10T10:01:00Z' },
      { id: 's3', name: 'publish', status: 'pending' },
    ],
    current_step: 1,
    total_steps: 3,
    artifacts: [{ type: 'file', path: 'out/outline.md', sha256: HEX_A, size: 12, step_id: 's1' }],
    side_effects: [{ id: 'e1', type: 'http_post', status: 'done', idempotency_key: 'task-1-e1', step_id: 's1' }],
    resume_hint: 'continue with the draft',
    recovery: { mode: 'manual', pending_approval: null },
    errors: [],
    run: {
      created_at: '2026-01-10T10:00:00Z',
      updated_at: '2026-01-10T10:01:00Z',
      model: 'gpt-test',
      tokens_in: 100,
      tokens_out: 50,
      cost_usd: 0.01,
      elapsed_ms: 60_000,
    },
    source: { kind: 'runtime' },
    history: { count: 0, head: null },
    agent: { name: 'report-writer' },
  };
  return Checkpoint.parse({ ...base, ...overrides });
}
