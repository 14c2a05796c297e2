/**
 * What passes between the runner and a worker process: the job it is given
 * and the one message it answers with. Exit codes say the same for anyone
 * who only sees the process end.
 */
import type { AgentRef, RecoveryMode, TaskStatus } from '../../shared/checkpoint/schema.js';
import type { ResumeRequest } from './task-operations.js';

export type WorkerJob =
  | {
      kind: 'start';
      root: string;
      taskId: string;
      agentRef: Partial<AgentRef> & { name: string };
      options: unknown;
      mode?: RecoveryMode;
      maxAutoAttempts?: number;
      actor?: string;
      /** What relative paths in the options are resolved against. */
      optionsBase?: string;
      /** The options came from the inspector: paths in them must stay inside the root (AgentPlanEnv.confined). */
      confined?: boolean;
      /**
       * The command that starts this task again as its caller names it (`waystation run URL AGENT ... --task ID`):
       * what a start that stored nothing before the database failed tells the person to run.
       */
      startAgain?: string;
    }
  | ({ kind: 'resume'; root: string; taskId: string; actor?: string } & ResumeRequest)
  | { kind: 'approve'; root: string; taskId: string; actor?: string }
  | {
      /** Load an agent module and say what it is, without touching any task: its code runs here, never in the host. */
      kind: 'describe';
      root: string;
      taskId: string;
      spec: string;
      cwd: string;
      exportName?: string;
      /** Record the module relative to this folder instead of its own project (config-registered agents). */
      projectRoot?: string;
    };

/** A module agent as a `describe` job reports it: what a checkpoint records, plus what a start form shows. */
export interface DescribedAgent {
  name: string;
  description: string;
  module: string;
  export: string;
  project_root: string;
  module_sha256: string;
  /** JSON Schema of the agent's options (input side); `{}` when zod cannot express it. */
  options_schema: Record<string, unknown>;
}

export type WorkerMessage =
  /** The agent is loaded: from here on a silent worker is running the agent, not stuck importing it. */
  | { type: 'loaded' }
  | { type: 'agent'; agent: DescribedAgent }
  | {
      type: 'outcome';
      outcome: { task_id: string; status: TaskStatus; version: number; message: string; next: string | null; stopped?: boolean };
    }
  | {
      type: 'error';
      code: string;
      message: string;
      /** A start that failed before its task was stored (or known to be): there is no task to resume (exitCodeForError). */
      unstored?: boolean;
    };

/** Process exit codes of a worker and of the CLI's run-like commands (listed in `waystation run --help`). */
export const RunExit = {
  done: 0,
  failed: 1,
  usage: 2,
  waiting_human: 3,
  waiting_approval: 4,
  halted: 5,
  busy: 6,
  crashed: 7,
  stopped: 8,
} as const;

/** The exit code for a task status. */
export function exitCodeForStatus(status: TaskStatus): number {
  switch (status) {
    case 'done':
      return RunExit.done;
    case 'waiting_human':
      return RunExit.waiting_human;
    case 'waiting_approval':
      return RunExit.waiting_approval;
    case 'halted':
      return RunExit.halted;
    case 'running':
      // A drive that returned while "running" lost its lease: someone else drives the task now.
      return RunExit.busy;
    default:
      return RunExit.failed;
  }
}

/** The exit code of a run's outcome: a run a person stopped says so, whatever the task's status. */
export function exitCodeForOutcome(outcome: { status: TaskStatus; stopped?: boolean }): number {
  return outcome.stopped ? RunExit.stopped : exitCodeForStatus(outcome.status);
}

/**
 * The exit code for a refused operation (OperationError code); `unstored` for a start that failed before its task
 * was stored.
 */
export function exitCodeForError(code: string, unstored = false): number {
  if (code === 'busy') return RunExit.busy;
  if (code === 'halted') return RunExit.halted;
  if (code === 'internal' || code === 'disk') return RunExit.failed;
  // The database went away (or refused) under a run: the task is interrupted at its last saved version, as after a
  // crash, and resumes once the database can be used again (worker-main.ts says so with the command). A start that
  // stored nothing leaves no task to resume: the store could not be written, as when the CLI finds the database out
  // of reach before it starts the worker, and the message says to start it again.
  if (code === 'database') return unstored ? RunExit.failed : RunExit.crashed;
  return RunExit.usage;
}
