import { describe, expect, it } from 'vitest';
import { Checkpoint, CURRENT_SCHEMA_VERSION } from '../../../shared/checkpoint/schema.js';
import { migrateForward } from '../../../shared/checkpoint/migrate.js';

const v1 = {
  schema_version: 1,
  task_id: 't',
  task_name: 't',
  version: 4,
  phase: 'p',
  goal: 'g',
  mode: 'confirm',
  pending_approval: { id: 'a1', requested_at: '2026-01-01T00:00:00Z', plan: { rerun_step: 's2' } },
  plan: [
    { id: 's1', name: 'one', status: 'done' },
    { id: 's2', name: 'two', status: 'running' },
  ],
  current_step: 1,
  total_steps: 2,
  run: { created_at: 'a', updated_at: 'b' },
  source: { kind: 'runtime' },
  unknown_field: { kept: true },
};

describe('migrateForward', () => {
  it('brings a schema 1 file to the current schema: recovery grouped, status derived, unknown fields kept', () => {
    const r = migrateForward(v1);
    if (!r.ok) throw new Error(r.message);
    expect(r.from).toBe(1);
    const cp = Checkpoint.parse(r.doc);
    expect(cp.schema_version).toBe(CURRENT_SCHEMA_VERSION);
    expect(cp.status).toBe('waiting_approval');
    expect(cp.recovery.mode).toBe('confirm');
    expect(cp.recovery.pending_approval?.plan.rerun_step).toBe('s2');
    expect((cp as Record<string, unknown>).unknown_field).toEqual({ kept: true });
    expect('mode' in r.doc).toBe(false);
  });

  it('derives done and failed statuses without a pending approval', () => {
    const { pending_approval: _p, ...noApproval } = v1;
    const done = migrateForward({ ...noApproval, plan: [{ id: 's1', name: 'x', status: 'done' }] });
    const failed = migrateForward({ ...noApproval, plan: [{ id: 's1', name: 'x', status: 'failed' }] });
    expect(done.ok && done.doc.status).toBe('done');
    expect(failed.ok && failed.doc.status).toBe('failed');
  });

  it('does not mutate its input', () => {
    const copy = structuredClone(v1);
    migrateForward(copy);
    expect(copy).toEqual(v1);
  });

  it('refuses future and malformed schema versions', () => {
    const future = migrateForward({ ...v1, schema_version: CURRENT_SCHEMA_VERSION + 1 });
    expect(future).toMatchObject({ ok: false, reason: 'future-schema' });
    expect(migrateForward({ ...v1, schema_version: 'one' })).toMatchObject({ ok: false, reason: 'schema' });
    expect(migrateForward({ ...v1, schema_version: 0 })).toMatchObject({ ok: false, reason: 'schema' });
  });
});
