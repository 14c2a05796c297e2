/**
 * The runtime's Runner, adapted to what the host service needs: one runner
 * per checkpoint directory, actions that answer as soon as the worker process
 * is launched (the UI follows the task through events, and the process keeps
 * running whatever happens to the renderer), and the runner's events turned
 * into the API's `runner` events.
 */
import type { ActionResult } from '../../shared/api/contract.js';
import { listAvailableAgents } from '../runtime/agent-catalog.js';
import { Runner, type RunOutcome, type RunnerOptions } from '../runtime/runner.js';
import { generateTaskId } from '../runtime/task-operations.js';
import type { HostRunner, RunnerEvent } from './host-ports.js';
import { demoRunEnv } from './demo-directory.js';
import { isServiceErrorCode, ServiceError, type ServiceErrorCode } from '../../shared/api/error-codes.js';

export interface HostRunnerOptions {
  /** Environment for the worker processes; this process's by default. */
  env?: NodeJS.ProcessEnv;
  actor?: string;
  /** How workers are launched (the packaged app passes its compiled worker). */
  workerLaunch?: RunnerOptions['workerLaunch'];
}

/**
 * A refused operation, with the runtime's code (busy, no-approval,
 * agent-unavailable, ...) for the API's error mapping. The code arrives from
 * a worker process as a string: one the list does not know is `internal`.
 */
export class RefusedError extends ServiceError {
  readonly code: ServiceErrorCode;
  constructor(code: string, message: string) {
    super(message);
    this.code = isServiceErrorCode(code) ? code : 'internal';
  }
}

function resultOf(outcome: RunOutcome): ActionResult {
  if (outcome.error) throw new RefusedError(outcome.error, outcome.message);
  return { taskId: outcome.task_id, version: outcome.version, message: outcome.message };
}

/** Create the host's runner: see the module comment. */
export function createHostRunner(options: HostRunnerOptions = {}): HostRunner {
  const runners = new Map<string, Runner>();
  const listeners = new Set<(e: RunnerEvent) => void>();
  const emit = (e: RunnerEvent) => {
    for (const l of [...listeners]) l(e);
  };

  const runnerFor = (root: string): Runner => {
    let runner = runners.get(root);
    if (!runner) {
      // A demo directory's offline model answers at the demo's pace, so its running task is seen running.
      runner = new Runner({
        root,
        env: demoRunEnv(root, options.env ?? process.env),
        actor: options.actor,
        workerLaunch: options.workerLaunch,
      });
      runner.onEvent((e) => {
        if (e.type === 'spawned') emit({ taskId: e.taskId, state: 'started', detail: `${e.job} in process ${e.pid}` });
        else if (e.type === 'line') emit({ taskId: e.taskId, state: 'output', detail: e.line });
        else if (e.type === 'retrying')
          emit({ taskId: e.taskId, state: 'output', detail: `retrying (attempt ${e.attempt}) in ${e.delayMs} ms` });
        else emit({ taskId: e.taskId, state: 'exited', detail: e.outcome.message, ...(e.outcome.error ? { error: e.outcome.error } : {}) });
      });
      runners.set(root, runner);
    }
    return runner;
  };

  /**
   * Launch a long operation and answer once its worker is up, or with the
   * refusal when it never got that far (unknown agent, busy task, ...).
   */
  const launch = (
    root: string,
    taskId: string,
    run: (runner: Runner) => Promise<RunOutcome>,
    opts: { untilCreated?: boolean } = {},
  ): Promise<ActionResult> => {
    const runner = runnerFor(root);
    return new Promise<ActionResult>((resolve, reject) => {
      let settled = false;
      const stop = runner.onEvent((e) => {
        if (e.type === 'spawned' && e.taskId === taskId) {
          stop();
          const running = { taskId, version: null, message: `${e.job} of ${taskId} is running in process ${e.pid}` };
          if (!opts.untilCreated) return resolve(running);
          // A start is not "running" until its first version is written: a refusal of its options
          // (a missing input folder) comes back as the start's answer, not as a later surprise.
          const poll = () => {
            if (settled) return;
            void runner.hasVersion(taskId).then((created) => {
              if (settled) return;
              if (created) {
                settled = true;
                resolve(running);
              } else setTimeout(poll, 50);
            });
          };
          poll();
        }
      });
      run(runner).then(
        (outcome) => {
          stop();
          if (settled) return;
          settled = true;
          try {
            resolve(resultOf(outcome));
          } catch (err) {
            reject(err);
          }
        },
        (err: unknown) => {
          stop();
          if (settled) return;
          settled = true;
          reject(err);
        },
      );
    });
  };

  return {
    start(root, req) {
      const taskId = req.taskId ?? generateTaskId(req.agent);
      // Relative paths in the options mean the checkpoint directory: the host's own working folder is nothing the person chose.
      return launch(
        root,
        taskId,
        (r) => r.startRun({ agent: req.agent, options: req.options, taskId, mode: req.mode, cwd: root, optionsBase: root, confined: true }),
        { untilCreated: true },
      );
    },
    resume(root, taskId) {
      return launch(root, taskId, (r) => r.resume(taskId));
    },
    approve(root, taskId, by) {
      // Who approved is recorded in the decision: the API caller's name when given, else this host's actor.
      return launch(root, taskId, (r) => r.approve(taskId, { actor: by ?? options.actor }));
    },
    async reject(root, taskId, reason, by) {
      return resultOf(await runnerFor(root).reject(taskId, reason, { actor: by ?? options.actor }));
    },
    async edit(root, taskId, stepId, value, opts = {}) {
      return resultOf(await runnerFor(root).edit(taskId, stepId, value, opts));
    },
    async stop(root, taskId, { reason, force, by }) {
      // The page does not wait for the run to reach a boundary: the task's feed shows when it has stopped.
      return resultOf(await runnerFor(root).stop(taskId, { reason, force, waitMs: 0, actor: by ?? options.actor }));
    },
    async fork(root, taskId, version, { newTaskId, reason, by }) {
      return resultOf(await runnerFor(root).fork(taskId, version, { taskId: newTaskId, reason, actor: by ?? options.actor }));
    },
    async rewind(root, taskId, stepId, { redo, expectedVersion, reason, by }) {
      return resultOf(await runnerFor(root).rewind(taskId, stepId, { redo, expectedVersion, reason, actor: by ?? options.actor }));
    },
    async registeredAgents(root) {
      const catalog = await listAvailableAgents(root, { env: options.env, workerLaunch: options.workerLaunch });
      return catalog.agents
        .filter((a) => a.origin === 'registered')
        .map((a) => ({
          name: a.name,
          description: a.description,
          options_schema: a.options_schema,
          origin: 'registered' as const,
          ...(a.problem ? { problem: a.problem } : {}),
        }));
    },
    async recoverInterrupted(root, candidates) {
      // Outcomes reach the host as runner events (spawned, retrying, exited) while this runs.
      await runnerFor(root).recoverInterrupted(candidates);
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async shutdown() {
      // Workers are stopped, not waited for: each task keeps its last saved version and resumes later.
      for (const runner of runners.values()) runner.killAll('SIGTERM');
      listeners.clear();
    },
  };
}
