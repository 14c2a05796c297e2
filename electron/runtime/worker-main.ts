/**
 * The worker process: one task, one process. It takes the task's lease, runs
 * or resumes the agent, heartbeats the lease while it works, and answers the
 * runner with one message and an exit code. If the agent crashes the process,
 * only this worker dies; the runner reports it and the task resumes later.
 *
 * The job arrives in the WAYSTATION_JOB environment variable as JSON.
 */
import { openStore } from '../store/directory-store.js';
import { providerFromEnv, redactSecrets } from '../llm/provider-from-env.js';
import { builtInAgent } from '../agents/registry.js';
import { loadAgent } from './agent-loader.js';
import { approveTask, loadForWrite, OperationError, resumeTask, startTask, type OperationEnv } from './task-operations.js';
import { exitCodeForError, exitCodeForStatus, type WorkerJob, type WorkerMessage } from './worker-protocol.js';

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send) process.send(message, () => resolve());
    else {
      process.stdout.write(`WAYSTATION_RESULT ${JSON.stringify(message)}\n`);
      resolve();
    }
  });
}

async function run(job: WorkerJob): Promise<number> {
  const store = openStore(job.root);
  const env: OperationEnv = {
    store,
    root: job.root,
    llm: await providerFromEnv(process.env),
    actor: job.actor,
    report: (line) => process.stdout.write(`${line}\n`),
  };
  if (job.kind === 'start') {
    const agent = await loadAgent({ name: job.agentRef.name, module: job.agentRef.module, export: job.agentRef.export, project_root: job.agentRef.project_root }, builtInAgent);
    const { name: _name, ...ref } = job.agentRef;
    const outcome = await startTask(env, agent, { taskId: job.taskId, options: job.options, mode: job.mode, maxAutoAttempts: job.maxAutoAttempts, agentRef: ref });
    await send({ type: 'outcome', outcome });
    return exitCodeForStatus(outcome.status);
  }
  const cp = await loadForWrite(store, job.taskId);
  if (!cp.agent) throw new OperationError('invalid', `task ${job.taskId} does not record which agent runs it, so it cannot be resumed`);
  const agent = await loadAgent(cp.agent, builtInAgent);
  const outcome =
    job.kind === 'approve'
      ? await approveTask(env, agent, job.taskId, { actor: job.actor })
      : await resumeTask(env, agent, job.taskId, job);
  await send({ type: 'outcome', outcome });
  return exitCodeForStatus(outcome.status);
}

const raw = process.env.WAYSTATION_JOB;
let code: number;
try {
  if (!raw) throw new OperationError('invalid', 'the worker was started without a job (WAYSTATION_JOB)');
  code = await run(JSON.parse(raw) as WorkerJob);
} catch (err) {
  const message = redactSecrets(err instanceof Error ? err.message : String(err));
  const errCode = err instanceof OperationError ? err.code : 'internal';
  if (!(err instanceof OperationError)) process.stderr.write(`${redactSecrets(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
  await send({ type: 'error', code: errCode, message });
  code = exitCodeForError(errCode);
}
if (process.connected) process.disconnect();
process.exit(code);
