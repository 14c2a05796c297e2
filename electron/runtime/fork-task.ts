/**
 * Forking a task: a new task whose first version is the state of another
 * task at a chosen version. The parent is only read; the fork has its own
 * lease, ledger and history from there on.
 *
 * The ledger is carried as it stands at that version, idempotency keys
 * included, so an effect the parent had done is done for the fork too and is
 * not performed again by it. Agents usually derive their keys from the task
 * id (`<task_id>:publish`): each carried entry records, as its `asked_key`,
 * the key the fork's agent will ask with, the parent's id replaced by the
 * fork's, and keeps the parent's key as the one the outside world knows.
 */
import { randomBytes } from 'node:crypto';
import type { Checkpoint, HistoryMessage } from '../../shared/checkpoint/schema.js';
import { ConflictError, TaskReadError } from '../store/store-types.js';
import {
  defaultActor,
  isUnfinishedCreate,
  OperationError,
  refuseUnwrittenFolder,
  TASK_ID_RE,
  type OperationEnv,
} from './task-operations.js';
import type { EngineOutcome } from './task-engine.js';
import { commandHint } from './command-hint.js';
import { continuation, hintText } from './continue-hint.js';

export interface ForkRequest {
  /** The fork's id; default `<parent>-fork-v<version>-<4 hex>`. */
  taskId?: string;
  actor?: string;
  reason?: string;
}

function forkId(parentId: string, version: number): string {
  const suffix = `-fork-v${version}-${randomBytes(2).toString('hex')}`;
  return `${parentId.slice(0, 128 - suffix.length)}${suffix}`;
}

/** Read the version a fork starts from, refusing what cannot be forked with a sentence that says why. */
async function readParent(env: OperationEnv, parentId: string, version: number): Promise<Checkpoint> {
  const entry = await env.store.getTask(parentId);
  if (!entry) throw new OperationError('not-found', `there is no task "${parentId}" in ${env.store.root}; nothing was written`);
  if (entry.format !== 'waystation') {
    throw new OperationError(
      'read-only',
      `task ${parentId} is in the ${entry.format} format: only a Waystation task is forked. Resuming it imports it where an agent recognises it (of the built-in ones, checkpoint-demo recognises the first article's four-step task); fork the imported task then. Nothing was written.`,
    );
  }
  const latest = entry.checkpoint?.version ?? 0;
  const noVersion = `task ${parentId} has no version ${version}${latest ? ` (its versions are 1 to ${latest})` : ''}; nothing was written`;
  if (!Number.isInteger(version) || version < 1) throw new OperationError('invalid', noVersion);
  // A version past the newest is not there, as for every read of a version (the API's 404), not a malformed request.
  if (latest > 0 && version > latest) throw new OperationError('not-found', noVersion);
  try {
    return await env.store.readVersion(parentId, version);
  } catch (err) {
    if (err instanceof TaskReadError) {
      throw new OperationError('unreadable', `version ${version} of task ${parentId} cannot be read (${err.message}); nothing was written`);
    }
    throw err;
  }
}

/**
 * Fork task `parentId` at `version` into a new task.
 *
 * A fork starts with no stop and no lease: a stop the parent was asked for, or
 * had recorded, was about the parent's run. A fork of a version that was
 * running is interrupted, and automatic recovery leaves it alone until an
 * operation of its own writes a version (`isUntouchedFork`), so nothing resumes
 * it but a person; any other status is carried as it was.
 */
export async function forkTask(env: OperationEnv, parentId: string, version: number, req: ForkRequest = {}): Promise<EngineOutcome> {
  const taskId = req.taskId ?? forkId(parentId, version);
  if (!TASK_ID_RE.test(taskId)) {
    throw new OperationError(
      'invalid',
      `"${taskId}" cannot be a task id: use letters, digits, ".", "_" and "-", starting with a letter or digit. Nothing was written.`,
    );
  }
  // A fork (or start) interrupted before its first version was written left only a folder: forking again takes its place.
  const existing = await env.store.getTask(taskId);
  if (existing && !isUnfinishedCreate(existing))
    throw new OperationError('exists', `task ${taskId} already exists in ${env.store.root}; nothing was written`);
  const cp = await readParent(env, parentId, version);
  const actor = req.actor ?? defaultActor(env);
  const at = new Date().toISOString();

  // Step results and messages are content-addressed blobs of the parent: the fork stores its own copies.
  const results: Record<string, unknown> = {};
  for (const s of cp.plan) if (s.result_ref) results[s.id] = await env.store.readBlob(parentId, s.result_ref);
  const messages: HistoryMessage[] = cp.history.count > 0 ? await env.store.readHistory(parentId, version) : [];

  const origin = { task_id: parentId, version };
  const note = `forked from ${parentId} at version ${version}${req.reason ? `: ${req.reason}` : ''}`;
  // The fork runs the parent's agent, so what continues the parent continues it.
  const goOn = await continuation(env.root, { ...cp, task_id: taskId });
  const { version: _v, ...state } = cp;
  const first: Omit<Checkpoint, 'version'> = {
    ...state,
    task_id: taskId,
    plan: cp.plan.map(({ result_ref: _ref, ...s }) => s),
    side_effects: cp.side_effects.map((e) => {
      const asked = (e.asked_key ?? e.idempotency_key).replaceAll(parentId, taskId);
      return asked === e.idempotency_key ? e : { ...e, asked_key: asked };
    }),
    history: { count: 0, head: null },
    recovery: { ...cp.recovery, auto_attempts: 0, stopped: null },
    run: { ...cp.run, created_at: at, updated_at: at },
    resume_hint: cp.status === 'running' ? `${note}; continue with ${hintText(goOn)}` : cp.resume_hint,
    source: { kind: 'fork', actor, note, forked_from: origin },
    forked_from: origin,
  };
  let created: Checkpoint;
  try {
    created = (await env.store.create(first, { results, appendHistory: messages })).checkpoint;
  } catch (err) {
    if (err instanceof ConflictError)
      throw new OperationError('exists', `task ${taskId} was created by another writer at the same moment; nothing was written`);
    refuseUnwrittenFolder(err);
    throw err;
  }
  await env.store
    .appendEvent(taskId, { type: 'runner', data: { status: 'forked', from: origin, by: actor } })
    .catch((err: unknown) => env.report?.(`could not append the fork's event: ${err instanceof Error ? err.message : String(err)}`));
  return {
    task_id: taskId,
    status: created.status,
    version: created.version,
    message: `task ${taskId} forked from ${parentId} at version ${version} (${created.status === 'running' ? 'interrupted: nothing runs it until it is resumed' : created.status})`,
    // From a version mid-run, the fork is held where it was forked, driven by no run: the line names it
    // interrupted, as the task list does.
    ...(created.status === 'running' ? { stopped: true } : {}),
    next: created.status === 'done' ? `rerun a step: ${commandHint(taskId, 'rewind', ' STEP')}` : `continue: ${goOn.text}`,
  };
}
