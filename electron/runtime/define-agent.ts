/**
 * What an agent author writes: a name, an options schema, a plan of named
 * steps, and a `run` function that drives those steps through the context.
 */
import type { z } from 'zod';
import type { Artifact, Checkpoint, SideEffect } from '../../shared/checkpoint/schema.js';
import type { ChatMessage, Completion, CompletionOptions } from '../llm/provider.js';

/** One step of an agent's plan, as the agent declares it. */
export interface PlannedStep {
  /** Stable identity: a resumed run matches steps by id. */
  id: string;
  name: string;
  /** What a human edit of this step's result must satisfy (zod, stored as JSON Schema). */
  output_schema?: z.ZodType;
}

/** What the outside world says about an effect whose outcome was never recorded. */
export type ProbeResult = { happened: true; outcome?: unknown } | { happened: false };

/** The facts a probe gets: the recorded effect, with its idempotency key and request. */
export type EffectProbe = (effect: SideEffect) => Promise<ProbeResult>;

export interface EffectSpec<T> {
  /** What kind of effect (`http-publish`, `git-commit`, ...); also picks the agent-level probe. */
  type: string;
  /** The idempotency key: the same key on every attempt of the same effect. */
  key: string;
  /** Recorded with the intent, for humans and probes (never secrets). */
  request?: unknown;
  /** Do it. Receives the idempotency key to pass on to the outside service. */
  perform: (key: string) => Promise<T>;
  /** Ask the outside world whether the effect already happened. Without one, an uncertain effect waits for a human. */
  probe?: EffectProbe;
}

/** The minimal context a resumed run starts from (the fifth step of resuming). */
export interface ResumeContext {
  goal: string;
  /** One line a decision: finished steps, recoveries, human edits and approvals. */
  decisions: string[];
  artifacts: Artifact[];
  next_step: { id: string; name: string } | null;
  resume_hint: string;
}

/**
 * A long or costly action whose result `ctx.remember` keeps (a build, a crawl,
 * a paid API query): its result must be JSON (it is stored in the checkpoint).
 */
export type CostlyAction<T> = () => Promise<T> | T;

export interface LlmAccess {
  readonly model: string;
  /** Call the model. Tokens, latency and retries are recorded, and the checkpoint is saved after the call. */
  complete(messages: ChatMessage[], opts?: CompletionOptions): Promise<Completion>;
}

/** Everything `run` may use. Each method that crosses a save boundary saves. */
export interface TaskContext<O> {
  readonly taskId: string;
  /** The checkpoint directory root. */
  readonly rootDir: string;
  readonly options: O;
  readonly goal: string;
  /** The stored plan (ids and names), which is the truth on resume, not a fresh `plan()`. */
  readonly plan: ReadonlyArray<{ id: string; name: string }>;
  /** Set when this run continues an earlier one. */
  readonly resumed: ResumeContext | null;
  /**
   * Set for a fork: the task and version it was forked from. A fork carries its
   * parent's options, so an option that named the parent's own things (a folder
   * named by its id) names them still.
   */
  readonly forkedFrom: { task_id: string; version: number } | null;
  readonly signal: AbortSignal;
  /**
   * Run a step once. A step already done is not run again: its stored result is returned.
   * `id` is the plan step's id (or its name).
   */
  step<T>(id: string, fn: () => Promise<T> | T): Promise<T>;
  /** Mark a planned step skipped, with the reason, without running it. */
  skip(id: string, reason: string): Promise<void>;
  /** Perform an external side effect at most once, saving its intent before and its outcome after. */
  effect<T>(spec: EffectSpec<T>): Promise<T>;
  /** Record a file the task produced: sha256 and size, checked on resume. */
  artifact(path: string, opts?: { type?: string }): Promise<Artifact>;
  /** Write a file atomically (temp, fsync, rename), then record it as an artifact. */
  writeArtifact(path: string, content: string | Uint8Array, opts?: { type?: string }): Promise<Artifact>;
  readonly llm: LlmAccess;
  /**
   * Run a costly action once and save its result in the checkpoint right after
   * (the third save boundary, for work other than LLM calls). When the step is
   * rerun after a crash or kill, the saved result is returned and the action
   * is not run again; after the step *failed*, it runs afresh, as LLM calls do.
   * `key` names the action within its step (unique there); the result must be JSON.
   */
  remember<T>(key: string, action: CostlyAction<T>): Promise<T>;
  /** Enter a phase; the phase before it is complete, so the checkpoint is saved. */
  phase(name: string): Promise<void>;
  /** Save and stop until a human resumes the task. Returns the human's note once resumed. */
  waitForHuman(reason: string): Promise<string | null>;
  /** Record an error, its fix and how the fix was verified, and save. */
  recordRecovery(entry: { what: string; fix: string; verification: string }): Promise<void>;
  /** Set the hint the next resume starts from. Saved with the next save. */
  hint(text: string): void;
  /** A line for the task's event log (secrets are scrubbed). */
  log(message: string, data?: Record<string, unknown>): void;
}

export interface AgentPlanEnv {
  taskId: string;
  rootDir: string;
  /**
   * What a relative path in the options means: the working directory of
   * `waystation run`, the checkpoint directory when the inspector starts the task.
   */
  baseDir: string;
  /**
   * True when the options came from the inspector (a page, over the API)
   * rather than from a person at a terminal: a path in them must stay inside
   * `rootDir` (`resolveInsideRoot` refuses one that leaves it by `..`, an
   * absolute path or a symbolic link), as every path a page names does.
   */
  confined?: boolean;
}

/** An agent: its plan and how to run it. */
export interface AgentDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** Validates and fills defaults for the options given on the command line or by the host. */
  options: S;
  /**
   * Called once, when a task is created, to fill in options that depend on
   * where the task lives (an output folder under the root, ...). The result is
   * stored, so a resume sees the same options.
   */
  resolveOptions?: (options: z.output<S>, env: AgentPlanEnv) => z.output<S> | Promise<z.output<S>>;
  goal: (options: z.output<S>) => string;
  plan: (options: z.output<S>, env: AgentPlanEnv) => PlannedStep[] | Promise<PlannedStep[]>;
  /** Probes by effect type, used while reconciling uncertain effects before the agent runs. */
  probes?: Record<string, (effect: SideEffect, options: z.output<S>) => Promise<ProbeResult>>;
  run: (ctx: TaskContext<z.output<S>>) => Promise<void>;
  /**
   * Recognise a task written in one of the source articles' formats as this
   * agent's, so resuming it imports it and continues with this agent. Return
   * the options to run it with, or null when the task is not clearly this
   * agent's. The returned plan must have as many steps as the task's; steps
   * are matched by position and take this agent's ids and names.
   */
  adoptLegacy?: (checkpoint: Checkpoint, format: 'article-task-json' | 'article-checkpoint-json') => { options: z.input<S> } | null;
}

/** Declare an agent. The identity function, there for type inference. */
export function defineAgent<S extends z.ZodType>(agent: AgentDefinition<S>): AgentDefinition<S> {
  return agent;
}

/** Any agent, whatever its options. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyAgent = AgentDefinition<any>;

/** The stored checkpoint fields an agent may not change directly; re-exported for authors' type imports. */
export type { Checkpoint };
