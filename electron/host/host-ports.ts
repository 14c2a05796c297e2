/**
 * What the host service needs from outside it, as small interfaces: the
 * runner that drives tasks in child processes, and the place recent folders
 * are remembered. The desktop app and the web host pass their own; tests
 * pass fakes.
 */
import type { ActionResult, AgentInfo } from '../../shared/api/contract.js';
import type { RecoveryMode } from '../../shared/checkpoint/schema.js';

/** How an open directory follows its tasks: the watcher's batching, and how often rows shown running are asked again (running-rows.ts). For tests. */
export interface WatchTiming {
  quietMs?: number;
  maxDelayMs?: number;
  runningMs?: number;
  /** How long a run seen to stop is left to the process that drove it before the host resumes it (auto-recovery.ts). */
  recoverAfterMs?: number;
}

/** What the runner reports about the processes it drives. */
export interface RunnerEvent {
  taskId: string;
  state: 'started' | 'exited' | 'output';
  detail: string;
  /** For an exit that refused the operation: the runtime's code (`agent-unavailable`, `busy`, ...). */
  error?: string;
}

/**
 * The runner as the host needs it: operations on tasks of a directory, the
 * long ones (start, resume, approve) in child processes that outlive any
 * renderer, and a feed of what those processes do.
 */
export interface HostRunner {
  /** Start a new task in a child process; resolves once the process is launched. */
  start(root: string, req: { taskId?: string; agent: string; options: Record<string, unknown>; mode: RecoveryMode }): Promise<ActionResult>;
  resume(root: string, taskId: string): Promise<ActionResult>;
  approve(root: string, taskId: string, by?: string): Promise<ActionResult>;
  reject(root: string, taskId: string, reason: string, by?: string): Promise<ActionResult>;
  /** With `expectedVersion`, refused when the task has moved past the version the value was chosen on (checked under the task's lock). */
  edit(
    root: string,
    taskId: string,
    stepId: string,
    value: unknown,
    opts?: { expectedVersion?: number; later?: 'rerun' | 'keep' },
  ): Promise<ActionResult>;
  /** Ask the task's runner to stop at its next safe boundary, and answer at once; `force` ends its process. */
  stop(root: string, taskId: string, opts: { reason?: string; force?: boolean; by?: string }): Promise<ActionResult>;
  /** Fork a task at a version into a new task (the answer's `taskId`). */
  fork(root: string, taskId: string, version: number, opts: { newTaskId?: string; reason?: string; by?: string }): Promise<ActionResult>;
  /** Set a step and every later one back to pending; `redo` names the effects to perform again under new keys. */
  rewind(
    root: string,
    taskId: string,
    stepId: string,
    opts: { redo: string[]; expectedVersion?: number; reason?: string; by?: string },
  ): Promise<ActionResult>;
  /** Agents registered for a directory (waystation.config.json), beyond the built-in ones. */
  registeredAgents?(root: string): Promise<AgentInfo[]>;
  /**
   * Resume the directory's interrupted auto-mode tasks (and prepare plans for
   * interrupted confirm-mode ones). Resolves when that recovery has run its
   * course; the host starts it when it opens a directory and does not wait.
   */
  recoverInterrupted?(root: string, candidates?: readonly string[]): Promise<void>;
  onEvent(listener: (event: RunnerEvent) => void): () => void;
  /** On quit: stop the child processes so that their tasks stay resumable. */
  shutdown(): Promise<void>;
}

/** Where recent folders are remembered (the desktop app's settings file). */
export interface RecentFolders {
  list(): string[];
  /** Those of `list()` last opened read-only. */
  readOnly(): string[];
  remember(root: string, opts: { readOnly: boolean }): Promise<void>;
}
