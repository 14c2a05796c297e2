/**
 * The runtime's public API: for agent authors (defineAgent and the context
 * types) and for hosts (the runner and the task operations).
 */
export { defineAgent } from './define-agent.js';
export type {
  AgentDefinition,
  AgentPlanEnv,
  AnyAgent,
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
export { acquireLease, DEFAULT_LEASE_TTL_MS, Lease, LeaseHeldError, LeaseLostError, leaseIsLive, readLease, type LeaseEntry } from './lease.js';
export { buildResumeContext, decideResume, describePlan, samePlan, type ResumeDecision } from './resume-plan.js';
export { agentRefFor, isModuleSpecifier, loadAgent } from './agent-loader.js';
export { RunExit, type WorkerJob } from './worker-protocol.js';
