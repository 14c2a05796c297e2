import { describe, expect, it } from 'vitest';
import { Checkpoint, CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../../shared/checkpoint/schema.js';
import type { VerifyReport } from '../../../shared/checkpoint/verify-report.js';
import { buildResumeContext, decideResume, samePlan } from '../../../electron/runtime/resume-plan.js';

function checkpoint(over: Partial<CheckpointInput> = {}): Checkpoint {
  return Checkpoint.parse({
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: 't',
    task_name: 'demo',
    version: 3,
    status: 'failed',
    phase: 'work',
    goal: 'do things',
    plan: [
      { id: 'a', name: 'first', status: 'done', attempts: 1 },
      { id: 'b', name: 'second', status: 'failed', attempts: 1, error: { message: 'boom' } },
      { id: 'c', name: 'third', status: 'pending', attempts: 0 },
    ],
    current_step: 1,
    total_steps: 3,
    artifacts: [{ type: 'file', path: 'out/a.txt', sha256: 'a'.repeat(64), size: 3, step_id: 'a' }],
    side_effects: [],
    recovery: { mode: 'manual' },
    run: { created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:01Z' },
    source: { kind: 'runtime' },
    ...over,
  });
}

function report(cp: Checkpoint, drifted: string[] = []): VerifyReport {
  return {
    task_id: cp.task_id,
    version: cp.version,
    base_dir: '/x',
    ok: drifted.length === 0,
    drift: drifted.length > 0,
    artifacts: cp.artifacts.map((a) => ({
      path: a.path,
      type: a.type,
      resolved_path: `/x/${a.path}`,
      status: drifted.includes(a.path) ? 'modified' : 'ok',
      expected: { sha256: a.sha256, size: a.size },
      actual: null,
      message: drifted.includes(a.path) ? 'changed' : 'ok',
    })),
    uncertain_effects: [],
    invariant_problems: [],
  };
}

describe('deciding how a task resumes', () => {
  it('reruns the first unfinished step when the world matches', () => {
    const cp = checkpoint();
    const d = decideResume({ cp, report: report(cp), canProbe: () => false, rerunDrifted: false });
    expect(d.blocking).toEqual([]);
    expect(d.plan.rerun_step).toBe('b');
    expect(d.reset_from).toBeNull();
  });

  it('stops on drift unless a human agreed to rerun the producing step', () => {
    const cp = checkpoint();
    const stopped = decideResume({ cp, report: report(cp, ['out/a.txt']), canProbe: () => false, rerunDrifted: false });
    expect(stopped.blocking.join()).toMatch(/artifacts changed.*out\/a\.txt/);
    const rerun = decideResume({ cp, report: report(cp, ['out/a.txt']), canProbe: () => false, rerunDrifted: true });
    expect(rerun.blocking).toEqual([]);
    expect(rerun.plan.rerun_step).toBe('a');
    expect(rerun.reset_from).toBe(0);
    expect(rerun.plan.drift[0]).toMatch(/^out\/a\.txt: modified/);
  });

  it('always needs a human for drift on an artifact no step produced', () => {
    const cp = checkpoint({ artifacts: [{ type: 'file', path: 'loose.txt', sha256: 'b'.repeat(64), size: 1 }] });
    const d = decideResume({ cp, report: report(cp, ['loose.txt']), canProbe: () => false, rerunDrifted: true });
    expect(d.blocking.join()).toMatch(/no step produced/);
  });

  it('plans to probe uncertain effects that have a probe and stops for those that have none', () => {
    const cp = checkpoint({
      side_effects: [
        { id: 'e1', type: 'http', status: 'intent', idempotency_key: 'k1', step_id: 'b', has_probe: true },
        { id: 'e2', type: 'mail', status: 'uncertain', idempotency_key: 'k2', step_id: 'b', has_probe: false },
        { id: 'e3', type: 'http', status: 'failed', idempotency_key: 'k3', step_id: 'b', attempts: 1 },
      ],
    });
    const d = decideResume({ cp, report: report(cp), canProbe: () => false, rerunDrifted: false });
    expect(d.plan.probe_effects).toEqual(['e1']);
    expect(d.plan.retry_effects).toEqual(['e3']);
    expect(d.blocking.join()).toMatch(/e2 .*no probe.*--effect-happened k2/);
  });

  it('compares plans by what they would do', () => {
    const a = { rerun_step: 'b', probe_effects: ['e1'], retry_effects: [], drift: [] };
    expect(samePlan(a, { ...a })).toBe(true);
    expect(samePlan(a, { ...a, rerun_step: 'c' })).toBe(false);
    expect(samePlan(a, { ...a, drift: ['x'] })).toBe(false);
  });

  it('rebuilds a minimal context: goal, decisions, artifacts, next step, hint', () => {
    const cp = checkpoint({
      resume_hint: 'continue at b',
      errors: [{ at: '2026-01-01T00:00:00Z', what: 'timeout', fix: 'retried', verification: 'ok' }],
    });
    const ctx = buildResumeContext(cp);
    expect(ctx.goal).toBe('do things');
    expect(ctx.next_step).toEqual({ id: 'b', name: 'second' });
    expect(ctx.decisions).toContain('a (first): done');
    expect(ctx.decisions.some((d) => d.startsWith('recovered from "timeout"'))).toBe(true);
    expect(ctx.artifacts).toHaveLength(1);
    expect(ctx.resume_hint).toBe('continue at b');
  });
});

describe('a changed agent module', () => {
  it('is part of the resume plan, and a plan without it is a different plan', () => {
    const cp = checkpoint();
    const changed = decideResume({ cp, report: report(cp), canProbe: () => false, rerunDrifted: false, moduleChanged: true });
    const same = decideResume({ cp, report: report(cp), canProbe: () => false, rerunDrifted: false, moduleChanged: false });
    expect(changed.plan.module_changed).toBe(true);
    expect(same.plan.module_changed).toBeUndefined();
    expect(changed.blocking).toEqual([]);
    expect(samePlan(changed.plan, same.plan)).toBe(false);
    expect(samePlan(changed.plan, { ...same.plan, module_changed: true })).toBe(true);
  });
});
