/**
 * The canonical Waystation checkpoint, declared once with zod.
 *
 * Field names follow the two source articles (task_id, current_step, plan,
 * artifacts, side_effects, resume_hint, ...). Every object is loose: fields
 * this version does not know survive a load and a save untouched, so a newer
 * writer's additions are never silently dropped.
 */
import { z } from 'zod';

/** The schema version this build writes. Older files migrate forward; newer ones are read-only. */
export const CURRENT_SCHEMA_VERSION = 3;

export const StepStatus = z.enum(['pending', 'running', 'done', 'failed', 'skipped']);
export type StepStatus = z.infer<typeof StepStatus>;

export const EffectStatus = z.enum(['not_started', 'intent', 'done', 'failed', 'uncertain']);
export type EffectStatus = z.infer<typeof EffectStatus>;

export const RecoveryMode = z.enum(['manual', 'auto', 'confirm']);
export type RecoveryMode = z.infer<typeof RecoveryMode>;

export const VersionSourceKind = z.enum(['runtime', 'human-edit', 'approval', 'import', 'fork', 'rewind', 'stop']);
export type VersionSourceKind = z.infer<typeof VersionSourceKind>;

/**
 * Where the task stands as a whole.
 *
 * `running` is what the runtime claims; whether a process still drives it is
 * decided by the lease, not by this field (see task-state.ts).
 */
export const TaskStatus = z.enum(['running', 'waiting_approval', 'waiting_human', 'failed', 'halted', 'done']);
export type TaskStatus = z.infer<typeof TaskStatus>;

/** An ISO-8601 timestamp string. Kept as a string so files round-trip byte-for-byte in meaning. */
const Timestamp = z.string().min(1);

/**
 * The form of a blob reference: `sha256:<hex>` names the file `blobs/<hex>`;
 * `sha256:<hex>@<n>` names a blob carried by version file n (docs/FORMAT.md).
 * Either way the hex is the SHA-256 of the blob's bytes, so a reader checks what it finds.
 */
export const BLOB_REF_PATTERN = /^sha256:([0-9a-f]{64})(?:@([1-9][0-9]{0,14}))?$/;

/** A reference to a content-addressed blob of the task (schema 3; schema 2 knew only `sha256:<hex>`). */
export const BlobRef = z
  .string()
  .regex(BLOB_REF_PATTERN, 'a blob reference looks like sha256:<64 hex digits>, optionally followed by @<version>');
export type BlobRef = z.infer<typeof BlobRef>;

export const StepError = z.looseObject({
  message: z.string(),
  kind: z.string().optional(),
  at: Timestamp.optional(),
});
export type StepError = z.infer<typeof StepError>;

export const PlanStep = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  status: StepStatus,
  started_at: Timestamp.nullable().optional(),
  finished_at: Timestamp.nullable().optional(),
  attempts: z.number().int().nonnegative().default(0),
  /** The step's result lives in a blob, out of the hot snapshot. */
  result_ref: BlobRef.nullable().optional(),
  /** Small results (legacy imports) may sit inline instead. */
  result: z.unknown().optional(),
  error: StepError.nullable().optional(),
  /** JSON Schema that a human edit of this step's result must satisfy. */
  output_schema: z.record(z.string(), z.unknown()).nullable().optional(),
  elapsed_ms: z.number().nonnegative().optional(),
  tokens_in: z.number().int().nonnegative().optional(),
  tokens_out: z.number().int().nonnegative().optional(),
  /** How many times a person set the step back to pending to run it again (a rewind). */
  reruns: z.number().int().nonnegative().optional(),
  /** How many times the step failed so far: the runtime's backoff and its give-up rule count these. */
  failures: z.number().int().nonnegative().optional(),
  /** Set when a human set the step's result by hand (`waystation edit`, the editor): who and when. */
  edited: z.looseObject({ by: z.string().optional(), at: Timestamp.optional() }).optional(),
});
export type PlanStep = z.infer<typeof PlanStep>;

export const ArtifactStatus = z.enum(['written', 'committed', 'deleted']);
export const Artifact = z.looseObject({
  type: z.string().min(1),
  path: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 is 64 lowercase hex digits'),
  size: z.number().int().nonnegative(),
  status: z.string().default('written'),
  step_id: z.string().optional(),
});
export type Artifact = z.infer<typeof Artifact>;

export const SideEffect = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  status: EffectStatus,
  idempotency_key: z.string().min(1),
  step_id: z.string().optional(),
  request: z.unknown().optional(),
  outcome: z.unknown().optional(),
  attempts: z.number().int().nonnegative().default(0),
  /** How an uncertain effect was settled on resume: probed-done, probed-absent-retried, awaiting-human. */
  reconciliation: z.string().nullable().optional(),
  updated_at: Timestamp.optional(),
  /**
   * The key this task's agent asks for the effect with, where it is not
   * `idempotency_key` (docs/RUNTIME.md, "Time travel"): a repeat a person chose
   * when rewinding runs under a new key of its own; an effect carried into a
   * fork keeps the parent's key, while the fork's agent derives its keys from
   * the fork's task id.
   */
  asked_key: z.string().min(1).optional(),
  /** The id of the repeat that replaced this entry; a superseded entry stays in the ledger as it was. */
  superseded_by: z.string().min(1).optional(),
});
export type SideEffect = z.infer<typeof SideEffect>;

/** The plan a confirm-mode resume is waiting on a human for. */
export const ResumePlan = z.looseObject({
  rerun_step: z.string().nullable(),
  probe_effects: z.array(z.string()).default([]),
  retry_effects: z.array(z.string()).default([]),
  drift: z.array(z.string()).default([]),
  module_changed: z.boolean().optional(),
  /** Effects a human chose to perform again, each under a new idempotency key. */
  redo_effects: z.array(z.string()).optional(),
});
export type ResumePlan = z.infer<typeof ResumePlan>;

export const PendingApproval = z.looseObject({
  id: z.string().min(1),
  requested_at: Timestamp,
  plan: ResumePlan,
});
export type PendingApproval = z.infer<typeof PendingApproval>;

export const ApprovalDecision = z.looseObject({
  approval_id: z.string(),
  decision: z.enum(['approved', 'rejected']),
  by: z.string(),
  at: Timestamp,
  reason: z.string().optional(),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const Recovery = z.looseObject({
  mode: RecoveryMode,
  pending_approval: PendingApproval.nullable().optional(),
  decisions: z.array(ApprovalDecision).default([]),
  auto_attempts: z.number().int().nonnegative().default(0),
  /**
   * Set when a person stopped the task: who, when and why. A stopped task is
   * shown interrupted but is never resumed automatically; a person's resume
   * clears it.
   */
  stopped: z.looseObject({ by: z.string(), at: Timestamp, reason: z.string().optional() }).nullable().optional(),
  /** How many automatic resumes auto mode tries before it waits for a human (3 when absent). */
  max_auto_attempts: z.number().int().nonnegative().optional(),
});
export type Recovery = z.infer<typeof Recovery>;

/** The fifth save boundary: what failed, what fixed it, how the fix was verified. */
export const RecordedError = z.looseObject({
  at: Timestamp,
  step_id: z.string().nullable().optional(),
  what: z.string(),
  fix: z.string().nullable().optional(),
  verification: z.string().nullable().optional(),
});
export type RecordedError = z.infer<typeof RecordedError>;

export const LlmCall = z.looseObject({
  step_id: z.string().optional(),
  model: z.string(),
  tokens_in: z.number().int().nonnegative(),
  tokens_out: z.number().int().nonnegative(),
  latency_ms: z.number().nonnegative(),
  retries: z.number().int().nonnegative().default(0),
  retry_reasons: z.array(z.string()).default([]),
});

export const RunMetadata = z.looseObject({
  created_at: Timestamp,
  updated_at: Timestamp,
  model: z.string().nullable().optional(),
  tokens_in: z.number().int().nonnegative().default(0),
  tokens_out: z.number().int().nonnegative().default(0),
  cost_usd: z.number().nonnegative().default(0),
  elapsed_ms: z.number().nonnegative().default(0),
  llm_calls: z.array(LlmCall).default([]),
});
export type RunMetadata = z.infer<typeof RunMetadata>;

export const VersionSource = z.looseObject({
  kind: VersionSourceKind,
  actor: z.string().optional(),
  note: z.string().optional(),
  /** For human edits: which step, and its result before and after. */
  edit: z.looseObject({ step_id: z.string(), before: z.unknown(), after: z.unknown() }).optional(),
  /** For imports: the file and format the version came from. */
  imported_from: z.looseObject({ path: z.string(), format: z.string() }).optional(),
  /** For forks: the task and version the new task started from. */
  forked_from: z.looseObject({ task_id: z.string(), version: z.number().int().positive() }).optional(),
  /** For rewinds: the step the plan was set back to, and the effects a human chose to perform again. */
  rewind: z.looseObject({ step_id: z.string(), redo: z.array(z.string()).default([]) }).optional(),
});
export type VersionSource = z.infer<typeof VersionSource>;

/** What is needed to start the agent again: never secrets. */
export const AgentRef = z.looseObject({
  name: z.string().min(1),
  /** Module path relative to `project_root`, for agents that are not built in. */
  module: z.string().optional(),
  export: z.string().optional(),
  project_root: z.string().optional(),
  module_sha256: z.string().optional(),
  /** The module's hash before the last resume that ran changed code: the history shows when the code changed. */
  previous_module_sha256: z.string().optional(),
  /** A command agent's program and arguments as registered (waystation.config.json), paths relative to the directory. */
  command: z.array(z.string()).optional(),
  /** For a command agent: the hash of the files its command names inside the directory (docs/WRITING-AGENTS.md). */
  command_sha256: z.string().optional(),
  /** The command files' hash before the last resume that ran changed ones. */
  previous_command_sha256: z.string().optional(),
  options: z.record(z.string(), z.unknown()).default({}),
});
export type AgentRef = z.infer<typeof AgentRef>;

/** The message history: an append-only chain of blobs, so a save costs O(new messages). */
export const HistoryRef = z.looseObject({
  count: z.number().int().nonnegative(),
  head: BlobRef.nullable(),
});
export type HistoryRef = z.infer<typeof HistoryRef>;

/** A wait for a human an agent asked for (`ctx.waitForHuman`), by key: resolved by the resume that answers it. */
export const HumanWait = z.looseObject({
  key: z.string(),
  reason: z.string(),
  requested_at: Timestamp,
  resolved_at: Timestamp.optional(),
  by: z.string().optional(),
  /** The note the human left when resuming; the agent's waitForHuman returns it. */
  note: z.string().nullable().optional(),
});
export type HumanWait = z.infer<typeof HumanWait>;

export const Checkpoint = z.looseObject({
  schema_version: z.literal(CURRENT_SCHEMA_VERSION),
  task_id: z.string().min(1),
  task_name: z.string(),
  version: z.number().int().positive(),
  status: TaskStatus,
  phase: z.string(),
  goal: z.string(),
  plan: z.array(PlanStep),
  current_step: z.number().int().nonnegative(),
  total_steps: z.number().int().nonnegative(),
  artifacts: z.array(Artifact).default([]),
  side_effects: z.array(SideEffect).default([]),
  resume_hint: z.string().default(''),
  recovery: Recovery,
  errors: z.array(RecordedError).default([]),
  run: RunMetadata,
  source: VersionSource,
  history: HistoryRef.default({ count: 0, head: null }),
  agent: AgentRef.nullable().optional(),
  /** A fork's parent, kept in every version of the fork so the inspector links the two both ways. */
  forked_from: z.looseObject({ task_id: z.string(), version: z.number().int().positive() }).nullable().optional(),
  /** The waits for a human the agent asked for, answered or not. */
  human_waits: z.array(HumanWait).optional(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;
/** A checkpoint as a writer supplies it, before defaults are filled. */
export type CheckpointInput = z.input<typeof Checkpoint>;

/** One message of an agent's conversation history. */
export const HistoryMessage = z.looseObject({
  role: z.string(),
  content: z.string(),
});
export type HistoryMessage = z.infer<typeof HistoryMessage>;
