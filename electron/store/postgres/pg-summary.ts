/**
 * The task row's `summary`: what a listing reads of the newest version (the
 * fields of CheckpointHead, and nothing else), written by the transaction
 * that commits the version, so a listing of 10,000 tasks reads one small
 * column a task in one query: no per-task query, no whole checkpoint parsed,
 * no deltas applied to a head that lags.
 *
 * A long task's summary would be as long as its plan, and rewriting that at
 * every save is the cost `head` was taken off the save path for: past
 * SUMMARY_MAX_ITEMS list items or SUMMARY_MAX_BYTES the column is left NULL,
 * and the listing reads that task from its head and the deltas after it, as
 * before.
 */
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import type { CheckpointHead } from '../../../shared/checkpoint/checkpoint-head.js';

/** Plan steps, artifacts, side effects and errors together: past this many the summary is not kept. */
export const SUMMARY_MAX_ITEMS = 1_000;
/**
 * The largest summary kept, in UTF-16 code units of its JSON (a bound, not an
 * exact byte count). The row's summary is rewritten whole by every save, sent,
 * compressed and logged by the server: kept up to 64 KiB, it made an early save
 * of a 1,000-step task (about 60 KiB of summary) 1.7x one of a 100-step task,
 * and past this size a listing reads the task from its head instead.
 */
export const SUMMARY_MAX_BYTES = 16 * 1024;

type PlanStep = Checkpoint['plan'][number];

/**
 * The summary text of each plan step, by the step object. A save's
 * checkpoint shares every step it did not change with the version before, as
 * the same sealed (frozen) object (version-build.ts), so a save encodes only
 * the steps it changed: encoding the whole plan at every save cost more than
 * the rest of the save's own work at a thousand steps.
 */
const stepTexts = new WeakMap<PlanStep, string>();

function stepText(s: PlanStep): string {
  let text = stepTexts.get(s);
  if (text === undefined) {
    text = JSON.stringify({
      id: s.id,
      name: s.name,
      status: s.status,
      ...(s.started_at !== undefined ? { started_at: s.started_at } : {}),
      ...(s.finished_at !== undefined ? { finished_at: s.finished_at } : {}),
      // The overview's slowest steps read it where a writer recorded it (directory-overview.ts).
      ...(s.elapsed_ms !== undefined ? { elapsed_ms: s.elapsed_ms } : {}),
    });
    // Only a frozen step is kept: one that can still change would be summarized as it was.
    if (Object.isFrozen(s)) stepTexts.set(s, text);
  }
  return text;
}

/** Where the plan goes in the summary's text: no string value can hold these bytes, since JSON escapes its quotes. */
const PLAN_SLOT = ',"plan":[]';

/** The listing's fields of `cp`, as JSON; null when the task is too long to keep them in its row. */
export function summaryOf(cp: Checkpoint): string | null {
  const items = cp.plan.length + cp.artifacts.length + cp.side_effects.length + cp.errors.length;
  if (items > SUMMARY_MAX_ITEMS) return null;
  const head: CheckpointHead = {
    schema_version: cp.schema_version,
    task_id: cp.task_id,
    task_name: cp.task_name,
    version: cp.version,
    status: cp.status,
    phase: cp.phase,
    goal: cp.goal,
    plan: [],
    current_step: cp.current_step,
    total_steps: cp.total_steps,
    artifacts: cp.artifacts.map((a) => ({
      type: a.type,
      path: a.path,
      sha256: a.sha256,
      size: a.size,
      ...(a.status !== undefined ? { status: a.status } : {}),
      ...(a.step_id !== undefined ? { step_id: a.step_id } : {}),
    })),
    side_effects: cp.side_effects.map((e) => ({
      id: e.id,
      type: e.type,
      status: e.status,
      idempotency_key: e.idempotency_key,
      ...(e.step_id !== undefined ? { step_id: e.step_id } : {}),
    })),
    recovery: {
      mode: cp.recovery.mode,
      ...(cp.recovery.pending_approval !== undefined ? { pending_approval: cp.recovery.pending_approval } : {}),
      ...(cp.recovery.auto_attempts !== undefined ? { auto_attempts: cp.recovery.auto_attempts } : {}),
    },
    errors: cp.errors.map((e) => ({ at: e.at, what: e.what, ...(e.step_id !== undefined ? { step_id: e.step_id } : {}) })),
    // The run's totals too, so the inspector's overview sums a database's tasks from their rows, as it sums a
    // directory's from the listing, instead of reading each task whole (directory-overview.ts).
    run: {
      created_at: cp.run.created_at,
      updated_at: cp.run.updated_at,
      tokens_in: cp.run.tokens_in,
      tokens_out: cp.run.tokens_out,
      cost_usd: cp.run.cost_usd,
    },
    source: { kind: cp.source.kind },
    history: { count: cp.history.count, head: cp.history.head },
    ...(cp.agent
      ? { agent: { name: cp.agent.name, ...(cp.agent.project_root !== undefined ? { project_root: cp.agent.project_root } : {}) } }
      : cp.agent === null
        ? { agent: null }
        : {}),
    ...(cp.forked_from ? { forked_from: { task_id: cp.forked_from.task_id, version: cp.forked_from.version } } : {}),
  };
  const rest = JSON.stringify(head);
  let plan = '';
  for (let i = 0; i < cp.plan.length; i++) {
    plan += (i > 0 ? ',' : '') + stepText(cp.plan[i]);
    // Past the bound no summary is kept: the steps after are not encoded at all, at every save of a long task.
    if (rest.length + plan.length > SUMMARY_MAX_BYTES) return null;
  }
  const slot = rest.indexOf(PLAN_SLOT) + PLAN_SLOT.length - 1;
  return `${rest.slice(0, slot)}${plan}${rest.slice(slot)}`;
}
