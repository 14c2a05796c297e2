/**
 * The operations of the API that change tasks: start, resume, approve,
 * reject, edit, and going back (stop, fork, rewind, with the rewind's preview). Each is checked here (the task exists and is inside the
 * root, the host runs tasks, the directory is not open read-only), then
 * handed to the runner port, which drives the long ones in child processes.
 */
import type { ActionResult, ApiParsedInput } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import type { HostRunner } from './host-ports.js';
import type { OpenDirectory } from './open-directory.js';
import { resolveInsideRoot } from '../store/path-confinement.js';
import { messageOf } from '../../shared/api/error-codes.js';
import type { RewindPlan } from '../../shared/checkpoint/rewind-plan.js';
import { planRewind } from '../runtime/rewind-task.js';
import type { TaskEntry } from '../store/store-types.js';

/** A new task's folder must be a plain folder inside the root, never a link planted to lead out of it. */
function checkNewTaskFolder(root: string, taskId: string): void {
  try {
    resolveInsideRoot(root, taskId);
  } catch (err) {
    throw new ApiError('forbidden', `task id ${JSON.stringify(taskId)} cannot be used: ${messageOf(err)}; nothing was written`);
  }
}

/**
 * Refuse at once, before a process is started for it, a resume or an approval the run would refuse: a task done,
 * halted, unreadable, of a newer format, or driven by a live runner. The answer was a process "running" that ended
 * saying so a moment later, which a page could only show as a line of the runner's output.
 */
async function refuseWhatCannotRun(dir: OpenDirectory, entry: TaskEntry, verb: 'resumed' | 'approved'): Promise<void> {
  const cp = entry.checkpoint;
  const id = entry.task_id;
  if (!cp) {
    const why = entry.problems.map((p) => p.message).join('; ');
    throw new ApiError('conflict', `task ${id} cannot be read (${why}); it is not ${verb}, and nothing was done`);
  }
  // A legacy file is imported by its resume; a Waystation task marked read-only is of a newer format than this build.
  if (entry.format === 'waystation' && entry.read_only) {
    throw new ApiError(
      'read-only',
      `task ${id} was written by a newer Waystation; it is shown read-only and not ${verb}. Nothing was done`,
    );
  }
  if (cp.status === 'done') throw new ApiError('conflict', `task ${id} is already done; there is nothing to resume, and nothing was done`);
  if (cp.status === 'halted') {
    throw new ApiError(
      'conflict',
      `task ${id} is halted (its resume plan was rejected); it is not ${verb}. Fork it or rerun a step to try again`,
    );
  }
  if (entry.format === 'waystation') {
    const lease = await dir.store.readLease(id).catch(() => null);
    if (lease?.info.held) {
      const by = lease.entry ? ` (pid ${lease.entry.pid} on ${lease.entry.hostname})` : '';
      throw new ApiError('conflict', `task ${id} is being driven by another runner${by}; it is not ${verb}, and nothing was done`);
    }
  }
}

/** The operations over a host's runner; see the module comment. */
export class HostOperations {
  constructor(private readonly runnerPort: HostRunner | null | undefined) {}

  /** The runner, when this host may run the tasks of `dir`; otherwise a refusal that says why. */
  private runner(dir: OpenDirectory): HostRunner {
    if (!this.runnerPort) throw new ApiError('forbidden', 'this host runs no tasks (it was started read-only); nothing was done');
    if (dir.readOnly) {
      throw new ApiError(
        'forbidden',
        `${dir.store.root} is open read-only: no task is started, resumed, approved, rejected or edited there; nothing was done. Open it with Open folder… to run its tasks`,
      );
    }
    return this.runnerPort;
  }

  async start(dir: OpenDirectory, input: ApiParsedInput<'startTask'>): Promise<ActionResult> {
    // A start that names an existing task resumes it, so it gets the same check as a resume.
    if (input.taskId && (await dir.store.getTask(input.taskId))) await dir.reads.entry(input.taskId);
    if (input.taskId) checkNewTaskFolder(dir.root, input.taskId);
    return this.runner(dir).start(dir.root, { taskId: input.taskId, agent: input.agent, options: input.options, mode: input.mode });
  }

  async resume(dir: OpenDirectory, input: ApiParsedInput<'resumeTask'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    const runner = this.runner(dir);
    await refuseWhatCannotRun(dir, entry, 'resumed');
    return runner.resume(dir.root, entry.task_id);
  }

  async approve(dir: OpenDirectory, input: ApiParsedInput<'approveResume'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    const runner = this.runner(dir);
    await refuseWhatCannotRun(dir, entry, 'approved');
    if (entry.checkpoint && !entry.checkpoint.recovery.pending_approval) {
      throw new ApiError(
        'conflict',
        `task ${entry.task_id} has no resume plan waiting for approval (it is ${entry.checkpoint.status}); nothing was done`,
      );
    }
    return runner.approve(dir.root, entry.task_id, input.by);
  }

  async reject(dir: OpenDirectory, input: ApiParsedInput<'rejectResume'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    return this.runner(dir).reject(dir.root, entry.task_id, input.reason, input.by);
  }

  async edit(dir: OpenDirectory, input: ApiParsedInput<'editStepResult'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    // The runner refuses it (`moved`) when the task is no longer at `expectedVersion`, checked under the task's lock.
    return this.runner(dir).edit(dir.root, entry.task_id, input.stepId, input.value, {
      expectedVersion: input.expectedVersion,
      later: input.later,
    });
  }

  async stop(dir: OpenDirectory, input: ApiParsedInput<'stopTask'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    return this.runner(dir).stop(dir.root, entry.task_id, { reason: input.reason, force: input.force, by: input.by });
  }

  async fork(dir: OpenDirectory, input: ApiParsedInput<'forkTask'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    if (input.newTaskId) checkNewTaskFolder(dir.root, input.newTaskId);
    return this.runner(dir).fork(dir.root, entry.task_id, input.version, {
      newTaskId: input.newTaskId,
      reason: input.reason,
      by: input.by,
    });
  }

  /** What a rewind would do: a read, so it is answered in a read-only directory too. */
  async previewRewind(dir: OpenDirectory, input: ApiParsedInput<'previewRewind'>): Promise<RewindPlan> {
    const entry = await dir.reads.entry(input.taskId);
    if (!entry.checkpoint) throw new ApiError('failed', `task ${input.taskId} cannot be read; nothing can be rerun`);
    return planRewind(entry.checkpoint, input.stepId, input.redo);
  }

  async rewind(dir: OpenDirectory, input: ApiParsedInput<'rewindTask'>): Promise<ActionResult> {
    const entry = await dir.reads.entry(input.taskId);
    return this.runner(dir).rewind(dir.root, entry.task_id, input.stepId, {
      redo: input.redo,
      expectedVersion: input.expectedVersion,
      reason: input.reason,
      by: input.by,
    });
  }
}
