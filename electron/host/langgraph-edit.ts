/**
 * "Edit state" on a checkpoint of a LangGraph thread: the preview of what
 * would be written and the write itself (see
 * electron/sources/langgraph/fork-writer.ts). The write is the one change
 * Waystation makes to a LangGraph checkpointer, so it is asked for in two
 * steps: the preview, shown to a person, then the write, refused when the
 * checkpoint is no longer the one the preview showed.
 */
import type { ActionResult, ApiParsedInput, ThreadEditPlan } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import type { CheckpointSource } from '../store/store-types.js';
import { planFork, writeFork } from '../sources/langgraph/fork-writer.js';
import { LangGraphSource } from '../sources/langgraph/langgraph-source.js';

function langGraphOf(store: CheckpointSource): LangGraphSource {
  if (!(store instanceof LangGraphSource)) {
    throw new ApiError(
      'invalid-input',
      'editing state is for LangGraph threads; this directory is not a LangGraph checkpointer. Nothing was written.',
    );
  }
  return store;
}

/** What the edit would write; nothing is written. */
export async function previewThreadEdit(store: CheckpointSource, input: ApiParsedInput<'previewThreadEdit'>): Promise<ThreadEditPlan> {
  const plan = await planFork(langGraphOf(store), input.taskId, String(input.version), input.values);
  return {
    taskId: input.taskId,
    where: plan.file,
    thread_id: plan.thread_id,
    checkpoint_ns: plan.checkpoint_ns,
    parent: plan.parent,
    step: plan.step,
    serde: plan.serde,
    channels: plan.channels,
    values: input.values,
  };
}

/** Write the edit as a new checkpoint on the thread; its version number is the thread's newest. */
export async function editThreadState(store: CheckpointSource, input: ApiParsedInput<'editThreadState'>): Promise<ActionResult> {
  const source = langGraphOf(store);
  const plan = await planFork(source, input.taskId, String(input.version), input.values);
  if (plan.parent.checkpoint_id !== input.expectedCheckpointId) {
    throw new ApiError(
      'conflict',
      `version ${input.version} of ${input.taskId} is checkpoint ${plan.parent.checkpoint_id} now, not ${input.expectedCheckpointId} as previewed; nothing was written`,
    );
  }
  await writeFork(source, plan);
  const history = await source.history(input.taskId);
  const version =
    history.findIndex((v) => (v.source as { langgraph?: { checkpoint_id: string } }).langgraph?.checkpoint_id === plan.checkpoint_id) + 1;
  return {
    taskId: input.taskId,
    version: version || null,
    message: `Wrote checkpoint ${plan.checkpoint_id} on thread ${plan.thread_id}, from version ${plan.parent.version}: ${plan.channels.map((c) => c.name).join(', ')} set. Invoking the graph on the thread carries on from it.`,
  };
}
