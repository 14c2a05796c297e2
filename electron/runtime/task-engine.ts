/**
 * The engine that drives one task under its lease: it runs the agent's steps
 * and saves the checkpoint at the five boundaries (a step or phase completes;
 * before and after each side effect; after each LLM call; before waiting for a
 * human; after recovering from an error).
 *
 * Every write goes through `save`, which follows the last saved version, so a
 * crash at any instant leaves the newest complete version as the truth, and a
 * resume continues from it.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { validateAgainstSchema } from '../../shared/checkpoint/output-schema.js';
import type {
  Artifact,
  Checkpoint,
  HistoryMessage,
  PlanStep,
  SideEffect,
  TaskStatus,
  VersionSource,
} from '../../shared/checkpoint/schema.js';
import { canonicalJson } from '../../shared/checkpoint/canonical-json.js';
import { expectedCurrentStep, expectedCurrentStepSince } from '../../shared/checkpoint/invariants.js';
import { StoreWriteError, type CheckpointStore, type TaskEvent } from '../store/store-types.js';
import { WriteLimitError } from '../store/write-limits.js';
import { writeFileAtomic as writeFileDurably } from '../store/atomic-file.js';
import { nodeFs } from '../store/store-fs.js';
import { isSealed } from '../store/frozen-json.js';
import { artifactBaseDir, sha256File } from '../verify/verify-task.js';
import type { ChatMessage, Completion, CompletionOptions, LlmProvider } from '../llm/provider.js';
import { LlmCallError } from '../llm/provider.js';
import { estimateCostUsd } from '../llm/cost.js';
import { redactSecrets, redactSecretsIn } from '../llm/provider-from-env.js';
import type { AnyAgent, CostlyAction, EffectSpec, ProbeResult, ResumeContext, TaskContext } from './define-agent.js';
import { LeaseLostError, TaskFolderGoneError } from '../store/lease-rules.js';
import { PostgresStoreError } from '../store/postgres/pg-errors.js';
import type { TaskLease } from '../store/store-types.js';
import type { StopRequest } from '../store/stop-request.js';
import { closeDraft, copyForAgent, detached, draftOf, freezeDraft, jsonCopy, own, ownWhere } from './checkpoint-draft.js';
import { messageOf } from '../../shared/api/error-codes.js';
import { commandHint } from './command-hint.js';
import { continuation, hintText } from './continue-hint.js';
import { DONE_PHASE } from './task-phase.js';

/** How a drive of a task ended. */
export interface EngineOutcome {
  task_id: string;
  status: TaskStatus;
  version: number;
  /** What happened, in a sentence. */
  message: string;
  /** What a human can do next, when anything; a command line where possible. */
  next: string | null;
  /** The run ended because a person stopped it (the task is left interrupted, and is not retried automatically). */
  stopped?: boolean;
}

/** Thrown by `waitForHuman` to unwind the agent once the wait is saved. */
export class WaitForHumanSignal extends Error {
  constructor(readonly reason: string) {
    super(`waiting for a human: ${reason}`);
  }
}

/** Thrown at a safe boundary when a person asked the run to stop; unwinds the agent before anything more is done. */
export class StopSignal extends Error {
  constructor(readonly request: StopRequest) {
    super(`stopped by ${request.by}`);
  }
}

/** A step threw; its failure is already saved. */
export class StepFailedError extends Error {
  constructor(
    readonly stepId: string,
    readonly causeMessage: string,
  ) {
    super(`step ${stepId} failed: ${causeMessage}`);
  }
}

/** A step returned a value its declared output schema rejects. */
class StepOutputError extends Error {}

/**
 * The store itself could not be used (a database out of reach or refusing, a save cut off by a dropped connection):
 * not the agent's failure, so the run ends there, recording nothing more, and the task stays at its last saved
 * version, as after a crash (the worker says so, with the command that continues it).
 */
function isStoreFault(err: unknown): err is PostgresStoreError {
  return err instanceof PostgresStoreError;
}

/** The store refused a checkpoint because it does not fit the schema (the agent's doing, not the disk's): nothing was written. */
export function isSchemaRefusal(err: unknown): err is StoreWriteError {
  // A value over a reader's limit (write-limits.ts) is refused like a value the schema refuses.
  return err instanceof WriteLimitError || (err instanceof StoreWriteError && err.problems.some((p) => p.reason === 'schema'));
}

export interface EngineDeps {
  store: CheckpointStore;
  llm: LlmProvider;
  /** The lease this engine drives under; checked before every write. */
  lease: TaskLease | null;
  env?: NodeJS.ProcessEnv;
  /** Progress lines for a human watching (the CLI prints them). */
  report?: (line: string) => void;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Drives one task. Create one per drive; it is not reusable across processes.
 */
export class TaskEngine {
  private working: Checkpoint;
  private readonly root: string;
  private readonly env: NodeJS.ProcessEnv;
  private saveChain: Promise<unknown> = Promise.resolve();
  /** Messages of model replies the working state records and no save has carried yet (see saveSoon). */
  private unsaved: HistoryMessage[] = [];
  private flushAsked = false;
  /** While a save is being written: the changes made to the working state since it was drafted (see edit). */
  private editsInFlight: ((d: Checkpoint) => void)[] | null = null;
  private currentStep: string | null = null;
  /** Where the running step was in the plan when it started: where planIndex looks first. */
  private currentIndex = -1;
  private callIndex = 0;
  private waitIndex = 0;
  private pendingArtifacts = new Map<string, Artifact>();
  private stepRecovery: { what: string; fix: string; verification: string } | null = null;
  private readonly llmCache = new Map<string, Completion>();
  /** Results of `ctx.remember` actions saved by an earlier, interrupted attempt: call key -> JSON text. */
  private readonly rememberedResults = new Map<string, string>();
  private rememberKeys = new Set<string>();
  /** The resume point of the last plan asked about, from which the next is found by what changed (expectedCurrentStepSince). */
  private progress: { plan: readonly PlanStep[]; current: number };
  private readonly driveStarted = Date.now();
  private readonly elapsedBefore: number;
  private readonly abort = new AbortController();

  constructor(
    private readonly deps: EngineDeps,
    private readonly agent: AnyAgent | null,
    root: string,
    checkpoint: Checkpoint,
    private resumed: ResumeContext | null = null,
  ) {
    this.root = root;
    // A version the store just saved is sealed and shared as it is (the store diffs the next save against it by
    // identity); any other is copied once, and frozen like every saved version after it (checkpoint-draft.ts).
    this.working = isSealed(checkpoint) ? checkpoint : freezeDraft(structuredClone(checkpoint));
    this.progress = { plan: this.working.plan, current: expectedCurrentStep(this.working.plan) };
    this.env = deps.env ?? process.env;
    this.elapsedBefore = checkpoint.run.elapsed_ms ?? 0;
  }

  /** The state as of the last save, with the changes the next save will carry; deeply frozen. */
  get checkpoint(): Checkpoint {
    return this.working;
  }

  /** Change the working state without saving it (saved with the next save), by the same rules as a save's `mutate`. */
  private edit(mutate: (d: Checkpoint) => void): void {
    const d = draftOf(this.working);
    mutate(d);
    this.working = freezeDraft(d);
    // A save in flight was drafted before this change: it is made again on what that save returns.
    this.editsInFlight?.push(mutate);
  }

  /** Set the context a resumed agent starts from (built after effects are reconciled). */
  setResumeContext(context: ResumeContext): void {
    this.resumed = context;
  }

  /** Abort the agent (lease lost, host shutting down); the current write, if any, still completes. */
  cancel(reason: string): void {
    this.abort.abort(new Error(reason));
  }

  private redact(text: string): string {
    return redactSecrets(text, this.env);
  }

  /** A safe boundary: unwind the agent when a person asked this run to stop (checked before a step starts and before an effect). */
  private async checkStop(): Promise<void> {
    const request = (await this.deps.lease?.stopRequest()) ?? null;
    if (request) throw new StopSignal(request);
  }

  private report(line: string): void {
    this.deps.report?.(this.redact(line));
  }

  /** Append an event; a failed append is reported but never fails the task, whose truth is the versions. */
  async event(event: Omit<TaskEvent, 'id' | 'task_id' | 'at'>): Promise<void> {
    // Not even an event goes into a folder that is no longer the task's (see TaskFolderGoneError), nor after a
    // takeover; the next save then stops the run with the reason.
    try {
      this.deps.lease?.assertHeld();
    } catch {
      return;
    }
    try {
      await this.deps.store.appendEvent(this.working.task_id, event);
    } catch (err) {
      this.report(`could not append a ${event.type} event: ${messageOf(err)}`);
    }
  }

  /**
   * Save the next version: apply `mutate` to a draft of the working state,
   * derive the counters, and write it after the last saved version. Saves are
   * serialised.
   *
   * The draft (checkpoint-draft.ts) copies the top level and its lists, not
   * their elements: `mutate` assigns fields and pushes to lists, and changes
   * an element only through `own`, so every part it does not touch is still
   * the saved version's object and the store diffs, validates and serialises
   * only the change. The saved version the store returns is frozen and becomes
   * the working state as it is: a save never copies the whole checkpoint.
   */
  save(
    mutate: (d: Checkpoint) => void,
    extra: {
      results?: Record<string, unknown>;
      appendHistory?: HistoryMessage[];
      source?: VersionSource;
      /** Point the resume hint at the step a resume would start from once this change is made. */
      hintNextStep?: boolean;
      /** Save only when a change made with saveSoon is still unsaved; else return the working state. */
      onlyUnsaved?: boolean;
    } = {},
  ): Promise<Checkpoint> {
    const run = async () => {
      if (extra.onlyUnsaved && this.unsaved.length === 0) return this.working;
      this.deps.lease?.assertHeld();
      // Mutate a draft: a save the store refuses (an agent handed it something that is not a valid
      // checkpoint) must not leave its changes in the working state for the next save to repeat.
      const d = draftOf(this.working);
      mutate(d);
      closeDraft(d);
      d.total_steps = d.plan.length;
      d.current_step = this.currentStepOf(d.plan);
      if (extra.hintNextStep) d.resume_hint = hintAt(d.plan, d.current_step);
      d.run.updated_at = new Date().toISOString();
      d.run.elapsed_ms = this.elapsedBefore + (Date.now() - this.driveStarted);
      d.source = extra.source ?? { kind: 'runtime' };
      const { version, ...rest } = d;
      // What saveSoon left unsaved goes with this save, before its own messages; back in line if it fails.
      const carried = this.unsaved;
      this.unsaved = [];
      this.editsInFlight = [];
      let res;
      try {
        res = await this.deps.store.save(d.task_id, {
          expectedVersion: version,
          checkpoint: rest,
          results: extra.results,
          appendHistory: carried.length ? [...carried, ...(extra.appendHistory ?? [])] : extra.appendHistory,
          lease: this.deps.lease ?? undefined,
        });
      } catch (err) {
        // The working state was not replaced, so it still holds the changes made meanwhile.
        this.editsInFlight = null;
        this.unsaved.unshift(...carried);
        throw err;
      }
      const late = this.editsInFlight ?? [];
      this.editsInFlight = null;
      this.working = res.checkpoint;
      // The saved plan is the draft's, parsed: it has the same resume point, and the next draft is a copy of it.
      this.progress = { plan: this.working.plan, current: d.current_step };
      for (const m of late) this.edit(m);
      return this.working;
    };
    const next = this.saveChain.then(run, run);
    this.saveChain = next.catch(() => undefined);
    return next;
  }

  /**
   * Record a change in the working state now, and make it durable with the
   * next save or, when none comes first, on its own once the event loop
   * turns. A model reply is saved this way: a step that returns at once saves
   * the reply with its result, in one version, where two saves cost twice the
   * step's time; a step that goes on to wait for anything (another call, an
   * effect, a timer, I/O) has its reply saved before that wait ends. An
   * effect, a wait for a human and every other boundary save first, so
   * nothing the agent does through the context acts on a reply that is not
   * saved.
   */
  private saveSoon(mutate: (d: Checkpoint) => void, appendHistory: HistoryMessage[]): void {
    this.edit(mutate);
    this.unsaved.push(...appendHistory);
    if (this.flushAsked) return;
    this.flushAsked = true;
    setImmediate(() => {
      this.flushAsked = false;
      // A failed save puts the messages back for the next one, which reports what is wrong.
      this.save(() => undefined, { onlyUnsaved: true, source: boundary('model reply') }).catch((err: unknown) => {
        this.report(`could not save a model reply yet: ${messageOf(err)}; it goes with the next save`);
      });
    });
  }

  private stepIndex(idOrName: string): number {
    const plan = this.working.plan;
    // An agent runs its steps in order, so the step asked for is nearly always the one a resume starts from.
    const next = this.working.current_step;
    if (plan[next]?.id === idOrName) return next;
    const byId = plan.findIndex((s) => s.id === idOrName);
    return byId >= 0 ? byId : plan.findIndex((s) => s.name === idOrName);
  }

  /**
   * Where step `id` is in `plan` (the working state's, or a draft of it): at
   * the running step's index as a rule, since the saves and calls of a step
   * all look for it, and a scan of a 10,000-step plan costs 0.3 to 0.6 ms.
   */
  private planIndex(plan: readonly PlanStep[], id: string): number {
    const at = this.currentIndex;
    return at >= 0 && plan[at]?.id === id ? at : plan.findIndex((s) => s.id === id);
  }

  /** Step `id` of the working state, if the plan has it. */
  private planStep(id: string | null): PlanStep | undefined {
    if (id === null) return undefined;
    const plan = this.working.plan;
    const i = this.planIndex(plan, id);
    return i >= 0 ? plan[i] : undefined;
  }

  /** Step `id` of a draft, made the draft's own (see `own`); undefined when the plan has no such step. */
  private ownStep(d: Checkpoint, id: string): PlanStep | undefined {
    const i = this.planIndex(d.plan, id);
    return i >= 0 ? own(d.plan, i) : undefined;
  }

  private async storedResult(step: PlanStep): Promise<unknown> {
    if (step.result_ref) return copyForAgent(await this.deps.store.readBlob(this.working.task_id, step.result_ref));
    return copyForAgent(step.result ?? null);
  }

  /** Where a resume of `plan` starts (see progress). */
  private currentStepOf(plan: readonly PlanStep[]): number {
    const current = expectedCurrentStepSince(plan, this.progress);
    this.progress = { plan, current };
    return current;
  }

  /**
   * Load cached LLM replies and remembered action results from the history,
   * so a rerun step does not pay for the same work twice.
   */
  async loadLlmCache(): Promise<void> {
    if (!this.working.history?.count) return;
    const messages = await this.deps.store.readHistory(this.working.task_id);
    for (const m of messages) {
      const meta = m as HistoryMessage & {
        call_key?: string;
        remember_key?: string;
        model?: string;
        tokens_in?: number;
        tokens_out?: number;
      };
      if (m.role === 'tool' && typeof meta.remember_key === 'string' && typeof meta.call_key === 'string') {
        this.rememberedResults.set(meta.call_key, m.content);
        continue;
      }
      if (m.role === 'assistant' && typeof meta.call_key === 'string') {
        this.llmCache.set(meta.call_key, {
          text: m.content,
          model: meta.model ?? this.deps.llm.model,
          tokens_in: meta.tokens_in ?? 0,
          tokens_out: meta.tokens_out ?? 0,
          latency_ms: 0,
          retries: 0,
          retry_reasons: [],
        });
      }
    }
  }

  // ---- the context the agent sees ----------------------------------------------------------

  private buildContext(): TaskContext<unknown> {
    const cp = this.working;
    const currentPlan = () => this.working.plan.map((s) => ({ id: s.id, name: s.name }));
    return {
      taskId: cp.task_id,
      rootDir: this.root,
      options: copyForAgent(cp.agent?.options ?? {}),
      goal: cp.goal,
      get plan() {
        return currentPlan();
      },
      resumed: this.resumed,
      forkedFrom: cp.forked_from ? { task_id: cp.forked_from.task_id, version: cp.forked_from.version } : null,
      signal: this.abort.signal,
      step: (id, fn) => this.runStep(id, fn),
      skip: (id, reason) => this.skipStep(id, reason),
      effect: (spec) => this.runEffect(spec),
      artifact: (p, opts) => this.recordArtifact(p, opts?.type ?? 'file'),
      writeArtifact: async (p, content, opts) => {
        await writeFileAtomic(this.resolvePath(p), content);
        return this.recordArtifact(p, opts?.type ?? 'file');
      },
      llm: {
        model: this.deps.llm.model,
        complete: (messages, opts) => this.complete(messages, opts),
      },
      remember: (key, action) => this.remember(key, action),
      phase: (name) => this.enterPhase(name),
      waitForHuman: (reason) => this.waitForHuman(reason),
      recordRecovery: (entry) => this.recordRecovery(entry),
      hint: (text) => {
        const clean = this.redact(text);
        this.edit((d) => {
          d.resume_hint = clean;
        });
      },
      log: (message, data) => {
        const clean = this.redact(message);
        this.report(clean);
        const cleanData = data === undefined ? {} : (redactSecretsIn(data, this.env) as Record<string, unknown>);
        void this.event({ type: 'log', step_id: this.currentStep ?? undefined, data: { message: clean, ...cleanData } });
      },
    };
  }

  // ---- steps ---------------------------------------------------------------------------------

  private async runStep<T>(idOrName: string, fn: () => Promise<T> | T): Promise<T> {
    if (typeof idOrName !== 'string' || idOrName.length === 0)
      throw new Error(`ctx.step needs a step id (a non-empty string), got ${JSON.stringify(idOrName)}`);
    if (this.currentStep !== null) {
      throw new Error(`step "${idOrName}" was started inside step "${this.currentStep}"; steps do not nest`);
    }
    let index = this.stepIndex(idOrName);
    if (index < 0) {
      // A step the plan did not list: appended, so it is tracked and skipped on resume like any other.
      this.edit((d) => {
        d.plan.push({ id: idOrName, name: idOrName, status: 'pending', attempts: 0 });
      });
      index = this.working.plan.length - 1;
    }
    const listed = this.working.plan[index];
    if (listed.status === 'done' || listed.status === 'skipped') {
      this.report(`${listed.id} (${listed.name}): already ${listed.status}, stored result reused`);
      return (await this.storedResult(listed)) as T;
    }

    await this.checkStop();
    // The check awaited: a step started meanwhile (steps run in parallel by mistake) is refused as a nested one.
    if (this.currentStep !== null) {
      throw new Error(`step "${idOrName}" was started inside step "${this.currentStep}"; steps do not nest`);
    }
    const id = listed.id;
    const failuresBefore = listed.failures ?? 0;
    const previousError = listed.error ?? null;
    this.currentStep = id;
    this.currentIndex = index;
    this.callIndex = 0;
    this.waitIndex = 0;
    this.rememberKeys = new Set();
    this.pendingArtifacts.clear();
    this.stepRecovery = null;
    const started = Date.now();
    this.edit((d) => {
      Object.assign(own(d.plan, index), {
        status: 'running',
        started_at: new Date().toISOString(),
        finished_at: null,
        attempts: (listed.attempts ?? 0) + 1,
      });
      d.status = 'running';
    });
    const step = this.working.plan[index];
    this.report(`${id} (${step.name}): started (attempt ${step.attempts})`);
    await this.event({ type: 'step-start', step_id: id, data: { name: step.name, attempt: step.attempts } });

    let value: T;
    try {
      value = await fn();
      // Checked against the stored JSON Schema, the same rule a human edit must pass.
      const problems = validateAgainstSchema(step.output_schema, JSON.parse(JSON.stringify(value ?? null)));
      if (problems.length > 0) throw new StepOutputError(`the result does not match the step's output schema: ${problems.join('; ')}`);
    } catch (err) {
      this.currentStep = null;
      if (
        err instanceof WaitForHumanSignal ||
        err instanceof LeaseLostError ||
        err instanceof StopSignal ||
        isStoreFault(err) ||
        this.abort.signal.aborted
      )
        throw err;
      const kind =
        err instanceof LlmCallError
          ? 'llm'
          : err instanceof StepOutputError
            ? 'output-schema'
            : isSchemaRefusal(err)
              ? 'invalid-checkpoint'
              : (err as Error)?.name || 'error';
      return this.failStep(id, started, failuresBefore, this.redact(messageOf(err)), kind);
    }

    const result = scrubbedResult(value === undefined ? null : value, this.env);
    const recovery =
      this.stepRecovery ??
      (previousError
        ? { what: previousError.message, fix: `reran the step on resume (attempt ${step.attempts})`, verification: `step ${id} completed` }
        : null);
    try {
      await this.save(
        (d) => {
          const s = this.ownStep(d, id)!;
          Object.assign(s, {
            status: 'done',
            finished_at: new Date().toISOString(),
            elapsed_ms: (s.elapsed_ms ?? 0) + (Date.now() - started),
            error: null,
          });
          for (const a of this.pendingArtifacts.values()) upsertArtifact(d, a);
          if (recovery) d.errors.push({ at: new Date().toISOString(), step_id: id, ...recovery });
        },
        { results: { [id]: result }, hintNextStep: true, source: boundary(`step ${id} done`) },
      );
    } catch (err) {
      if (!isSchemaRefusal(err)) throw err;
      // The agent handed over something the checkpoint cannot hold: the step fails with the store's reason, the task stays valid.
      this.currentStep = null;
      this.pendingArtifacts.clear();
      return this.failStep(
        id,
        started,
        failuresBefore,
        `the step's outcome cannot be saved as a valid checkpoint: ${this.redact(messageOf(err))}`,
        'invalid-checkpoint',
      );
    }
    this.pendingArtifacts.clear();
    this.currentStep = null;
    this.report(`${id}: done`);
    await this.event({ type: 'step-finish', step_id: id, data: { status: 'done', elapsed_ms: Date.now() - started } });
    return value;
  }

  /** Save a step's failure, report it, and unwind the agent. */
  private async failStep(id: string, started: number, failuresBefore: number, message: string, kind: string): Promise<never> {
    await this.save(
      (d) => {
        const s = this.ownStep(d, id)!;
        Object.assign(s, {
          status: 'failed',
          finished_at: new Date().toISOString(),
          elapsed_ms: (s.elapsed_ms ?? 0) + (Date.now() - started),
          error: { message, kind, at: new Date().toISOString() },
          failures: failuresBefore + 1,
        });
        d.status = 'failed';
        d.resume_hint = `${id} (${s.name}) failed: ${message}. Fix the cause and run \`${commandHint(d, 'resume')}\`, or set its result with \`${commandHint(d, 'edit', ` ${id} --value JSON`)}\``;
      },
      { source: boundary(`step ${id} failed`) },
    );
    this.report(`${id}: failed: ${message}`);
    await this.event({ type: 'step-finish', step_id: id, data: { status: 'failed', error: message } });
    throw new StepFailedError(id, message);
  }

  private async skipStep(idOrName: string, reason: string): Promise<void> {
    const index = this.stepIndex(idOrName);
    if (index < 0) throw new Error(`cannot skip step "${idOrName}": it is not in the plan`);
    const step = this.working.plan[index];
    if (step.status === 'done' || step.status === 'skipped') return;
    await this.save(
      (d) => {
        const s = own(d.plan, index);
        Object.assign(s, { status: 'skipped', finished_at: new Date().toISOString(), error: null, skip_reason: this.redact(reason) });
      },
      { hintNextStep: true, source: boundary(`step ${step.id} skipped`) },
    );
    await this.event({ type: 'step-finish', step_id: step.id, data: { status: 'skipped', reason } });
  }

  // ---- side effects ---------------------------------------------------------------------------

  /**
   * The ledger entry that answers for the key an agent asks with: the entry
   * with that key, or the one that records it as its `asked_key` (a repeat a
   * person chose, an effect carried into a fork); a superseded entry never.
   */
  private effectIndex(key: string): number {
    return this.working.side_effects.findIndex((e) => !e.superseded_by && (e.asked_key ?? e.idempotency_key) === key);
  }

  private probeFor<T>(spec: EffectSpec<T>): ((e: SideEffect) => Promise<ProbeResult>) | null {
    if (spec.probe) return spec.probe;
    const agentProbe = this.agent?.probes?.[spec.type];
    return agentProbe ? (e) => agentProbe(e, copyForAgent(this.working.agent?.options ?? {})) : null;
  }

  private async runEffect<T>(spec: EffectSpec<T>): Promise<T> {
    if (typeof spec?.type !== 'string' || !spec.type || typeof spec.key !== 'string' || !spec.key || typeof spec.perform !== 'function') {
      throw new Error('ctx.effect needs a type and an idempotency key (non-empty strings) and a perform function');
    }
    const stepId = this.currentStep ?? undefined;
    const probe = this.probeFor(spec);
    let i = this.effectIndex(spec.key);
    if (i >= 0) {
      const e = this.working.side_effects[i];
      if (e.status === 'done') {
        this.report(`effect ${e.type} (key ${e.idempotency_key}): already done, not performed again`);
        return copyForAgent(e.outcome) as T;
      }
      if (e.status === 'intent' || e.status === 'uncertain') {
        // Not settled while resuming (no agent-level probe): ask the outside world now, before acting.
        if (!probe) {
          await this.waitForHuman(
            `side effect ${e.type} (key ${e.idempotency_key}) may or may not have happened and has no probe; ` +
              `check by hand, then resume with --effect-happened or --effect-not-happened ${e.idempotency_key}`,
          );
        } else {
          const settled = await this.settleByProbe(e, probe);
          if (settled.happened) return copyForAgent(settled.outcome) as T;
        }
      }
    }
    await this.checkStop();
    i = this.effectIndex(spec.key);
    if (i < 0) {
      this.edit((d) => {
        d.side_effects.push({
          id: `effect-${d.side_effects.length + 1}`,
          type: spec.type,
          status: 'not_started',
          idempotency_key: spec.key,
          step_id: stepId,
          attempts: 0,
        });
      });
      i = this.working.side_effects.length - 1;
    }
    const effectId = this.working.side_effects[i].id;
    // A repeat chosen by a person runs under its own, new key.
    const key = this.working.side_effects[i].idempotency_key;
    const byId = (d: Checkpoint) => ownWhere(d.side_effects, (e) => e.id === effectId)!;
    // The request is recorded as JSON: the state never holds the agent's own object.
    const request = detached(spec.request);

    // Before: the intent, with the key, is durable before anything leaves the process.
    await this.save(
      (d) => {
        const e = byId(d);
        Object.assign(e, {
          status: 'intent',
          attempts: (e.attempts ?? 0) + 1,
          request,
          has_probe: probe !== null,
          step_id: e.step_id ?? stepId,
          updated_at: new Date().toISOString(),
        });
      },
      { source: effectBoundary(spec.type, key, 'intent') },
    );
    await this.event({ type: 'effect', step_id: stepId, data: { effect: effectId, type: spec.type, key, status: 'intent' } });
    let outcome: T;
    try {
      outcome = await spec.perform(key);
    } catch (err) {
      const message = this.redact(messageOf(err));
      // A failed call may still have reached the service (a reply lost on the way back): only a probe can tell.
      await this.save(
        (d) => {
          Object.assign(byId(d), { status: 'uncertain', error: message, reconciliation: null, updated_at: new Date().toISOString() });
        },
        { source: effectBoundary(spec.type, key, 'uncertain') },
      );
      await this.event({ type: 'effect', step_id: stepId, data: { effect: effectId, status: 'uncertain', error: message } });
      throw err;
    }
    // After: the outcome, recorded as JSON so that the agent's value and the saved one are never the same object.
    const done = (outcome: unknown, error?: string) =>
      this.save(
        (d) => {
          Object.assign(byId(d), { status: 'done', outcome, error, updated_at: new Date().toISOString() });
        },
        { source: effectBoundary(spec.type, key, 'done') },
      );
    // The effect happened: an outcome the state cannot hold (not JSON, over a write limit) must not leave it an
    // intent, which the next run could only put to a person as "may or may not have happened".
    let unstored: string | null = null;
    let copy: unknown = null;
    try {
      copy = outcome === undefined ? null : jsonCopy(outcome);
    } catch (err) {
      unstored = messageOf(err);
    }
    if (unstored === null) {
      try {
        await done(copy);
      } catch (err) {
        if (!(err instanceof WriteLimitError)) throw err;
        unstored = messageOf(err);
      }
    }
    if (unstored !== null) {
      unstored = this.redact(unstored);
      await done(null, `it happened; its outcome could not be stored: ${unstored}`);
    }
    await this.event({ type: 'effect', step_id: stepId, data: { effect: effectId, status: 'done' } });
    if (unstored !== null) {
      throw new Error(
        `effect ${spec.type} (key ${key}) happened, but its outcome could not be stored (${unstored}): it is recorded as done ` +
          'without it and is not performed again; return plain JSON from perform',
      );
    }
    this.report(`effect ${spec.type} (key ${key}): done`);
    return outcome;
  }

  /**
   * Ask the outside world about one uncertain effect and record the answer:
   * done with the probed outcome, or cleared for a retry with the same key.
   */
  async settleByProbe(effect: SideEffect, probe: (e: SideEffect) => Promise<ProbeResult>): Promise<ProbeResult> {
    const result = await probe(copyForAgent(effect));
    const outcome = result.happened ? detached(result.outcome ?? null) : null;
    await this.save(
      (d) => {
        const e = ownWhere(d.side_effects, (x) => x.id === effect.id)!;
        if (result.happened) {
          Object.assign(e, {
            status: 'done',
            outcome,
            reconciliation: 'probed-done',
            updated_at: new Date().toISOString(),
          });
        } else {
          Object.assign(e, { status: 'not_started', reconciliation: 'probed-absent-retried', updated_at: new Date().toISOString() });
        }
      },
      {
        source: effectBoundary(effect.type, effect.idempotency_key, result.happened ? 'probed, it happened' : 'probed, it did not happen'),
      },
    );
    await this.event({
      type: 'effect',
      step_id: effect.step_id,
      data: {
        effect: effect.id,
        status: result.happened ? 'done' : 'not_started',
        reconciliation: result.happened ? 'probed-done' : 'probed-absent-retried',
      },
    });
    this.report(
      `effect ${effect.type} (key ${effect.idempotency_key}): probed, ${result.happened ? 'it happened; marked done' : 'it did not happen; will retry with the same key'}`,
    );
    return result;
  }

  // ---- artifacts ------------------------------------------------------------------------------

  private resolvePath(p: string): string {
    return path.resolve(artifactBaseDir(this.root, this.working), p);
  }

  private async recordArtifact(p: string, type: string): Promise<Artifact> {
    const abs = this.resolvePath(p);
    // Streamed: an artifact can be larger than any buffer the process should hold.
    const hashed = await sha256File(abs);
    const base = artifactBaseDir(this.root, this.working);
    const rel = path.relative(base, abs);
    // Inside the base, a relative path keeps the task portable with its directory; outside, the absolute path is the only honest name.
    const recorded = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : abs;
    const artifact: Artifact = {
      type,
      path: recorded,
      sha256: hashed.sha256,
      size: hashed.size,
      status: 'written',
      ...(this.currentStep ? { step_id: this.currentStep } : {}),
    };
    if (this.currentStep) {
      // Recorded with the step's completion: a file from a step that never finished is not yet a promise to check.
      this.pendingArtifacts.set(recorded, artifact);
    } else {
      await this.save((d) => upsertArtifact(d, artifact), { source: boundary(`artifact ${artifact.path}`) });
    }
    // The agent's copy: what it changes is not what the next save records.
    return { ...artifact };
  }

  // ---- the model ------------------------------------------------------------------------------

  private async complete(messages: ChatMessage[], opts: CompletionOptions = {}): Promise<Completion> {
    const stepId = this.currentStep;
    const step = this.planStep(stepId);
    // A failed attempt's replies are not reused (they may be why it failed); an interrupted attempt's are.
    const callKey = `${stepId ?? '-'}#${attemptTag(step)}#${this.callIndex++}:${sha256(canonicalJson(messages)).slice(0, 16)}`;
    const cached = this.llmCache.get(callKey);
    if (cached) {
      this.report(`${stepId ?? 'task'}: model reply reused from the checkpoint (no new call)`);
      return cached;
    }
    let c: Completion;
    try {
      c = await this.deps.llm.complete(messages, { ...opts, signal: opts.signal ?? this.abort.signal });
    } catch (err) {
      if (err instanceof LlmCallError) {
        // Recorded with the step's failure save: the retries happened and cost time even though the call failed.
        const failed = {
          step_id: stepId ?? undefined,
          model: err.model,
          tokens_in: 0,
          tokens_out: 0,
          latency_ms: err.latency_ms,
          retries: err.retries,
          retry_reasons: [...err.retry_reasons],
          error: this.redact(err.message),
        };
        this.edit((d) => {
          d.run.llm_calls.push(failed);
        });
      }
      throw err;
    }
    const cost = estimateCostUsd(c.model, c.tokens_in, c.tokens_out, this.env);
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    // Saved with the step's next save, or on its own at the next turn of the event loop (saveSoon).
    this.saveSoon(
      (d) => {
        d.run.model = c.model;
        d.run.tokens_in += c.tokens_in;
        d.run.tokens_out += c.tokens_out;
        d.run.cost_usd += cost;
        d.run.llm_calls.push({
          step_id: stepId ?? undefined,
          model: c.model,
          tokens_in: c.tokens_in,
          tokens_out: c.tokens_out,
          latency_ms: c.latency_ms,
          retries: c.retries,
          retry_reasons: [...c.retry_reasons],
          cost_usd: cost,
        });
        const s = stepId ? this.ownStep(d, stepId) : undefined;
        if (s) {
          s.tokens_in = (s.tokens_in ?? 0) + c.tokens_in;
          s.tokens_out = (s.tokens_out ?? 0) + c.tokens_out;
        }
      },
      [
        ...(lastUser ? [{ role: 'user', content: this.redact(lastUser.content), step_id: stepId, call_key: callKey }] : []),
        {
          role: 'assistant',
          content: c.text,
          step_id: stepId,
          call_key: callKey,
          model: c.model,
          tokens_in: c.tokens_in,
          tokens_out: c.tokens_out,
        },
      ],
    );
    this.llmCache.set(callKey, c);
    return c;
  }

  // ---- costly actions ------------------------------------------------------------------------

  private async remember<T>(key: string, action: CostlyAction<T>): Promise<T> {
    if (typeof key !== 'string' || key.length === 0 || typeof action !== 'function') {
      throw new Error('ctx.remember needs a key (a non-empty string) and an action function');
    }
    const stepId = this.currentStep;
    if (this.rememberKeys.has(`${stepId ?? '-'}:${key}`)) {
      throw new Error(`ctx.remember("${key}") was called twice in ${stepId ? `step ${stepId}` : 'the task'}; give each action its own key`);
    }
    this.rememberKeys.add(`${stepId ?? '-'}:${key}`);
    const step = this.planStep(stepId);
    // The same rule as LLM replies: an interrupted attempt's results are reused, a failed attempt's are not.
    const callKey = `remember:${stepId ?? '-'}#${attemptTag(step)}:${key}`;
    const saved = this.rememberedResults.get(callKey);
    if (saved !== undefined) {
      this.report(`${stepId ?? 'task'}: ${key}: result reused from the checkpoint (not run again)`);
      return JSON.parse(saved) as T;
    }
    const started = Date.now();
    const value = await action();
    let json: string;
    try {
      // Saved as JSON with secrets scrubbed; the first run returns what a rerun will, so a step never acts differently after a crash.
      json = JSON.stringify(value === undefined ? null : value, (_k, v: unknown) =>
        typeof v === 'string' ? redactSecrets(v, this.env) : v,
      );
    } catch (err) {
      throw new Error(`ctx.remember("${key}"): the action's result cannot be saved as JSON (${messageOf(err)}); return plain data`, {
        cause: err,
      });
    }
    await this.save(() => undefined, {
      appendHistory: [
        { role: 'tool', content: json, step_id: stepId, call_key: callKey, remember_key: key, elapsed_ms: Date.now() - started },
      ],
      source: boundary(`remembered ${key}`),
    });
    this.rememberedResults.set(callKey, json);
    await this.event({
      type: 'log',
      step_id: stepId ?? undefined,
      data: { message: `${key}: result saved`, remembered: key, elapsed_ms: Date.now() - started },
    });
    return JSON.parse(json) as T;
  }

  // ---- phases, humans, recoveries -------------------------------------------------------------

  private async enterPhase(name: string): Promise<void> {
    if (this.working.phase === name) return;
    const previous = this.working.phase;
    await this.save(
      (d) => {
        d.phase = name;
      },
      { source: boundary(`phase ${name}`) },
    );
    this.report(`phase: ${previous} → ${name}`);
  }

  private async waitForHuman(reason: string): Promise<string | null> {
    const key = `${this.currentStep ?? '-'}:${this.waitIndex++}`;
    const waits = this.working.human_waits ?? [];
    const existing = waits.find((w) => w.key === key);
    if (existing?.resolved_at) return existing.note ?? null;
    const clean = this.redact(reason);
    const stepId = this.currentStep;
    await this.save(
      (d) => {
        // A top-level list, so the draft's own (checkpoint-draft.ts).
        const list = (d.human_waits ??= []);
        if (!list.some((w) => w.key === key)) list.push({ key, reason: clean, requested_at: new Date().toISOString() });
        d.status = 'waiting_human';
        d.resume_hint = `waiting for a human${stepId ? ` in ${stepId}` : ''}: ${clean}. When ready: \`${commandHint(d, 'resume')}\``;
      },
      { source: boundary('waiting for a human') },
    );
    throw new WaitForHumanSignal(clean);
  }

  private async recordRecovery(entry: { what: string; fix: string; verification: string }): Promise<void> {
    const clean = { what: this.redact(entry.what), fix: this.redact(entry.fix), verification: this.redact(entry.verification) };
    if (this.currentStep) this.stepRecovery = clean;
    const stepId = this.currentStep;
    await this.save(
      (d) => {
        d.errors.push({ at: new Date().toISOString(), step_id: stepId, ...clean });
      },
      { source: boundary('recovery recorded') },
    );
    if (this.currentStep) this.stepRecovery = null;
  }

  // ---- the whole drive ------------------------------------------------------------------------

  /**
   * Run the agent to its end, a failure, or a wait, saving as it goes.
   *
   * `onFailure` lets the caller turn a failure into something else before the
   * outcome is reported (confirm mode prepares a resume plan).
   */
  async drive(onFailure?: (engine: TaskEngine) => Promise<EngineOutcome | null>): Promise<EngineOutcome> {
    if (!this.agent) throw new Error('this engine has no agent to drive');
    const ctx = this.buildContext();
    try {
      await this.agent.run(ctx);
      const open = this.working.plan.filter((s) => s.status !== 'done' && s.status !== 'skipped');
      await this.save(
        (d) => {
          d.plan.forEach((s, i) => {
            if (s.status !== 'done' && s.status !== 'skipped')
              Object.assign(own(d.plan, i), { status: 'skipped', skip_reason: 'the agent finished without running it' });
          });
          d.status = 'done';
          d.phase = DONE_PHASE;
          d.resume_hint = 'finished: nothing left to resume';
          d.recovery.auto_attempts = 0;
        },
        { source: boundary('task done') },
      );
      await this.event({ type: 'runner', data: { status: 'done' } });
      const skipped = open.length ? ` (${open.length} step(s) the agent did not run were marked skipped)` : '';
      return this.outcome('done', `task ${this.working.task_id} finished${skipped}`, null);
    } catch (err) {
      if (err instanceof TaskFolderGoneError) {
        // Not a takeover: nobody drives the task now, and this run's end is a failure to say so, not "busy".
        return this.outcome('failed', err.message, 'look for the folder where it went; nothing was written after it moved');
      }
      if (err instanceof LeaseLostError) {
        return this.outcome(this.working.status, err.message, 'another runner took the task over; check it with `waystation tail`');
      }
      if (err instanceof StopSignal) return this.recordStop(err.request);
      if (isStoreFault(err)) throw err;
      if (err instanceof WaitForHumanSignal) {
        await this.event({ type: 'runner', data: { status: 'waiting_human', reason: err.reason } });
        return this.outcome(
          'waiting_human',
          `task ${this.working.task_id} is waiting for a human: ${err.reason}`,
          `when ready: ${commandHint(this.working, 'resume')}`,
        );
      }
      if (!(err instanceof StepFailedError)) {
        // An error outside any step (in the agent's own control flow): recorded so the failure has a reason.
        const message = this.redact(messageOf(err));
        await this.save(
          (d) => {
            d.status = 'failed';
            d.errors.push({ at: new Date().toISOString(), step_id: null, what: message });
            d.resume_hint = `the agent failed outside a step: ${message}. Fix the cause and run \`${commandHint(d, 'resume')}\``;
          },
          { source: boundary('failed outside a step') },
        );
      }
      const replaced = onFailure ? await onFailure(this) : null;
      if (replaced) return replaced;
      await this.event({ type: 'runner', data: { status: 'failed' } });
      return this.outcome(
        'failed',
        `task ${this.working.task_id} failed: ${this.working.resume_hint}`,
        `fix the cause, then: ${commandHint(this.working, 'resume')}`,
      );
    }
  }

  /**
   * Save that a person stopped the run: the task stays `running` with no
   * holder (shown interrupted), and `recovery.stopped` keeps automatic
   * recovery away from it until a person resumes it.
   */
  async recordStop(request: { by: string; at?: string; reason?: string }): Promise<EngineOutcome> {
    const at = request.at ?? new Date().toISOString();
    const reason = request.reason ? this.redact(request.reason) : undefined;
    const next = await continuation(this.root, this.working);
    await this.save(
      (d) => {
        d.status = 'running';
        d.recovery.stopped = { by: this.redact(request.by), at, ...(reason ? { reason } : {}) };
        d.resume_hint = `stopped by ${this.redact(request.by)} at ${at}${reason ? ` (${reason})` : ''}; continue with ${hintText(next)}`;
      },
      { source: { kind: 'stop', actor: this.redact(request.by), note: reason ? `stopped: ${reason}` : 'stopped by a person' } },
    );
    await this.event({ type: 'runner', data: { status: 'stopped', by: request.by, ...(reason ? { reason } : {}) } });
    return {
      ...this.outcome('running', `task ${this.working.task_id} stopped by ${request.by}`, `continue: ${next.text}`),
      stopped: true,
    };
  }

  outcome(status: TaskStatus, message: string, next: string | null): EngineOutcome {
    return { task_id: this.working.task_id, status, version: this.working.version, message: this.redact(message), next };
  }
}

/**
 * What tells one attempt of a step from the next in the keys of its recorded
 * model replies and remembered results: its failures, and the reruns a person
 * asked for (a rewind), so neither replays what an earlier attempt recorded.
 */
/** The resume hint for a plan whose resume starts at step `current`. */
function hintAt(plan: readonly PlanStep[], current: number): string {
  const s = plan[current];
  return s ? `continue at ${s.id} (${s.name})` : 'all steps finished';
}

function attemptTag(step: PlanStep | undefined): string {
  const failures = Number(step?.failures ?? 0);
  const reruns = Number(step?.reruns ?? 0);
  return reruns > 0 ? `${failures}r${reruns}` : String(failures);
}

function upsertArtifact(d: Checkpoint, a: Artifact): void {
  const i = d.artifacts.findIndex((x) => x.path === a.path);
  if (i >= 0) d.artifacts[i] = a;
  else d.artifacts.push(a);
}

/** Write a file so that a crash leaves either the old content or the new, never a torn file. */
export async function writeFileAtomic(file: string, content: string | Uint8Array): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileDurably(nodeFs, file, content);
}

/**
 * A step's result with the secrets of `env` scrubbed from its strings, so a
 * key an agent returned never reaches a checkpoint. A value JSON cannot hold
 * (a cycle, a BigInt) is passed on as it is, for the store to refuse with its reason.
 */
function scrubbedResult(value: unknown, env: NodeJS.ProcessEnv): unknown {
  try {
    return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' ? redactSecrets(v, env) : v))) as unknown;
  } catch {
    return value;
  }
}

/**
 * The source of a version the runtime writes at one of its save boundaries, saying which: the history's line for
 * the version ("step draft done", "effect http-publish (key K): intent"), in the words the Python runtime uses.
 */
function boundary(note: string): VersionSource {
  return { kind: 'runtime', note };
}

/** The source of a save before or after a side effect (see boundary). */
function effectBoundary(type: string, key: string, what: string): VersionSource {
  return boundary(`effect ${type} (key ${key}): ${what}`);
}
