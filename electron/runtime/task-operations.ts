/**
 * What can be done to a task: start it, resume it (the six steps), approve or
 * reject a resume plan, replace a step's result. Each takes the task's lease
 * before it writes, and refuses bad input before touching anything.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AgentRef, RecoveryMode, ResumePlan, SideEffect } from '../../shared/checkpoint/schema.js';
import { Checkpoint, CURRENT_SCHEMA_VERSION } from '../../shared/checkpoint/schema.js';
import { validateAgainstSchema } from '../../shared/checkpoint/output-schema.js';
import { ConflictError, StoreWriteError, TaskReadError, type CheckpointStore, type TaskEntry } from '../store/store-types.js';
import { unreadableNewerVersion } from '../store/task-reader.js';
import { verifyTask } from '../verify/verify-task.js';
import type { LlmProvider } from '../llm/provider.js';
import { redactSecrets } from '../llm/provider-from-env.js';
import type { AnyAgent } from './define-agent.js';
import { LeaseHeldError } from '../store/lease-rules.js';
import type { TaskLease } from '../store/store-types.js';
import { buildResumeContext, decideResume, describePlan, samePlan, type ResumeDecision } from './resume-plan.js';
import { describeDiskError } from '../store/disk-errors.js';
import { isSafeTaskId } from '../store/directory-scan.js';
import { isSchemaRefusal, TaskEngine, type EngineOutcome } from './task-engine.js';
import { messageOf, ServiceError } from '../../shared/api/error-codes.js';
import { copyForAgent, own, ownWhere } from './checkpoint-draft.js';
import { commandHint } from './command-hint.js';
import { continuation, hintText } from './continue-hint.js';
import { optionIssuesMessage } from './option-issues.js';
import { unknownOptionsMessage } from './unknown-options.js';
import { DONE_PHASE, rerunPhase, START_PHASE } from './task-phase.js';

/** Bad input or a refused operation: nothing was written. `code` says which. */
export class OperationError extends ServiceError {
  constructor(
    readonly code:
      | 'not-found'
      | 'exists'
      | 'read-only'
      | 'future-schema'
      | 'unreadable'
      | 'busy'
      | 'invalid'
      | 'unknown-step'
      | 'no-approval'
      | 'halted'
      | 'agent-mismatch'
      | 'agent-unavailable'
      | 'moved'
      /** The disk refused a write (full, read-only, no permission): the message names the file and what to do. */
      | 'disk',
    message: string,
  ) {
    super(message);
  }
}

export interface OperationEnv {
  store: CheckpointStore;
  root: string;
  /** Needed only by operations that drive the agent. */
  llm?: LlmProvider;
  env?: NodeJS.ProcessEnv;
  report?: (line: string) => void;
  leaseTtlMs?: number;
  /** Who asks, for the lease entry and recorded decisions. */
  actor?: string;
  /**
   * The sha256 of the agent module as loaded for this operation (null for a
   * built-in). Compared with the hash the task recorded: a difference is
   * reported before resuming and is part of a confirm-mode resume plan.
   */
  agentModuleSha256?: string | null;
}

export const DEFAULT_MAX_AUTO_ATTEMPTS = 3;
/** What a new task's id may be: it names a folder, so nothing that could leave the root or collide with the store's own names. */
export const TASK_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Why `taskId` cannot name a new task, or null when it can: checked by every
 * way of starting one (the API answers before any worker starts, the runner
 * before it spawns one), so no caller is told "running" for an id the
 * worker then refuses.
 */
export function newTaskIdProblem(taskId: string): string | null {
  if (TASK_ID_RE.test(taskId) && isSafeTaskId(taskId)) return null;
  const shown = taskId.length > 60 ? `${taskId.slice(0, 60)}…` : taskId;
  return (
    `${JSON.stringify(shown)} cannot be a task id: use at most 128 letters (a to z), digits, ".", "_" and "-", ` +
    'starting with a letter or digit and not ending in ".json" or ".tmp"; nothing was written'
  );
}

/** A readable, unique task id: agent name, UTC date and time, a short random suffix. */
export function generateTaskId(agentName: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  const slug =
    agentName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'task';
  return `${slug}-${stamp}-${randomBytes(2).toString('hex')}`;
}

/** Who acts: the operation's actor, else the user running it. */
export function defaultActor(env: OperationEnv): string {
  return env.actor ?? process.env.USER ?? process.env.USERNAME ?? 'human';
}

/** Load a task's latest checkpoint for writing; refuse what must not be written. */
export async function loadForWrite(store: CheckpointStore, taskId: string): Promise<Checkpoint> {
  const entry = await store.getTask(taskId);
  if (!entry) throw new OperationError('not-found', `there is no task "${taskId}" in ${store.root}`);
  const future = entry.problems.find((p) => p.reason === 'future-schema');
  if (future) throw new OperationError('future-schema', `${future.file}: ${future.message}. Nothing was written.`);
  if (entry.format !== 'waystation' || entry.read_only) {
    throw new OperationError('read-only', `task ${taskId} (${entry.location}) is read-only (${entry.format}); nothing was written`);
  }
  if (isUnfinishedCreate(entry)) {
    // A creation that failed (a full disk, a crash) before version 1 existed: there is nothing to resume, and
    // starting again under the same id is safe.
    throw new OperationError(
      'not-found',
      `task ${taskId} was never saved: its creation failed before version 1 was written, so there is nothing to resume. ` +
        `Start it again under the same id: waystation run ${store.root} AGENT --task ${taskId}`,
    );
  }
  if (!entry.checkpoint) {
    const why = entry.problems.map((p) => `${p.file}: ${p.message}`).join('; ') || 'no readable version';
    throw new OperationError('unreadable', `task ${taskId} cannot be read (${why}); nothing was written`);
  }
  if (entry.checkpoint.task_id !== taskId) {
    // Saves go to the task the checkpoint names: a folder copied under a new name would write into the original,
    // whose lease this writer does not hold.
    const named = JSON.stringify(entry.checkpoint.task_id);
    throw new OperationError(
      'invalid',
      `the folder ${taskId} holds task ${named} (its checkpoint's task_id): a copy of that task's folder? Writing it would write ` +
        `task ${named}, so nothing was written. To go on from it as a task of its own: ${commandHint(taskId, 'fork', ' latest --task NEW-ID')}`,
    );
  }
  // The next save is built on the newest version file, not on checkpoint.json (a copy): when that file does not
  // read (torn by a power cut, damaged), nothing can follow it. Refused here, before the lease, so nothing is written.
  const v = entry.checkpoint.version;
  const newer = unreadableNewerVersion(entry);
  const why = newer
    ? `${newer.file}: ${newer.message}`
    : await store.readVersion(taskId, v).then(
        () => null,
        (err: unknown) => (err instanceof TaskReadError ? err.message : Promise.reject(err)),
      );
  if (why)
    throw new OperationError(
      'unreadable',
      `task ${taskId} cannot be saved after its newest version file: ${why}. Nothing was written; move the damaged file aside to continue.`,
    );
  return entry.checkpoint;
}

async function takeLease(env: OperationEnv, taskId: string, owner: string, heartbeat: boolean): Promise<TaskLease> {
  try {
    return await env.store.acquireLease(taskId, {
      owner,
      ttlMs: env.leaseTtlMs,
      heartbeatMs: heartbeat ? undefined : 0,
    });
  } catch (err) {
    if (err instanceof LeaseHeldError) throw new OperationError('busy', err.message);
    // The store's error names the file it could not write; the sentence names it too.
    const file = (err as NodeJS.ErrnoException).path ?? `the lease of task ${taskId}`;
    const disk = describeDiskError(err, file, `the task ${taskId} was not touched`);
    if (disk) throw new OperationError('disk', disk);
    throw err;
  }
}

async function withLease<T>(
  env: OperationEnv,
  taskId: string,
  owner: string,
  heartbeat: boolean,
  fn: (lease: TaskLease) => Promise<T>,
): Promise<T> {
  const lease = await takeLease(env, taskId, owner, heartbeat);
  try {
    return await fn(lease);
  } finally {
    // The saves made under the lease may have been appended to one file: checkpoint.json catches up before any
    // other writer may write. Should that fail, readers apply the versions after it, and the next save rewrites it.
    await env.store.settle(taskId).catch(() => undefined);
    await lease.release().catch(() => undefined);
  }
}

function engineFor(env: OperationEnv, agent: AnyAgent | null, cp: Checkpoint, lease: TaskLease): TaskEngine {
  return new TaskEngine({ store: env.store, llm: env.llm ?? unavailableLlm, lease, env: env.env, report: env.report }, agent, env.root, cp);
}

/**
 * Run `fn` with an engine over the task's latest version, under the task's
 * lease: for writes that run no agent code (imports, adoptions). `before`
 * checks the task as it is before the lease is taken (`fn` checks it again
 * under it).
 */
export async function withTaskEngine<T>(
  env: OperationEnv,
  taskId: string,
  owner: string,
  fn: (engine: TaskEngine, cp: Checkpoint) => Promise<T>,
  before?: (cp: Checkpoint) => unknown,
): Promise<T> {
  // Refused before the lease is taken too, so what must not be written leaves not even a lease entry behind.
  const first = await loadForWrite(env.store, taskId);
  before?.(first);
  return withLease(env, taskId, owner, false, async (lease) => {
    const cp = await loadForWrite(env.store, taskId);
    return fn(engineFor(env, null, cp, lease), cp);
  });
}

const unavailableLlm: LlmProvider = {
  kind: 'none',
  model: 'none',
  complete: () => Promise.reject(new Error('no language model was configured for this operation')),
};

/** Environment variable names that hold secrets by convention: API keys, tokens, passwords. */
const SECRET_ENV_NAME = /(?:_KEY|_TOKEN|_SECRET)$|PASSWORD/i;
/** Shorter values ("1", "true", "dev") are settings, not secrets, and would match innocent options. */
const MIN_SECRET_LENGTH = 8;

/**
 * Refuse to record options that carry a secret from the environment: the
 * value of any variable named like a secret (`*_KEY`, `*_TOKEN`, `*_SECRET`,
 * `*PASSWORD*`), or a bearer token. The variable is named, never its value.
 */
function assertNoSecrets(options: unknown, env: NodeJS.ProcessEnv): void {
  const text = JSON.stringify(options ?? null);
  for (const [name, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (!value || value.length < MIN_SECRET_LENGTH || !SECRET_ENV_NAME.test(name)) continue;
    // Compared as it appears inside a JSON string, so quotes and backslashes in the secret still match.
    if (text.includes(JSON.stringify(value).slice(1, -1))) {
      throw new OperationError(
        'invalid',
        `an agent option contains the value of ${name}; secrets are never stored in checkpoints. Nothing was written.`,
      );
    }
  }
  if (redactSecrets(text, env) !== text) {
    throw new OperationError(
      'invalid',
      'an agent option contains a secret (an API key or a bearer token); secrets are never stored in checkpoints. Nothing was written.',
    );
  }
}

/**
 * Whether the agent module changed since the task recorded it: both hashes
 * known and different. A built-in agent, or a task that never recorded a
 * hash, has nothing to compare.
 */
export function moduleChanged(cp: Checkpoint, currentSha256: string | null | undefined): boolean {
  const recorded = cp.agent?.module_sha256;
  return Boolean(cp.agent?.module && recorded && currentSha256 && recorded !== currentSha256);
}

/** A folder left by a create that crashed before version 1 existed: starting again is safe (version 1 is linked exclusively). */
export function isUnfinishedCreate(entry: TaskEntry): boolean {
  return (
    entry.checkpoint === null &&
    entry.format === 'waystation' &&
    entry.problems.length > 0 &&
    entry.problems.every((p) => p.reason === 'missing-version')
  );
}

// ---- start ----------------------------------------------------------------------------------

/**
 * Call one of the agent's own functions while a task is being created: what
 * it throws is the agent's verdict on its options (a missing input folder, ...),
 * reported as bad input with the agent named, before anything is written.
 */
async function fromAgent<T>(
  env: OperationEnv,
  agent: AnyAgent,
  what: 'plan' | 'goal' | 'resolveOptions',
  fn: () => T | Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OperationError) throw err;
    const message = redactSecrets(messageOf(err), env.env ?? process.env);
    throw new OperationError(
      'invalid',
      `agent ${agent.name} could not start the task: its ${what}() threw: ${message}. Nothing was written.`,
    );
  }
}

export interface StartRequest {
  taskId?: string;
  /** Raw options, validated with the agent's schema. */
  options?: unknown;
  mode?: RecoveryMode;
  maxAutoAttempts?: number;
  /** What else to record about the agent (module path for agents outside the registry). */
  agentRef?: Partial<AgentRef>;
  /** What relative paths in the options are resolved against; default process.cwd(). */
  optionsBase?: string;
  /** The options came from the inspector: paths in them must stay inside the root (AgentPlanEnv.confined). */
  confined?: boolean;
}

/**
 * A create the store refused because the task's folder could not be made (a read-only file system, a file in the
 * way), rethrown as the refusal it is: said as the store said it, with no stack. Anything else is left to the caller.
 */
export function refuseUnwrittenFolder(err: unknown): void {
  if (err instanceof StoreWriteError && err.problems.every((p) => p.reason === 'io')) throw new OperationError('disk', err.message);
}

/** Create a task from an agent and drive it until it finishes, fails or waits. */
export async function startTask(env: OperationEnv, agent: AnyAgent, req: StartRequest = {}): Promise<EngineOutcome> {
  const taskId = req.taskId ?? generateTaskId(agent.name);
  const idProblem = newTaskIdProblem(taskId);
  if (idProblem) throw new OperationError('invalid', idProblem);
  const schema = agent.options as z.ZodType | undefined;
  if (!schema || typeof schema !== 'object' || typeof (schema as { safeParse?: unknown }).safeParse !== 'function') {
    throw new OperationError(
      'invalid',
      `agent ${agent.name} has no options schema: \`options\` must be a zod schema (z.object({...})). Nothing was written.`,
    );
  }
  const given: unknown = req.options ?? {};
  const unknown =
    typeof given === 'object' && given !== null && !Array.isArray(given)
      ? unknownOptionsMessage(agent.name, schema, given as Record<string, unknown>)
      : null;
  if (unknown) throw new OperationError('invalid', unknown);
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    throw new OperationError(
      'invalid',
      `invalid options for agent ${agent.name}: ${optionIssuesMessage(parsed.error, given)}. Nothing was written.`,
    );
  }
  const existing = await env.store.getTask(taskId);
  if (existing && !isUnfinishedCreate(existing))
    throw new OperationError('exists', `task ${taskId} already exists in ${env.store.root}; resume it instead`);
  const planEnv = { taskId, rootDir: env.root, baseDir: req.optionsBase ?? process.cwd(), confined: req.confined === true };
  const options = (
    agent.resolveOptions ? await fromAgent(env, agent, 'resolveOptions', () => agent.resolveOptions!(parsed.data, planEnv)) : parsed.data
  ) as Record<string, unknown>;
  assertNoSecrets(options, env.env ?? process.env);
  const steps = await fromAgent(env, agent, 'plan', () => agent.plan(options, planEnv));
  if (!Array.isArray(steps))
    throw new OperationError('invalid', `agent ${agent.name}: plan() returned ${typeof steps}, not a list of steps. Nothing was written.`);
  const goal = await fromAgent(env, agent, 'goal', () => agent.goal(options));
  const ids = new Set<string>();
  for (const [i, s] of (steps as unknown[]).entries()) {
    const step = s as { id?: unknown; name?: unknown; output_schema?: unknown } | null;
    if (!step || typeof step !== 'object' || typeof step.id !== 'string' || typeof step.name !== 'string') {
      throw new OperationError(
        'invalid',
        `agent ${agent.name}: plan() entry ${i} is ${JSON.stringify(s) ?? String(s)}, not a step with an id and a name. Nothing was written.`,
      );
    }
    if (step.output_schema != null && typeof (step.output_schema as { safeParse?: unknown }).safeParse !== 'function') {
      throw new OperationError(
        'invalid',
        `agent ${agent.name}: step "${step.id}" has an output_schema that is not a zod schema. Nothing was written.`,
      );
    }
    if (ids.has(step.id))
      throw new OperationError('invalid', `agent ${agent.name} planned step id "${step.id}" twice; step ids must be unique`);
    ids.add(step.id);
  }
  const now = new Date().toISOString();
  const mode = req.mode ?? 'manual';
  const checkpoint: Omit<Checkpoint, 'version'> = {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: taskId,
    task_name: agent.name,
    status: 'running',
    phase: START_PHASE,
    goal,
    plan: steps.map((s) => ({
      id: s.id,
      name: s.name,
      status: 'pending',
      attempts: 0,
      // Refinements and transforms have no JSON Schema form; they are left out rather than failing the start.
      output_schema: s.output_schema ? (z.toJSONSchema(s.output_schema, { unrepresentable: 'any' }) as Record<string, unknown>) : null,
    })),
    current_step: 0,
    total_steps: steps.length,
    artifacts: [],
    side_effects: [],
    resume_hint: steps.length ? `start at ${steps[0].id} (${steps[0].name})` : 'nothing planned',
    recovery: {
      mode,
      pending_approval: null,
      decisions: [],
      auto_attempts: 0,
      max_auto_attempts: req.maxAutoAttempts ?? DEFAULT_MAX_AUTO_ATTEMPTS,
    },
    errors: [],
    run: {
      created_at: now,
      updated_at: now,
      model: env.llm?.model ?? null,
      tokens_in: 0,
      tokens_out: 0,
      cost_usd: 0,
      elapsed_ms: 0,
      llm_calls: [],
    },
    source: { kind: 'runtime', note: 'task created' },
    history: { count: 0, head: null },
    agent: { ...req.agentRef, name: agent.name, options },
  };
  // Checked before the store is asked, so an agent that describes an invalid task leaves not even an empty folder behind.
  const valid = Checkpoint.safeParse({ ...checkpoint, version: 1 });
  if (!valid.success) {
    throw new OperationError(
      'invalid',
      `agent ${agent.name} describes a task that is not a valid checkpoint (check its goal, plan and options): ${z.prettifyError(valid.error).replace(/\n/g, '; ')}. Nothing was written.`,
    );
  }
  let created: Checkpoint;
  try {
    created = (await env.store.create(checkpoint)).checkpoint;
  } catch (err) {
    if (err instanceof ConflictError)
      throw new OperationError('exists', `task ${taskId} was created by another runner at the same moment; nothing was written`);
    refuseUnwrittenFolder(err);
    if (isSchemaRefusal(err)) {
      throw new OperationError(
        'invalid',
        `agent ${agent.name} describes a task that is not a valid checkpoint (check its goal, plan and options): ${err.message}`,
      );
    }
    throw err;
  }
  return withLease(env, taskId, 'runner', true, async (lease) => {
    const engine = engineFor(env, agent, created, lease);
    await engine.event({ type: 'runner', data: { status: 'started', agent: agent.name, mode, pid: process.pid } });
    return engine.drive((e) => confirmAfterFailure(env, agent, e));
  });
}

// ---- resume ---------------------------------------------------------------------------------

export interface ResumeRequest {
  /** A human asked (resets the auto-attempt count) or the runner resumes by itself (counts against it). */
  trigger?: 'human' | 'auto';
  /** Regenerate drifted artifacts by rerunning the steps that made them. */
  rerunDrifted?: boolean;
  /** A human's answer for uncertain effects without a probe: idempotency key -> happened? */
  settle?: Record<string, boolean>;
  /** Passed to a step waiting in `waitForHuman`. */
  note?: string;
}

function canProbeBeforeRun(agent: AnyAgent | null) {
  return (e: SideEffect) => Boolean(agent?.probes?.[e.type]);
}

async function decide(env: OperationEnv, agent: AnyAgent | null, cp: Checkpoint, rerunDrifted: boolean): Promise<ResumeDecision> {
  const report = await verifyTask(env.root, cp, { location: cp.task_id });
  return decideResume({
    cp,
    report,
    canProbe: canProbeBeforeRun(agent),
    rerunDrifted,
    moduleChanged: moduleChanged(cp, env.agentModuleSha256),
  });
}

/**
 * Record a resume plan as a pending approval, unless the same plan is already pending.
 */
async function requestApproval(engine: TaskEngine, plan: ResumePlan, note: string): Promise<EngineOutcome> {
  const cp = engine.checkpoint;
  const pending = cp.recovery.pending_approval;
  if (!(pending && samePlan(pending.plan, plan) && cp.status === 'waiting_approval')) {
    await engine.save(
      (d) => {
        d.recovery.pending_approval = { id: `approval-${randomBytes(4).toString('hex')}`, requested_at: new Date().toISOString(), plan };
        d.status = 'waiting_approval';
        d.resume_hint = `a resume plan awaits approval (${describePlan(plan, d).join('; ')}): \`${commandHint(d, 'approve')}\` or \`${commandHint(d, 'reject', ' --reason TEXT')}\``;
      },
      { source: { kind: 'runtime', note } },
    );
    await engine.event({ type: 'runner', data: { status: 'waiting_approval', plan } });
  }
  return engine.outcome(
    'waiting_approval',
    `task ${cp.task_id} waits for approval of its resume plan:\n  ${describePlan(plan, engine.checkpoint).join('\n  ')}`,
    `approve: ${commandHint(cp, 'approve')}   reject: ${commandHint(cp, 'reject', ' --reason TEXT')}`,
  );
}

/** Stop for a human with the reasons; saves only when the reasons are new. */
async function stopForHuman(engine: TaskEngine, reasons: string[]): Promise<EngineOutcome> {
  const cp = engine.checkpoint;
  const text = reasons.join(' | ');
  const message = `task ${cp.task_id} needs a human before it can resume: ${text}`;
  if (!(cp.status === 'waiting_human' && cp.resume_hint === text)) {
    await engine.save(
      (d) => {
        d.status = 'waiting_human';
        d.recovery.pending_approval = null;
        d.resume_hint = text;
      },
      { source: { kind: 'runtime', note: 'resume stopped: verification needs a human' } },
    );
    await engine.event({ type: 'runner', data: { status: 'waiting_human', reasons } });
  }
  return engine.outcome('waiting_human', message, `resolve the above, then: ${commandHint(cp, 'resume')}`);
}

/** In confirm mode a failure is followed by a resume plan for a human to approve. */
async function confirmAfterFailure(env: OperationEnv, agent: AnyAgent, engine: TaskEngine): Promise<EngineOutcome | null> {
  if (engine.checkpoint.recovery.mode !== 'confirm') return null;
  const decision = await decide(env, agent, engine.checkpoint, true);
  if (decision.blocking.length > 0) return stopForHuman(engine, decision.blocking);
  return requestApproval(engine, decision.plan, 'failed: resume plan prepared for approval');
}

interface ResumeInternal extends ResumeRequest {
  approval?: { id: string; actor: string };
}

/**
 * Resume a task, following the six steps: load the latest version; verify the
 * outside world; find the next step; reconcile uncertain effects; rebuild a
 * minimal context; continue, saving new versions.
 */
export async function resumeTask(env: OperationEnv, agent: AnyAgent, taskId: string, req: ResumeRequest = {}): Promise<EngineOutcome> {
  return resumeInternal(env, agent, taskId, req);
}

function checkResumable(cp: Checkpoint, agent: AnyAgent): void {
  if (cp.agent?.name && cp.agent.name !== agent.name) {
    throw new OperationError(
      'agent-mismatch',
      `task ${cp.task_id} belongs to agent ${cp.agent.name}, not ${agent.name}; nothing was written`,
    );
  }
  if (cp.status === 'halted') {
    const last = cp.recovery.decisions.at(-1);
    throw new OperationError(
      'halted',
      `task ${cp.task_id} is halted${last ? ` (resume plan rejected by ${last.by} at ${last.at}${last.reason ? `: ${last.reason}` : ''})` : ''}; it is not resumed. Nothing was written.`,
    );
  }
}

async function resumeInternal(env: OperationEnv, agent: AnyAgent, taskId: string, req: ResumeInternal): Promise<EngineOutcome> {
  // 1. Load the latest version (checked once before the lease so bad input touches nothing).
  checkResumable(await loadForWrite(env.store, taskId), agent);
  return withLease(env, taskId, 'runner', true, async (lease) => {
    // Read again under the lease: the version before it may be stale.
    const cp = await loadForWrite(env.store, taskId);
    checkResumable(cp, agent);
    const engine = engineFor(env, agent, cp, lease);
    const stopped = await stopBeforeResuming(engine, cp, req);
    if (stopped) return stopped;
    await settleByHuman(env, engine, cp, req);
    const changed = reportModuleChange(env, engine, taskId);

    // 2. Verify the outside world; 3. find the next step; the plan for 4. is decided here too.
    const confirm = cp.recovery.mode === 'confirm';
    const decision = await decide(env, agent, engine.checkpoint, Boolean(req.rerunDrifted) || confirm);
    if (engine.checkpoint.status === 'done') {
      // Only --rerun-drifted gets here with a done task: it reruns what made a drifted artifact, and nothing else.
      // What it cannot rerun is said, and the done task is left as it is.
      if (decision.blocking.length > 0)
        throw new OperationError(
          'invalid',
          `task ${taskId} is done, and --rerun-drifted cannot rerun it: ${decision.blocking.join(' | ')}; nothing was written`,
        );
      if (decision.reset_from === null)
        return engine.outcome('done', `task ${taskId} is done and none of its artifacts drifted; nothing to rerun`, null);
    }
    if (decision.blocking.length > 0) return stopForHuman(engine, decision.blocking);
    if (confirm && !req.approval) return requestApproval(engine, decision.plan, 'resume plan prepared for approval');
    if (req.approval) {
      const pending = engine.checkpoint.recovery.pending_approval!;
      if (!samePlan(pending.plan, decision.plan)) {
        // The world moved since the plan was approved-to-be: never run a plan the human did not see.
        return requestApproval(engine, decision.plan, 'the outside world changed since the plan was prepared; new plan awaits approval');
      }
    }
    await recordResume(env, engine, decision, changed, req);

    // 4. Reconcile uncertain effects the agent can probe before running; the rest are probed where the step calls them.
    const probeFailed = await probeBeforeRunning(env, agent, engine, cp, decision);
    if (probeFailed) return probeFailed;

    // 5. Rebuild a minimal context for the agent.
    await rebuildContext(env, engine, taskId, req);

    // 6. Continue, writing new versions.
    return engine.drive((e) => confirmAfterFailure(env, agent, e));
  });
}

/**
 * What ends a resume before any step of it: a task already done (unless its drifted artifacts are to be rerun), an approval
 * that is not the pending one, a plan still waiting for its approval, or auto
 * mode out of attempts (recorded once, then reported as it stands). Null: go on.
 */
async function stopBeforeResuming(engine: TaskEngine, cp: Checkpoint, req: ResumeInternal): Promise<EngineOutcome | null> {
  const taskId = cp.task_id;
  if (cp.status === 'done' && !req.rerunDrifted) return engine.outcome('done', `task ${taskId} is already done; nothing to resume`, null);
  if (req.approval) {
    const pending = cp.recovery.pending_approval;
    if (!pending || pending.id !== req.approval.id) {
      throw new OperationError('no-approval', `task ${taskId} has no pending approval ${req.approval.id}; nothing was written`);
    }
  } else if (cp.status === 'waiting_approval' && cp.recovery.mode === 'confirm') {
    return engine.outcome(
      'waiting_approval',
      `task ${taskId} waits for approval of its resume plan:\n  ${describePlan(cp.recovery.pending_approval!.plan, cp).join('\n  ')}`,
      `approve: ${commandHint(cp, 'approve')}   reject: ${commandHint(cp, 'reject', ' --reason TEXT')}`,
    );
  }
  const maxAuto = cp.recovery.max_auto_attempts ?? DEFAULT_MAX_AUTO_ATTEMPTS;
  if (req.trigger === 'auto' && cp.recovery.auto_attempts >= maxAuto) {
    const reason = `automatic recovery gave up after ${cp.recovery.auto_attempts} attempt(s)`;
    if (cp.resume_hint.startsWith(reason)) return engine.outcome(cp.status, reason, `resume by hand: ${commandHint(cp, 'resume')}`);
    await engine.save(
      (d) => {
        if (d.status === 'running') {
          d.status = 'failed';
          d.errors.push({ at: new Date().toISOString(), step_id: null, what: 'interrupted; automatic recovery exhausted' });
        }
        d.resume_hint = `${reason}; resume by hand: \`${commandHint(d, 'resume')}\``;
      },
      { source: { kind: 'runtime', note: reason } },
    );
    return engine.outcome(engine.checkpoint.status, reason, `resume by hand: ${commandHint(cp, 'resume')}`);
  }
  return null;
}

/** Record a human's word on uncertain effects that have no probe: it is part of the world the resume verifies. */
async function settleByHuman(env: OperationEnv, engine: TaskEngine, cp: Checkpoint, req: ResumeInternal): Promise<void> {
  const taskId = cp.task_id;
  const settle = Object.entries(req.settle ?? {});
  if (settle.length > 0) {
    for (const [key] of settle) {
      if (!cp.side_effects.some((e) => e.idempotency_key === key)) {
        throw new OperationError('invalid', `task ${taskId} has no side effect with idempotency key "${key}"; nothing was written`);
      }
    }
    await engine.save(
      (d) => {
        for (const [key, happened] of settle) {
          const e = ownWhere(d.side_effects, (x) => x.idempotency_key === key)!;
          if (e.status === 'done') continue;
          Object.assign(
            e,
            happened
              ? { status: 'done', reconciliation: 'settled-by-human' }
              : { status: 'not_started', reconciliation: 'settled-by-human-retry' },
          );
          e.updated_at = new Date().toISOString();
        }
      },
      { source: { kind: 'runtime', actor: req.approval?.actor ?? defaultActor(env), note: 'uncertain side effects settled by a human' } },
    );
  }
}

/** Whether the agent module changed since the task recorded it; said before resuming, when it did. */
function reportModuleChange(env: OperationEnv, engine: TaskEngine, taskId: string): boolean {
  const changed = moduleChanged(engine.checkpoint, env.agentModuleSha256);
  if (changed) {
    const a = engine.checkpoint.agent!;
    env.report?.(
      `the agent module ${a.module} changed since task ${taskId} recorded it (sha256 ${a.module_sha256!.slice(0, 12)}… is now ${env.agentModuleSha256!.slice(0, 12)}…); ` +
        'the remaining steps run with the new code',
    );
  }
  return changed;
}

/**
 * Save the version that starts the resume: the approval decided, the steps
 * from the reset point pending again, the attempt counted, the human waits
 * answered, a changed module's new hash, and the plan in the resume hint.
 */
async function recordResume(
  env: OperationEnv,
  engine: TaskEngine,
  decision: ResumeDecision,
  changed: boolean,
  req: ResumeInternal,
): Promise<void> {
  const actor = req.approval?.actor ?? defaultActor(env);
  const resetFrom = decision.reset_from;
  const phase = resetFrom !== null ? await rerunPhase(env.store, engine.checkpoint, resetFrom) : null;
  await engine.save(
    (d) => {
      if (req.approval) {
        d.recovery.decisions.push({
          approval_id: req.approval.id,
          decision: 'approved',
          by: req.approval.actor,
          at: new Date().toISOString(),
        });
        d.recovery.pending_approval = null;
      }
      if (resetFrom !== null) {
        const reset = new Set(d.plan.slice(resetFrom).map((s) => s.id));
        for (let i = resetFrom; i < d.plan.length; i++) {
          const s = d.plan[i];
          if (s.status === 'done' || s.status === 'skipped')
            Object.assign(own(d.plan, i), { status: 'pending', result_ref: null, finished_at: null });
        }
        d.artifacts = d.artifacts.filter((a) => !(a.step_id && reset.has(a.step_id)));
        d.phase = phase!;
      }
      if (req.trigger === 'auto') d.recovery.auto_attempts += 1;
      else d.recovery.auto_attempts = 0;
      // A person's resume ends a stop; the runner's own never does.
      if (req.trigger !== 'auto' && d.recovery.stopped) d.recovery.stopped = null;
      const waits = d.human_waits ?? [];
      if (req.trigger !== 'auto') {
        waits.forEach((w, i) => {
          if (!w.resolved_at) Object.assign(own(waits, i), { resolved_at: new Date().toISOString(), by: actor, note: req.note ?? null });
        });
      }
      if (changed && d.agent) {
        // The new hash is recorded with the resume, so the history shows when the code changed and who resumed with it.
        d.agent.previous_module_sha256 = d.agent.module_sha256;
        d.agent.module_sha256 = env.agentModuleSha256!;
      }
      d.status = 'running';
      d.resume_hint = `resumed${req.trigger === 'auto' ? ' automatically' : ` by ${actor}`}: ${describePlan(decision.plan, d).join('; ')}`;
    },
    req.approval
      ? {
          source: {
            kind: 'approval',
            actor: req.approval.actor,
            note: `resume plan ${req.approval.id} approved${changed ? ' (with the changed agent module)' : ''}`,
          },
        }
      : {
          source: {
            kind: 'runtime',
            actor: req.trigger === 'auto' ? undefined : actor,
            note: `resumed (${req.trigger ?? 'human'})${changed ? '; the agent module changed since the last run' : ''}`,
          },
        },
  );
}

/** Settle the uncertain effects the agent can probe before it runs; the outcome when a probe fails, else null. */
async function probeBeforeRunning(
  env: OperationEnv,
  agent: AnyAgent,
  engine: TaskEngine,
  cp: Checkpoint,
  decision: ResumeDecision,
): Promise<EngineOutcome | null> {
  for (const id of decision.plan.probe_effects) {
    const effect = engine.checkpoint.side_effects.find((e) => e.id === id);
    const probe = effect ? agent.probes?.[effect.type] : undefined;
    if (!effect || !probe) continue;
    try {
      await engine.settleByProbe(effect, (e) => probe(e, copyForAgent(engine.checkpoint.agent?.options ?? {})));
    } catch (err) {
      const message = redactSecrets(messageOf(err), env.env ?? process.env);
      await engine.save((d) => {
        d.status = 'failed';
        d.errors.push({
          at: new Date().toISOString(),
          step_id: effect.step_id ?? null,
          what: `probing ${effect.type} (key ${effect.idempotency_key}) failed: ${message}`,
        });
        d.resume_hint = `could not ask the outside world about ${effect.type} (key ${effect.idempotency_key}): ${message}. Resume when it answers: \`${commandHint(d, 'resume')}\``;
      });
      return engine.outcome(
        'failed',
        `probing side effect ${effect.id} failed: ${message}`,
        `when the service answers: ${commandHint(cp, 'resume')}`,
      );
    }
  }
  return null;
}

/** Give the agent the minimal context it resumes from, load the cached model calls, and say where it picks up. */
async function rebuildContext(env: OperationEnv, engine: TaskEngine, taskId: string, req: ResumeInternal): Promise<void> {
  const context = buildResumeContext(engine.checkpoint);
  engine.setResumeContext(context);
  await engine.loadLlmCache();
  await engine.event({
    type: 'runner',
    data: { status: 'resumed', trigger: req.trigger ?? 'human', context: { ...context, artifacts: context.artifacts.length } },
  });
  env.report?.(
    `resuming ${taskId}: next ${context.next_step ? `${context.next_step.id} (${context.next_step.name})` : 'nothing (all steps finished)'}`,
  );
}

// ---- approve / reject -----------------------------------------------------------------------

/** Approve the pending resume plan and resume exactly that plan. */
export async function approveTask(
  env: OperationEnv,
  agent: AnyAgent,
  taskId: string,
  opts: { actor?: string } = {},
): Promise<EngineOutcome> {
  const cp = await loadForWrite(env.store, taskId);
  const pending = cp.recovery.pending_approval;
  if (!pending) {
    throw new OperationError('no-approval', `task ${taskId} has no pending approval (its status is ${cp.status}); nothing was written`);
  }
  return resumeInternal(env, agent, taskId, { trigger: 'human', approval: { id: pending.id, actor: opts.actor ?? defaultActor(env) } });
}

/** Reject the pending resume plan: record who, when and why, and halt the task. */
export async function rejectTask(env: OperationEnv, taskId: string, opts: { reason: string; actor?: string }): Promise<EngineOutcome> {
  const reason = opts.reason?.trim();
  if (!reason) throw new OperationError('invalid', 'a rejection needs a reason (--reason TEXT); nothing was written');
  const first = await loadForWrite(env.store, taskId);
  if (!first.recovery.pending_approval) {
    throw new OperationError('no-approval', `task ${taskId} has no pending approval (its status is ${first.status}); nothing was written`);
  }
  const actor = opts.actor ?? defaultActor(env);
  return withLease(env, taskId, 'reject', false, async (lease) => {
    const cp = await loadForWrite(env.store, taskId);
    const pending = cp.recovery.pending_approval;
    if (!pending) throw new OperationError('no-approval', `task ${taskId} no longer has a pending approval; nothing was written`);
    const engine = engineFor(env, null, cp, lease);
    const at = new Date().toISOString();
    await engine.save(
      (d) => {
        d.recovery.decisions.push({ approval_id: pending.id, decision: 'rejected', by: actor, at, reason });
        d.recovery.pending_approval = null;
        d.status = 'halted';
        d.resume_hint = `halted: resume plan ${pending.id} rejected by ${actor} at ${at}: ${reason}`;
      },
      { source: { kind: 'approval', actor, note: `resume plan ${pending.id} rejected: ${reason}` } },
    );
    await engine.event({ type: 'runner', data: { status: 'halted', by: actor, reason } });
    return engine.outcome('halted', `task ${taskId} halted: ${actor} rejected the resume plan (${reason})`, null);
  });
}

// ---- human edits ----------------------------------------------------------------------------

/** The steps after an edited one that ran on its old value, and so run again (unless a person keeps them). */
const RERUN_ON_EDIT: ReadonlySet<string> = new Set(['done', 'failed', 'running']);

/**
 * Replace a step's result with a human's value.
 *
 * A halted task (its resume plan rejected) is refused: the rejection stands.
 * The value must satisfy the step's output schema. The step becomes done with
 * that result. With `later: 'rerun'` (the default) the later steps go back to
 * pending, since they were computed from the old value, and the next resume
 * continues right after the edited step; with `later: 'keep'` a person says
 * they still stand, and they stay as they are.
 */
export async function editStepResult(
  env: OperationEnv,
  taskId: string,
  stepRef: string,
  value: unknown,
  opts: { actor?: string; expectedVersion?: number; later?: 'rerun' | 'keep' } = {},
): Promise<EngineOutcome> {
  const check = (cp: Checkpoint) => {
    // The value was chosen looking at `expectedVersion`; written over a later version it would silently undo what that version did.
    if (opts.expectedVersion !== undefined && cp.version !== opts.expectedVersion) {
      throw new OperationError(
        'moved',
        `task ${taskId} moved on to version ${cp.version} since version ${opts.expectedVersion} was opened for editing; look at the new version and edit again. Nothing was written.`,
      );
    }
    if (cp.status === 'halted') {
      // An edit would put the task back in motion: the rejection stands until a human starts a new task.
      const last = cp.recovery.decisions.at(-1);
      throw new OperationError(
        'halted',
        `task ${taskId} is halted${last ? ` (its resume plan was rejected by ${last.by} at ${last.at}${last.reason ? `: ${last.reason}` : ''})` : ''}; ` +
          'its steps cannot be edited, since an edit would resume it. Nothing was written.',
      );
    }
    const index =
      cp.plan.findIndex((s) => s.id === stepRef) >= 0
        ? cp.plan.findIndex((s) => s.id === stepRef)
        : cp.plan.findIndex((s) => s.name === stepRef);
    if (index < 0) {
      throw new OperationError(
        'unknown-step',
        `task ${taskId} has no step "${stepRef}"; its steps are: ${cp.plan.map((s) => s.id).join(', ')}. Nothing was written.`,
      );
    }
    const step = cp.plan[index];
    const problems = validateAgainstSchema(step.output_schema, value);
    if (problems.length > 0) {
      throw new OperationError(
        'invalid',
        `the value does not fit step ${step.id}'s output schema: ${problems.join('; ')}. Nothing was written.`,
      );
    }
    return index;
  };
  check(await loadForWrite(env.store, taskId));
  const actor = opts.actor ?? defaultActor(env);
  return withLease(env, taskId, 'edit', false, async (lease) => {
    const cp = await loadForWrite(env.store, taskId);
    const index = check(cp);
    const step = cp.plan[index];
    const before = step.result_ref ? await env.store.readBlob(taskId, step.result_ref) : (step.result ?? null);
    const engine = engineFor(env, null, cp, lease);
    const at = new Date().toISOString();
    const hadPending = cp.recovery.pending_approval !== null && cp.recovery.pending_approval !== undefined;
    const goOn = await continuation(env.root, cp);
    const rerunFrom = opts.later === 'keep' ? -1 : cp.plan.findIndex((x, i) => i > index && RERUN_ON_EDIT.has(x.status));
    const phase = rerunFrom >= 0 ? await rerunPhase(env.store, cp, rerunFrom) : null;
    await engine.save(
      (d) => {
        const s = own(d.plan, index);
        if (s.status === 'failed' && s.error) {
          d.errors.push({
            at,
            step_id: s.id,
            what: s.error.message,
            fix: `result replaced by a human edit (${actor})`,
            verification: s.output_schema
              ? "the value satisfies the step's output schema"
              : 'no output schema is declared; the value was accepted as given',
          });
        }
        Object.assign(s, { status: 'done', error: null, finished_at: at, edited: { by: actor, at } });
        delete (s as { result?: unknown }).result;
        const later = opts.later === 'keep' ? [] : d.plan.slice(index + 1);
        const reset = new Set(later.filter((x) => RERUN_ON_EDIT.has(x.status)).map((x) => x.id));
        for (let i = index + 1; i < d.plan.length; i++) {
          if (reset.has(d.plan[i].id))
            Object.assign(own(d.plan, i), { status: 'pending', result_ref: null, error: null, finished_at: null });
        }
        d.artifacts = d.artifacts.filter((a) => !(a.step_id && reset.has(a.step_id)));
        d.recovery.pending_approval = null;
        const next = d.plan.slice(index + 1).find((x) => x.status !== 'done' && x.status !== 'skipped');
        d.status = next ? 'waiting_human' : 'done';
        if (!next) d.phase = DONE_PHASE;
        else if (phase !== null) d.phase = phase;
        d.resume_hint = next
          ? `${s.id} was set by ${actor}; resume continues at ${next.id} (${next.name}): ${hintText(goOn)}${hadPending ? ' (the pending resume plan was dropped: it no longer applies)' : ''}`
          : `${s.id} was set by ${actor}; every step is finished`;
      },
      { results: { [step.id]: value }, source: { kind: 'human-edit', actor, edit: { step_id: step.id, before, after: value } } },
    );
    await engine.event({ type: 'runner', data: { status: 'edited', step_id: step.id, by: actor } });
    const after = engine.checkpoint;
    return engine.outcome(
      after.status,
      `step ${step.id} of ${taskId} now has the edited result (version ${after.version})`,
      after.status === 'done' ? null : `continue: ${goOn.text}`,
    );
  });
}
