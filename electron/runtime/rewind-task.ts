/**
 * Rerunning a task from a step: a new version that sets the step and every
 * later one back to pending. Their earlier results stay in the history (a
 * version once written never changes); the artifacts they recorded stay
 * listed until the rerun writes them again.
 *
 * The ledger rule: an effect recorded by a rewound step is kept as done, its
 * idempotency key still held, so the rerun does not repeat it. A person may
 * choose, effect by effect, to perform one again: that repeat is a new ledger
 * entry under a new key (`asked_key` keeps the key the agent asks with), and
 * the old entry stays as it was, marked superseded.
 */
import type { Checkpoint, SideEffect } from '../../shared/checkpoint/schema.js';
import type { RewindEffect, RewindPlan } from '../../shared/checkpoint/rewind-plan.js';
import { defaultActor, OperationError, withTaskEngine, type OperationEnv } from './task-operations.js';
import type { EngineOutcome } from './task-engine.js';
import { own, ownWhere } from './checkpoint-draft.js';
import { continuation, hintText } from './continue-hint.js';
import { rerunPhase } from './task-phase.js';

export type { RewindEffect, RewindPlan };

function stepIndexOf(cp: Checkpoint, ref: string): number {
  const byId = cp.plan.findIndex((s) => s.id === ref);
  return byId >= 0 ? byId : cp.plan.findIndex((s) => s.name === ref);
}

/**
 * The plan of a rewind of `cp` to step `stepRef`, with `redo` the ids of the
 * effects to perform again; refused, with the reason, when it cannot be done.
 */
export function planRewind(cp: Checkpoint, stepRef: string, redo: readonly string[] = []): RewindPlan {
  if (cp.status === 'halted') {
    throw new OperationError(
      'halted',
      `task ${cp.task_id} is halted (its resume plan was rejected); a rewind would put it back in motion. Fork it to try again. Nothing was written.`,
    );
  }
  const index = stepIndexOf(cp, stepRef);
  if (index < 0) {
    throw new OperationError(
      'unknown-step',
      `task ${cp.task_id} has no step "${stepRef}"; its steps are: ${cp.plan.map((s) => s.id).join(', ')}. Nothing was written.`,
    );
  }
  const rerun = cp.plan.slice(index);
  if (rerun.every((s) => s.status === 'pending')) {
    throw new OperationError(
      'invalid',
      `step ${cp.plan[index].id} of task ${cp.task_id} has not run yet, nor has any step after it: there is nothing to rerun. Nothing was written.`,
    );
  }
  const rewound = new Set(rerun.map((s) => s.id));
  const effects = cp.side_effects.filter((e) => !e.superseded_by && e.step_id !== undefined && rewound.has(e.step_id));
  const byId = new Map(effects.map((e) => [e.id, e]));
  for (const id of redo) {
    const e = byId.get(id);
    if (!e) {
      const elsewhere = cp.side_effects.find((x) => x.id === id);
      throw new OperationError(
        'invalid',
        elsewhere
          ? `effect ${id} was recorded by step ${elsewhere.step_id ?? '(none)'}, which this rewind does not rerun${elsewhere.superseded_by ? ` (and it was already replaced by ${elsewhere.superseded_by})` : ''}; nothing was written`
          : `task ${cp.task_id} has no side effect ${id}; the effects of the rewound steps are: ${effects.map((x) => x.id).join(', ') || 'none'}. Nothing was written.`,
      );
    }
    if (e.status !== 'done') {
      throw new OperationError(
        'invalid',
        `effect ${id} is ${e.status}, not done: only a done effect can be chosen to perform again (an uncertain one is probed on resume). Nothing was written.`,
      );
    }
  }
  return {
    task_id: cp.task_id,
    version: cp.version,
    step_id: cp.plan[index].id,
    rerun: rerun.map((s) => ({ id: s.id, name: s.name, status: s.status })),
    artifacts: cp.artifacts.filter((a) => a.step_id !== undefined && rewound.has(a.step_id)).map((a) => a.path),
    effects: effects.map((e) => ({
      id: e.id,
      type: e.type,
      idempotency_key: e.idempotency_key,
      step_id: e.step_id!,
      status: e.status,
      choice: redo.includes(e.id) ? 'redo' : 'keep',
    })),
  };
}

/** The new key of a repeat: the asked key with the repeat's number, unique in the ledger. */
function redoKey(cp: Checkpoint, asked: string): string {
  const keys = new Set(cp.side_effects.map((e) => e.idempotency_key));
  const base = asked.replace(/-redo\d+$/, '');
  for (let n = 2; ; n++) {
    const key = `${base}-redo${n}`;
    if (!keys.has(key)) return key;
  }
}

/** The plan in a few lines, for the CLI and the preview. */
export function describeRewind(plan: RewindPlan): string[] {
  const lines = [`rerun from ${plan.step_id}: ${plan.rerun.map((s) => `${s.id} (${s.name}, ${s.status})`).join(', ')}`];
  // Recorded, not necessarily where the rerun writes (a fork's steps recorded its parent's files): the rerun records what it writes.
  if (plan.artifacts.length) lines.push(`artifacts these steps recorded, replaced by what the rerun writes: ${plan.artifacts.join(', ')}`);
  for (const e of plan.effects) {
    lines.push(
      e.choice === 'keep'
        ? `keep ${e.id} ${e.type} (key ${e.idempotency_key}, ${e.status}): not performed again`
        : `redo ${e.id} ${e.type}: performed again under a new key (was ${e.idempotency_key})`,
    );
  }
  return lines;
}

export interface RewindRequest {
  redo?: string[];
  actor?: string;
  reason?: string;
  /** Refused (`moved`) when the task is no longer at the version the plan was shown for. */
  expectedVersion?: number;
}

/**
 * Rewind task `taskId` to step `stepRef` under its lease: refused with
 * `busy` while another runner holds it, and with nothing written on any
 * refusal. The task then waits for a person's resume (`waiting_human`, in the
 * phase it was in when the first rerun step started: task-phase.ts), which in
 * confirm mode prepares a resume plan for approval like any other.
 */
export async function rewindTask(env: OperationEnv, taskId: string, stepRef: string, req: RewindRequest = {}): Promise<EngineOutcome> {
  const actor = req.actor ?? defaultActor(env);
  const check = (cp: Checkpoint): RewindPlan => {
    // A plan shown for an older version may not be what the rewind would do now: the person looks again.
    if (req.expectedVersion !== undefined && cp.version !== req.expectedVersion) {
      throw new OperationError(
        'moved',
        `task ${taskId} moved on to version ${cp.version} since version ${req.expectedVersion} was shown; look at the new plan and rewind again. Nothing was written.`,
      );
    }
    return planRewind(cp, stepRef, req.redo ?? []);
  };
  // Checked before the lease is taken too, so bad input leaves not even a lease entry behind.
  return withTaskEngine(
    env,
    taskId,
    'rewind',
    async (engine, cp) => {
      const plan = check(cp);
      const redo = plan.effects.filter((e) => e.choice === 'redo').map((e) => e.id);
      const rerun = new Set(plan.rerun.map((s) => s.id));
      const at = new Date().toISOString();
      const goOn = await continuation(env.root, cp);
      const phase = await rerunPhase(env.store, cp, stepIndexOf(cp, plan.step_id));
      await engine.save(
        (d) => {
          for (const [i, step] of d.plan.entries()) {
            if (!rerun.has(step.id) || step.status === 'pending') continue;
            const s = own(d.plan, i);
            Object.assign(s, {
              status: 'pending',
              result_ref: null,
              error: null,
              started_at: null,
              finished_at: null,
              reruns: (s.reruns ?? 0) + 1,
            });
            delete (s as { result?: unknown }).result;
          }
          for (const id of redo) {
            const old = ownWhere(d.side_effects, (e) => e.id === id)!;
            const repeat: SideEffect = {
              id: `effect-${d.side_effects.length + 1}`,
              type: old.type,
              status: 'not_started',
              idempotency_key: redoKey(d, old.asked_key ?? old.idempotency_key),
              asked_key: old.asked_key ?? old.idempotency_key,
              step_id: old.step_id,
              attempts: 0,
              updated_at: at,
            };
            old.superseded_by = repeat.id;
            d.side_effects.push(repeat);
          }
          d.recovery.pending_approval = null;
          d.recovery.stopped = null;
          // Waiting for the person's resume, not interrupted: no host resumes it by itself, whatever its mode.
          d.status = 'waiting_human';
          d.phase = phase;
          d.resume_hint =
            `rewound to ${plan.step_id} by ${actor}${req.reason ? ` (${req.reason})` : ''}: resume reruns ${plan.rerun.length} step(s)` +
            `${redo.length ? ` and performs ${redo.join(', ')} again under new keys` : ''}: ${hintText(goOn)}`;
        },
        {
          source: {
            kind: 'rewind',
            actor,
            note: `rerun from ${plan.step_id}${req.reason ? `: ${req.reason}` : ''}`,
            rewind: { step_id: plan.step_id, redo },
          },
        },
      );
      await engine.event({ type: 'runner', data: { status: 'rewound', step_id: plan.step_id, redo, by: actor } });
      return engine.outcome(
        'waiting_human',
        `task ${taskId} rewound to ${plan.step_id}:\n  ${describeRewind(plan).join('\n  ')}`,
        `run it: ${goOn.text}`,
      );
    },
    check,
  );
}
