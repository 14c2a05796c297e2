/**
 * The worker process: one task, one process. It takes the task's lease, runs
 * or resumes the agent, heartbeats the lease while it works, and answers the
 * runner with one message and an exit code. If the agent crashes the process,
 * only this worker dies; the runner reports it and the task resumes later.
 *
 * The job arrives as its first IPC message (worker-job-channel.ts), or in the
 * WAYSTATION_JOB environment variable as JSON.
 */
import path from 'node:path';
import { openLocation } from '../store/open-location.js';
import type { CheckpointStore } from '../store/store-types.js';
import { providerFromEnv, redactSecrets } from '../llm/provider-from-env.js';
// The worker process's entry point: it provides the built-in agents to the runtime it runs.
import { builtInAgent } from '../agents/registry.js';
import { AgentLoadError, describeModuleAgent, loadAgent, type LoadedAgent } from './agent-loader.js';
import { WriteLimitError } from '../store/write-limits.js';
import { receiveJob } from './worker-job-channel.js';
import { STANDBY_ENV } from './worker-standby.js';
import { approveTask, loadForWrite, OperationError, resumeTask, startTask, type OperationEnv } from './task-operations.js';
import { exitCodeForError, exitCodeForOutcome, RunExit, type WorkerJob, type WorkerMessage } from './worker-protocol.js';
import type { AgentRef } from '../../shared/checkpoint/schema.js';
import { optionsJsonSchema } from '../../shared/api/options-json-schema.js';
import { messageOf } from '../../shared/api/error-codes.js';
import { CommitUnknownError, NotCommittedError, OUT_OF_REACH, PostgresStoreError } from '../store/postgres/pg-errors.js';
import { commandHint } from './command-hint.js';

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send) process.send(message, () => resolve());
    else {
      process.stdout.write(`WAYSTATION_RESULT ${JSON.stringify(message)}\n`);
      resolve();
    }
  });
}

/**
 * Load a task's agent; a module that is gone or broken refuses the job before anything is written. A task another
 * program wrote is refused with its own resume hint, which names that program's command where it knows it.
 */
async function loadFor(
  ref: Pick<AgentRef, 'name' | 'module' | 'export' | 'project_root'>,
  root: string,
  taskId: string,
  verb: string,
  resumeHint?: string,
): Promise<LoadedAgent> {
  try {
    // A module agent runs in its project, wherever the host or CLI that started this worker stands.
    if (ref.module) {
      const project = path.resolve(root, ref.project_root ?? '.');
      try {
        process.chdir(project);
      } catch {
        throw new AgentLoadError('module-missing', `the agent's project folder ${project} does not exist (moved or deleted?)`);
      }
    }
    const loaded = await loadAgent(ref, builtInAgent, { root });
    await send({ type: 'loaded' });
    return loaded;
  } catch (err) {
    if (err instanceof AgentLoadError) {
      const hint = err.problem === 'unknown-agent' && resumeHint ? ` Its resume hint: ${resumeHint}` : '';
      throw new OperationError('agent-unavailable', `cannot ${verb} task ${taskId}: ${err.message}. The task was left untouched.${hint}`);
    }
    throw err;
  }
}

async function run(job: WorkerJob): Promise<number> {
  if (job.kind === 'describe') {
    try {
      const { agent, ...ref } = await describeModuleAgent(job.spec, {
        cwd: job.cwd,
        exportName: job.exportName,
        projectRoot: job.projectRoot,
      });
      await send({
        type: 'agent',
        agent: {
          ...ref,
          description: typeof agent.description === 'string' ? agent.description : '',
          options_schema: optionsJsonSchema(agent.options),
        },
      });
      return RunExit.done;
    } catch (err) {
      if (err instanceof AgentLoadError) throw new OperationError('agent-unavailable', err.message);
      throw err;
    }
  }
  const store = openLocation(job.root, { postgres: { artifactRoot: process.env.WAYSTATION_ARTIFACT_ROOT } });
  // Closed before the process exits: a database store still announcing the last version (pg-connection.ts) is let
  // finish, so a host sees it at once and not at its next catch-up.
  try {
    const env: OperationEnv = {
      store: noteStored(store),
      root: store.artifactRoot,
      llm: await providerFromEnv(process.env),
      actor: job.actor,
      report: (line) => process.stdout.write(`${line}\n`),
    };
    if (job.kind === 'start') {
      const loaded = await loadFor(job.agentRef, store.artifactRoot, job.taskId, 'start');
      const { name: _name, ...ref } = job.agentRef;
      // The hash of the code that actually runs, should the file have changed since it was described.
      if (loaded.module_sha256) ref.module_sha256 = loaded.module_sha256;
      const outcome = await startTask(env, loaded.agent, {
        taskId: job.taskId,
        options: job.options,
        mode: job.mode,
        maxAutoAttempts: job.maxAutoAttempts,
        agentRef: ref,
        optionsBase: job.optionsBase,
        confined: job.confined,
      });
      await send({ type: 'outcome', outcome });
      return exitCodeForOutcome(outcome);
    }
    const cp = await loadForWrite(store, job.taskId);
    if (!cp.agent) {
      throw new OperationError(
        'agent-unavailable',
        `task ${job.taskId} does not record which agent runs it, so it cannot be resumed (it can still be inspected). Nothing was written.`,
      );
    }
    const loaded = await loadFor(cp.agent, store.artifactRoot, job.taskId, job.kind, cp.resume_hint);
    env.agentModuleSha256 = loaded.module_sha256;
    const outcome =
      job.kind === 'approve'
        ? await approveTask(env, loaded.agent, job.taskId, { actor: job.actor })
        : await resumeTask(env, loaded.agent, job.taskId, job);
    await send({ type: 'outcome', outcome });
    return exitCodeForOutcome(outcome);
  } finally {
    // What the run saved is committed whatever closing does; a failure here must not replace the run's outcome.
    await store.close().catch(() => undefined);
  }
}

/**
 * Whether this worker's job has stored a version: a database fault after a start's first one leaves a task to
 * resume, and one before a resume's first leaves the task as it was.
 */
let stored = false;

/** `store`, noting in `stored` when a version is stored. */
function noteStored(store: CheckpointStore): CheckpointStore {
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== 'create' && prop !== 'save') return value.bind(target);
      return async (...args: unknown[]) => {
        const out: unknown = await value.apply(target, args);
        stored = true;
        return out;
      };
    },
  });
}

/**
 * Take the job, run it, answer the runner and exit with the job's code. A function, not top-level await: the
 * compiled build runs this module as one CommonJS script (worker-loader.cts), where there is none.
 */
async function main(): Promise<never> {
  let code: number;
  let job: WorkerJob | undefined;
  try {
    const raw = await receiveJob();
    // A worker started ahead of its job (worker-standby.ts) and let go: it has done nothing, and says nothing.
    if (!raw && process.env[STANDBY_ENV]) process.exit(RunExit.done);
    if (!raw) throw new OperationError('invalid', 'the worker was started without a job (WAYSTATION_JOB, or its first IPC message)');
    job = JSON.parse(raw) as WorkerJob;
    code = await run(job);
  } catch (err) {
    // A value over a reader's limit is bad input: nothing was written (write-limits.ts). A database that could not be
    // reached or used is said in its own words, with where that leaves the task.
    const errCode =
      err instanceof OperationError
        ? err.code
        : err instanceof WriteLimitError
          ? 'invalid'
          : err instanceof PostgresStoreError
            ? err.code
            : 'internal';
    const message = redactSecrets(err instanceof PostgresStoreError && job ? databaseFailure(err, job) : messageOf(err));
    // A stack only for what nobody meant to throw: the errors above are sentences for a person, and a trace after one
    // reads as a crash of Waystation.
    if (errCode === 'internal') process.stderr.write(`${redactSecrets(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
    const unstored = job?.kind === 'start' && !stored;
    await send({ type: 'error', code: errCode, message, ...(unstored ? { unstored } : {}) });
    code = exitCodeForError(errCode, unstored);
  }
  if (process.connected) process.disconnect();
  process.exit(code);
}

/**
 * A database fault that ended a job: the store's message (the database named
 * without its password), where the task stands, and the command that
 * continues it.
 *
 * The failed statement wrote nothing, and what was saved before it stays, so
 * the task is interrupted at its last saved version, as after a crash; its
 * lease lapses with this process (lease-rules.ts). A resume or approval cut
 * off before its first save changed nothing, and says the task is as it was
 * (failed, waiting, interrupted: not "left interrupted"). A start that stored
 * nothing has no task to resume: it is started again, with the command its
 * caller gave (`startAgain`), which resumes the task instead should its first
 * version have been stored after all (a commit cut off and not asked about).
 */
function databaseFailure(err: PostgresStoreError, job: WorkerJob): string {
  if (job.kind === 'describe') return err.message;
  // When to do what the line ends with: a save found not committed was asked about on a new connection, so the
  // server is back already.
  const then = (what: string) =>
    err instanceof NotCommittedError
      ? `the server answered since, so ${what}`
      : `${OUT_OF_REACH.has(err.fault) ? 'once the server is back' : 'once that is fixed'}, ${what}`;
  if (job.kind === 'start' && !stored) {
    if (err instanceof CommitUnknownError)
      return job.startAgain
        ? `${err.message} Once the server is back, \`${job.startAgain}\` resumes task ${job.taskId} if its first version was stored, and starts it again otherwise.`
        : `${err.message} Once the server is back, resume task ${job.taskId} if it is listed, or start it again.`;
    return `${err.message} Nothing of task ${job.taskId} was stored; ${then('start it again')}${job.startAgain ? `: ${job.startAgain}` : '.'}`;
  }
  // A resume or approval cut off before its first save changed nothing: the task is as it was (failed, waiting, ...).
  if (!stored && !(err instanceof CommitUnknownError))
    return `${err.message} Nothing of this ${job.kind === 'approve' ? 'approval' : 'resume'} was saved: task ${job.taskId} is as it was before it; ${then(`${job.kind === 'approve' ? 'approve' : 'resume'} it again`)}: ${commandHint(job.taskId, job.kind)}`;
  return `${err.message} Task ${job.taskId} is left interrupted at its last saved version; ${then('continue it')}: ${commandHint(job.taskId, 'resume')}`;
}

void main();
