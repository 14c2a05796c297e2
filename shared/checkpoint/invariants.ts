/**
 * Self-consistency checks on a checkpoint that parsed: the schema says each field
 * has the right shape, these say the fields agree with each other.
 *
 * A checkpoint that fails them is still shown (readers never hide a task), but
 * resuming from it would act on a contradiction, so each failure is a Problem
 * with reason `invariant` naming the fields involved.
 */
import type { StepStatus } from './schema.js';
import type { CheckpointHead } from './checkpoint-head.js';
import { problem, type Problem } from './problem.js';
import { parseTimestamp } from './timestamp.js';
import { changedSince } from '../diff/array-lineage.js';
import { walkable } from '../diff/frozen-arrays.js';

const FINISHED: ReadonlySet<StepStatus> = new Set<StepStatus>(['done', 'skipped']);

/**
 * The step index a resume starts from: the number of leading steps that are done or skipped.
 *
 * This is the first article's meaning of `current_step` ("the number of steps
 * completed; resume at that index"), made precise for plans where a later step
 * finished out of order: such a step does not move the resume point past an
 * earlier unfinished one.
 */
export function expectedCurrentStep(plan: readonly { status: StepStatus }[]): number {
  // The runtime asks this at every save; late in a long plan it walks thousands of finished steps (walkable).
  const steps = walkable(plan);
  let i = 0;
  while (i < steps.length && FINISHED.has(steps[i].status)) i++;
  return i;
}

/**
 * {@link expectedCurrentStep} of `plan`, knowing it is `known.current` for
 * `known.plan`: when `plan` is a recorded copy of that plan
 * (array-lineage.ts), only its changed steps and the steps from the known
 * answer on are read, so a save late in a long plan does not walk the
 * thousands of finished steps before it. Any other plan is walked whole.
 */
export function expectedCurrentStepSince(
  plan: readonly { status: StepStatus }[],
  known: { plan: readonly { status: StepStatus }[]; current: number },
): number {
  const changed = changedSince(plan, known.plan);
  if (changed === null) return expectedCurrentStep(plan);
  // Below the known answer every step was finished, and still is unless it changed.
  let i = Math.min(known.current, plan.length);
  for (const c of changed) {
    if (c >= i) break;
    if (!FINISHED.has(plan[c].status)) return c;
  }
  while (i < plan.length && FINISHED.has(plan[i].status)) i++;
  return i;
}

/** Duplicate values in order of first repetition. */
function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const v of values) (seen.has(v) ? dup : seen).add(v);
  return [...dup];
}

function isTimestamp(value: string): boolean {
  return !Number.isNaN(parseTimestamp(value));
}

/**
 * Check that a checkpoint agrees with itself.
 *
 * Checked: `total_steps` equals the plan length; `current_step` equals
 * {@link expectedCurrentStep}; step ids, side-effect ids and idempotency keys are
 * unique; `step_id` references (artifacts, side effects, errors, the pending
 * resume plan) name existing steps or effects; the task status agrees with the
 * plan (done ⇒ every step done or skipped; waiting_approval ⇔ a pending approval;
 * failed ⇒ a failed step or a recorded error); timestamps parse and do not run
 * backwards (created ≤ updated, a step's start ≤ its finish); the history count
 * and head agree.
 *
 * @param file the checkpoint's path relative to the directory root, for the problems' `file`.
 * @param opts.legacy the checkpoint was converted in memory from an article-format
 *   file, whose message history is held inline rather than in blobs, so the
 *   history head is expected to be null.
 */
export function checkInvariants(cp: CheckpointHead, file = 'checkpoint.json', opts: { legacy?: boolean } = {}): Problem[] {
  const out: Problem[] = [];
  const fail = (message: string) => out.push(problem(file, 'invariant', message));
  const plan = cp.plan ?? [];
  const effects = cp.side_effects ?? [];

  if (cp.total_steps !== plan.length) {
    fail(`total_steps is ${cp.total_steps} but the plan has ${plan.length} steps`);
  }
  const expected = expectedCurrentStep(plan);
  if (cp.current_step !== expected) {
    fail(
      `current_step is ${cp.current_step} but ${expected} leading plan steps are done or skipped; ` +
        `a resume would start at step ${expected}`,
    );
  }

  const stepIds = new Set(plan.map((s) => s.id));
  for (const id of duplicates(plan.map((s) => s.id))) fail(`plan step id "${id}" is used more than once`);
  for (const id of duplicates(effects.map((e) => e.id))) fail(`side effect id "${id}" is used more than once`);
  for (const key of duplicates(effects.map((e) => e.idempotency_key))) {
    fail(`idempotency key "${key}" is used by more than one side effect, so a retry of one could be mistaken for the other`);
  }

  for (const a of cp.artifacts ?? []) {
    if (a.step_id !== undefined && !stepIds.has(a.step_id)) fail(`artifact ${a.path} names step "${a.step_id}", which is not in the plan`);
  }
  for (const e of effects) {
    if (e.step_id !== undefined && !stepIds.has(e.step_id)) fail(`side effect ${e.id} names step "${e.step_id}", which is not in the plan`);
  }
  for (const err of cp.errors ?? []) {
    if (err.step_id != null && !stepIds.has(err.step_id))
      fail(`recorded error "${err.what}" names step "${err.step_id}", which is not in the plan`);
  }

  const pending = cp.recovery?.pending_approval ?? null;
  switch (cp.status) {
    case 'done': {
      const open = plan.filter((s) => !FINISHED.has(s.status));
      if (open.length > 0)
        fail(`status is done but ${open.length} plan step(s) are not done or skipped: ${open.map((s) => s.id).join(', ')}`);
      break;
    }
    case 'waiting_approval':
      if (pending === null) fail('status is waiting_approval but recovery.pending_approval is empty: there is nothing to approve');
      break;
    case 'failed':
      if (!plan.some((s) => s.status === 'failed') && (cp.errors ?? []).length === 0) {
        fail('status is failed but no plan step failed and no error is recorded');
      }
      break;
  }
  if (pending !== null && cp.status !== 'waiting_approval') {
    fail(`recovery.pending_approval ${pending.id} is set but status is ${cp.status}, not waiting_approval`);
  }
  if (pending !== null) {
    const effectIds = new Set(effects.map((e) => e.id));
    const rp = pending.plan;
    if (rp.rerun_step != null && !stepIds.has(rp.rerun_step))
      fail(`the pending resume plan reruns step "${rp.rerun_step}", which is not in the plan`);
    for (const id of [...(rp.probe_effects ?? []), ...(rp.retry_effects ?? [])]) {
      if (!effectIds.has(id)) fail(`the pending resume plan names side effect "${id}", which is not recorded`);
    }
    if (!isTimestamp(pending.requested_at)) fail(`recovery.pending_approval.requested_at "${pending.requested_at}" is not a timestamp`);
  }

  const run = cp.run;
  if (run) {
    const createdOk = isTimestamp(run.created_at);
    const updatedOk = isTimestamp(run.updated_at);
    if (!createdOk) fail(`run.created_at "${run.created_at}" is not a timestamp`);
    if (!updatedOk) fail(`run.updated_at "${run.updated_at}" is not a timestamp`);
    if (createdOk && updatedOk && parseTimestamp(run.updated_at) < parseTimestamp(run.created_at)) {
      fail(`run.updated_at ${run.updated_at} is before run.created_at ${run.created_at}`);
    }
  }
  for (const s of plan) {
    const started = s.started_at ?? null;
    const finished = s.finished_at ?? null;
    // Each timestamp parsed once: a listing runs this over every step of every task.
    const startedAt = started === null ? NaN : parseTimestamp(started);
    const finishedAt = finished === null ? NaN : parseTimestamp(finished);
    if (started !== null && Number.isNaN(startedAt)) fail(`step ${s.id}: started_at "${started}" is not a timestamp`);
    if (finished !== null && Number.isNaN(finishedAt)) fail(`step ${s.id}: finished_at "${finished}" is not a timestamp`);
    if (finishedAt < startedAt) fail(`step ${s.id} finished (${finished}) before it started (${started})`);
  }

  const history = cp.history;
  if (history && !opts.legacy) {
    if (history.count > 0 && history.head === null)
      fail(`history.count is ${history.count} but history.head is null: the messages cannot be found`);
    if (history.count === 0 && history.head !== null) fail('history.head points at a chunk but history.count is 0');
  }
  return out;
}
