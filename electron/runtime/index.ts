/**
 * The runtime's public API, and the `waystation` package's entry point: for
 * agent authors (defineAgent, the context types, zod) and for hosts (the
 * runner, the task operations, the agent catalog, the store).
 *
 * Nothing here comes from the desktop app (no host, no Electron, no React),
 * so a project that depends on `waystation` gets the runtime alone.
 */
export { z } from 'zod';
export { defineAgent } from './define-agent.js';
export type {
  AgentDefinition,
  AgentPlanEnv,
  AnyAgent,
  CostlyAction,
  EffectProbe,
  EffectSpec,
  LlmAccess,
  PlannedStep,
  ProbeResult,
  ResumeContext,
  TaskContext,
} from './define-agent.js';
export {
  approveTask,
  DEFAULT_MAX_AUTO_ATTEMPTS,
  editStepResult,
  generateTaskId,
  loadForWrite,
  moduleChanged,
  OperationError,
  rejectTask,
  resumeTask,
  startTask,
  type OperationEnv,
  type ResumeRequest,
  type StartRequest,
} from './task-operations.js';
export { TaskEngine, writeFileAtomic, type EngineOutcome } from './task-engine.js';
export { Runner, type RunnerEvent, type RunnerOptions, type RunOutcome, type StartRunRequest } from './runner.js';
export {
  DEFAULT_LEASE_TTL_MS,
  LEASE_TTL_ENV,
  LeaseHeldError,
  LeaseLostError,
  leaseIsLive,
  leaseTtlMs,
  processStartToken,
  type LeaseEntry,
  type LeaseOptions,
} from '../store/lease-rules.js';
export { buildResumeContext, decideResume, describePlan, samePlan, type ResumeDecision } from './resume-plan.js';
export {
  AgentLoadError,
  agentRefFor,
  describeModuleAgent,
  DEFAULT_AGENT_LOAD_TIMEOUT_MS,
  hashModule,
  importAgentModule,
  isModuleSpecifier,
  loadAgent,
  looksLikeAgent,
  type AgentLoadProblem,
  type LoadedAgent,
} from './agent-loader.js';
export { AgentDescribeError, describeAgentModule, type DescribeRequest } from './agent-describer.js';
export {
  AGENTS_CONFIG_FILE,
  AgentConfigEntry,
  AgentsConfig,
  listAvailableAgents,
  readAgentsConfig,
  type AgentCatalog,
  type AgentsConfigRead,
  type AvailableAgent,
} from './agent-catalog.js';
export { agentStatus, type AgentStatus } from './agent-status.js';
export { importLegacyForResume, type LegacyResumePreparation } from './legacy-resume.js';
export { RunExit, type DescribedAgent, type WorkerJob } from './worker-protocol.js';
export { builtInAgents } from '../agents/registry.js';
export { OfflineProvider } from '../llm/offline-provider.js';
export { providerFromEnv } from '../llm/provider-from-env.js';
export type { ChatMessage, Completion, CompletionOptions, LlmProvider } from '../llm/provider.js';
export { openStore } from '../store/directory-store.js';
export { openLocation } from '../store/open-location.js';
export { redactUrl } from '../store/postgres/redact-url.js';
// What a crash or a power cut left in a task folder, for hosts that show it (as `waystation verify` does).
export { hasRecoveryNews, recoveryReport, type RecoveryReport } from '../store/recovery-report.js';
export type {
  CheckpointSource,
  CheckpointStore,
  LeaseRead,
  StoreChange,
  StoreSubscription,
  TaskEntry,
  TaskEvent,
  TaskLease,
  VersionInfo,
} from '../store/store-types.js';
export { verifyTask } from '../verify/verify-task.js';
export {
  Checkpoint,
  CURRENT_SCHEMA_VERSION,
  type Artifact,
  type SideEffect,
  type PlanStep,
  type AgentRef,
  type ResumePlan,
} from '../../shared/checkpoint/schema.js';
