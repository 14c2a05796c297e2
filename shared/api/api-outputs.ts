/**
 * What each API method answers, as zod schemas: the other half of the
 * contract's `apiInputs`.
 *
 * Inputs are validated always (a renderer is never trusted); outputs are the
 * host's own values, so they are checked where a mistake is cheap to find:
 * in development and in tests (see outputChecksEnabled), where an answer the
 * contract does not allow fails loudly instead of confusing a renderer.
 * The checkpoint of a task detail is checked for its identity and plan only:
 * the store validated it in full when it read it.
 */
import { z } from 'zod';
import { Problem } from '../checkpoint/problem.js';
import { HistoryMessage, StepStatus, VersionSource } from '../checkpoint/schema.js';
import { TaskSummary } from '../checkpoint/task-summary.js';
import { RewindPlan } from '../checkpoint/rewind-plan.js';
import { ChangeSummary, StructuredDiffEntry } from '../diff/semantic-summary.js';
import type { ApiMethod } from './contract.js';
import { VerifyResult } from './contract.js';

const DirectoryInfo = z.object({
  root: z.string().nullable(),
  recent: z.array(z.string()),
  host: z.enum(['desktop', 'web']),
  read_only: z.boolean(),
  recent_read_only: z.array(z.string()),
  untrusted: z.boolean().optional(),
  also_holds_langgraph: z.boolean().optional(),
});

const DirectoryTrust = z.object({
  root: z.string().nullable(),
  trusted: z.boolean(),
  can_trust: z.boolean(),
  changed: z.boolean(),
  agents: z.array(z.object({ name: z.string(), module: z.string(), export: z.string().optional() })),
  /** The command agents it registers (programs started as processes of their own), as registered; the host always sends it. */
  commands: z.array(z.object({ name: z.string(), command: z.array(z.string()) })).optional(),
  config_problem: z.string().nullable(),
  resumes: z.array(z.string()),
  message: z.string(),
});

const LeaseInfo = z.object({ held: z.boolean(), owner: z.string().optional(), pid: z.number().optional(), since: z.string().optional() });

const TaskAgentStatus = z.object({
  name: z.string().nullable(),
  origin: z.enum(['builtin', 'module', 'command', 'none', 'foreign']),
  available: z.boolean(),
  module: z.string().optional(),
  problem: z.string().optional(),
  module_changed: z.boolean().optional(),
  recorded_sha256: z.string().optional(),
  current_sha256: z.string().optional(),
  load_problem: z.string().optional(),
});

/** A checkpoint as a task detail carries it: its identity and plan (the store checked the rest when it read it). */
const CheckpointShape = z.looseObject({
  task_id: z.string(),
  version: z.number().int().positive(),
  plan: z.array(z.looseObject({ id: z.string(), name: z.string(), status: StepStatus })),
});

const TaskDetail = z.object({
  summary: TaskSummary,
  checkpoint: CheckpointShape.nullable(),
  version: z.number().int().nullable(),
  latest_version: z.number().int().nullable(),
  read_only: z.boolean(),
  problems: z.array(Problem),
  lease: LeaseInfo,
  agent_status: TaskAgentStatus.nullable(),
});

const VersionEntry = z.object({ version: z.number().int().positive(), source: VersionSource, updated_at: z.string(), bytes: z.number() });

const AgentInfo = z.object({
  name: z.string(),
  description: z.string(),
  options_schema: z.record(z.string(), z.unknown()),
  origin: z.enum(['builtin', 'registered']),
  problem: z.string().optional(),
});

/** The words of a LangGraph diff (shared/diff/langgraph-change.ts). */
const LangGraphChangeSchema = z.object({
  from_checkpoint: z.string(),
  to_checkpoint: z.string(),
  messages_added: z.array(HistoryMessage),
  messages_removed: z.array(HistoryMessage),
  channels_added: z.array(z.string()),
  channels_removed: z.array(z.string()),
  channels_changed: z.array(z.string()),
  next: z.object({ from: z.array(z.string()), to: z.array(z.string()) }).nullable(),
  interrupt: z.object({ from: z.array(z.unknown()), to: z.array(z.unknown()) }).nullable(),
});

const ActionResult = z.object({ taskId: z.string(), version: z.number().int().nullable(), message: z.string() });

/** The output schema of each method, by method name. */
export const apiOutputs = {
  getDirectory: DirectoryInfo,
  openDirectory: DirectoryInfo,
  chooseDirectory: DirectoryInfo.nullable(),
  getDirectoryTrust: DirectoryTrust,
  trustDirectory: DirectoryInfo,
  listTasks: z.array(TaskSummary),
  getTask: TaskDetail,
  getHistory: z.object({ after: z.number().int().nonnegative(), versions: z.array(VersionEntry) }),
  getStepResult: z.object({ value: z.unknown(), found: z.boolean() }),
  getMessages: z.object({ from: z.number().int().nonnegative(), messages: z.array(HistoryMessage) }),
  getEvents: z.object({
    events: z.array(
      z.object({
        id: z.number().int().positive(),
        type: z.string(),
        at: z.string(),
        version: z.number().int().optional(),
        step_id: z.string().optional(),
        data: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
    skipped: z.number().int().nonnegative(),
  }),
  diffVersions: z.object({
    a: z.number().int(),
    b: z.number().int(),
    summary: ChangeSummary,
    entries: z.array(StructuredDiffEntry),
    langgraph: LangGraphChangeSchema.optional(),
  }),
  verifyTask: VerifyResult,
  getOverview: z.object({
    tasks_read: z.number().int().nonnegative(),
    tasks_total: z.number().int().nonnegative(),
    tokens_in: z.number().nonnegative(),
    tokens_out: z.number().nonnegative(),
    cost_usd: z.number().nonnegative(),
    slowest_steps: z.array(
      z.object({
        task_id: z.string(),
        step_id: z.string(),
        step_name: z.string(),
        elapsed_ms: z.number().nonnegative(),
        status: z.string(),
      }),
    ),
  }),
  listAgents: z.array(AgentInfo),
  showNotification: z.object({ shown: z.boolean() }),
  startTask: ActionResult,
  resumeTask: ActionResult,
  approveResume: ActionResult,
  rejectResume: ActionResult,
  editStepResult: ActionResult,
  stopTask: ActionResult,
  forkTask: ActionResult,
  previewRewind: RewindPlan,
  previewThreadEdit: z.object({
    taskId: z.string(),
    where: z.string(),
    thread_id: z.string(),
    checkpoint_ns: z.string(),
    parent: z.object({ checkpoint_id: z.string(), version: z.number().int().positive() }),
    step: z.number().int(),
    serde: z.enum(['json', 'msgpack']),
    channels: z.array(z.object({ name: z.string(), from: z.unknown(), to: z.unknown() })),
    values: z.record(z.string(), z.unknown()),
  }),
  editThreadState: ActionResult,
  rewindTask: ActionResult,
} as const satisfies Record<ApiMethod, z.ZodType>;

/**
 * Whether answers are checked against apiOutputs: in development and tests
 * (NODE_ENV `development` or `test`, or WAYSTATION_CHECK_OUTPUTS=1), never in
 * a packaged app or a plain `waystation serve`, where they cost a walk of
 * every answer.
 */
export function outputChecksEnabled(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  if (env.WAYSTATION_CHECK_OUTPUTS !== undefined) return env.WAYSTATION_CHECK_OUTPUTS === '1';
  return env.NODE_ENV === 'development' || env.NODE_ENV === 'test';
}

/** The issues of an answer the contract does not allow for `method`; empty when it fits. */
export function apiOutputIssues(method: ApiMethod, value: unknown): string[] {
  const result = apiOutputs[method].safeParse(value);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.') || '(output)'}: ${i.message}`);
}
