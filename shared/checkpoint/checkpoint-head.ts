/**
 * What a task listing reads of a checkpoint, and a cheap check of just that.
 *
 * Validating a whole checkpoint with zod copies every object in it; across a
 * directory of 10,000 tasks that is most of the time a listing takes, for
 * fields no list row shows. A listing needs the fields of the summary, of the
 * invariant checks and of the artifact stat, so those are what the head
 * declares and what `isCheckpointHead` checks, by hand and without copying.
 * Opening a task still validates all of it (the store's getTask/readVersion).
 *
 * The check is never stricter than the schema on the fields it looks at: a
 * document it refuses fails zod too, and the store then reports zod's own
 * account of what is wrong.
 */
import {
  BLOB_REF_PATTERN,
  CURRENT_SCHEMA_VERSION,
  EffectStatus,
  RecoveryMode,
  StepStatus,
  TaskStatus,
  VersionSourceKind,
} from './schema.js';

export type PlanStepHead = {
  id: string;
  name: string;
  status: StepStatus;
  started_at?: string | null;
  finished_at?: string | null;
  elapsed_ms?: number;
};

export type ArtifactHead = {
  type: string;
  path: string;
  sha256: string;
  size: number;
  status?: string;
  step_id?: string;
};

export type SideEffectHead = {
  id: string;
  type: string;
  status: EffectStatus;
  idempotency_key: string;
  step_id?: string;
};

export type RecordedErrorHead = {
  at: string;
  step_id?: string | null;
  what: string;
};

export type PendingApprovalHead = {
  id: string;
  requested_at: string;
  plan: { rerun_step: string | null; probe_effects?: string[]; retry_effects?: string[] };
};

/**
 * The part of a checkpoint a listing reads. A full `Checkpoint` is one; a
 * head may lack the defaults zod fills in (`artifacts`, `history`, ...), so
 * readers of a head treat those as possibly absent.
 */
export type CheckpointHead = {
  schema_version: number;
  task_id: string;
  task_name: string;
  version: number;
  status: TaskStatus;
  phase: string;
  goal: string;
  plan: PlanStepHead[];
  current_step: number;
  total_steps: number;
  artifacts?: ArtifactHead[];
  side_effects?: SideEffectHead[];
  recovery: { mode: RecoveryMode; pending_approval?: PendingApprovalHead | null; auto_attempts?: number };
  errors?: RecordedErrorHead[];
  /** The totals are read by the inspector's overview where a head holds them (a database row's summary does). */
  run: { created_at: string; updated_at: string; tokens_in?: number; tokens_out?: number; cost_usd?: number };
  source: { kind: VersionSourceKind };
  history?: { count: number; head: string | null };
  agent?: { name: string; project_root?: string } | null;
  /** A fork's parent (not checked by isCheckpointHead: a summary reads it only when well formed). */
  forked_from?: { task_id?: unknown; version?: unknown } | null;
};

type Obj = Record<string, unknown>;

const TASK_STATUSES: ReadonlySet<unknown> = new Set(TaskStatus.options);
const STEP_STATUSES: ReadonlySet<unknown> = new Set(StepStatus.options);
const EFFECT_STATUSES: ReadonlySet<unknown> = new Set(EffectStatus.options);
const MODES: ReadonlySet<unknown> = new Set(RecoveryMode.options);
const SOURCE_KINDS: ReadonlySet<unknown> = new Set(VersionSourceKind.options);
const SHA256 = /^[0-9a-f]{64}$/;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const absentOr = (v: unknown, ok: (x: unknown) => boolean): boolean => v === undefined || ok(v);
const absentNullOr = (v: unknown, ok: (x: unknown) => boolean): boolean => v === undefined || v === null || ok(v);
const listOf = (v: unknown, ok: (x: unknown) => boolean): boolean => {
  if (!Array.isArray(v)) return false;
  for (const item of v) if (!ok(item)) return false;
  return true;
};

function isStep(v: unknown): boolean {
  return (
    isObj(v) &&
    isNonEmpty(v.id) &&
    isStr(v.name) &&
    STEP_STATUSES.has(v.status) &&
    absentNullOr(v.started_at, isNonEmpty) &&
    absentNullOr(v.finished_at, isNonEmpty)
  );
}

function isArtifact(v: unknown): boolean {
  return (
    isObj(v) &&
    isNonEmpty(v.type) &&
    isNonEmpty(v.path) &&
    isStr(v.sha256) &&
    SHA256.test(v.sha256) &&
    isCount(v.size) &&
    absentOr(v.status, isStr) &&
    absentOr(v.step_id, isStr)
  );
}

function isEffect(v: unknown): boolean {
  return (
    isObj(v) &&
    isNonEmpty(v.id) &&
    isNonEmpty(v.type) &&
    EFFECT_STATUSES.has(v.status) &&
    isNonEmpty(v.idempotency_key) &&
    absentOr(v.step_id, isStr)
  );
}

function isRecordedError(v: unknown): boolean {
  return isObj(v) && isNonEmpty(v.at) && isStr(v.what) && absentNullOr(v.step_id, isStr);
}

function isPendingApproval(v: unknown): boolean {
  if (!isObj(v) || !isNonEmpty(v.id) || !isNonEmpty(v.requested_at) || !isObj(v.plan)) return false;
  const plan = v.plan;
  return (
    (plan.rerun_step === null || isStr(plan.rerun_step)) &&
    absentOr(plan.probe_effects, (x) => listOf(x, isStr)) &&
    absentOr(plan.retry_effects, (x) => listOf(x, isStr))
  );
}

/**
 * True when parsed JSON (of the current schema version) has every field a
 * listing reads, each of the type the schema gives it.
 *
 * Fields no listing reads (step results, token counts, the LLM call log, ...)
 * are not looked at: a document that passes may still fail full validation
 * when the task is opened, and is reported then.
 */
export function isCheckpointHead(doc: unknown): doc is CheckpointHead {
  if (!isObj(doc)) return false;
  const { recovery, run, source, history, agent } = doc;
  return (
    doc.schema_version === CURRENT_SCHEMA_VERSION &&
    isNonEmpty(doc.task_id) &&
    isStr(doc.task_name) &&
    isCount(doc.version) &&
    (doc.version as number) > 0 &&
    TASK_STATUSES.has(doc.status) &&
    isStr(doc.phase) &&
    isStr(doc.goal) &&
    listOf(doc.plan, isStep) &&
    isCount(doc.current_step) &&
    isCount(doc.total_steps) &&
    absentOr(doc.artifacts, (x) => listOf(x, isArtifact)) &&
    absentOr(doc.side_effects, (x) => listOf(x, isEffect)) &&
    absentOr(doc.errors, (x) => listOf(x, isRecordedError)) &&
    isObj(recovery) &&
    MODES.has(recovery.mode) &&
    absentNullOr(recovery.pending_approval, isPendingApproval) &&
    absentOr(recovery.auto_attempts, isCount) &&
    isObj(run) &&
    isNonEmpty(run.created_at) &&
    isNonEmpty(run.updated_at) &&
    isObj(source) &&
    SOURCE_KINDS.has(source.kind) &&
    absentOr(history, (h) => isObj(h) && isCount(h.count) && (h.head === null || (isStr(h.head) && BLOB_REF_PATTERN.test(h.head)))) &&
    absentNullOr(agent, (a) => isObj(a) && isNonEmpty(a.name) && absentOr(a.project_root, isStr))
  );
}
