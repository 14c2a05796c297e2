/**
 * What the scenarios that disturb the Python examples share: which examples
 * and modes they draw from, the command line of one run of an example, how a
 * refusal is judged, and the checks once a task's runs are over.
 */
import path from 'node:path';
import type { CheckpointSource } from '../../../electron/store/store-types.js';
import { REPO } from './cli-bundle.js';
import { checkFinishedTask, type FinishedTaskExpectation } from './finished-task-checks.js';
import type { Tally } from './scenario.js';

export const AGENTS = ['checkpoint_demo', 'md_summarizer'] as const;
export const MODES = ['manual', 'auto', 'confirm'] as const;
export type Agent = (typeof AGENTS)[number];
export type Mode = (typeof MODES)[number];

/** Runs of the agent after which a task that is still not done counts as never finished. */
export const MAX_COMMANDS = 25;

/** Where the examples find their input and publish their index. */
export interface ExampleInputs {
  /** The Markdown folder the summariser reads. */
  input: string;
  /** The fake publish service's URL. */
  publishUrl: string;
}

/** The `python3` arguments of one run of `agent` on `taskId` (`approve`: the approval a confirm-mode task waits for). */
export function exampleArgs(
  agent: Agent,
  inputs: ExampleInputs,
  run: { root: string; taskId: string; mode?: Mode; approve?: boolean },
): string[] {
  return [
    path.join(REPO, 'python/examples', `${agent}.py`),
    run.root,
    '--task',
    run.taskId,
    ...(run.mode ? ['--mode', run.mode] : []),
    ...(agent === 'md_summarizer' ? ['--input', inputs.input, '--publish-url', inputs.publishUrl] : []),
    ...(run.approve ? ['--approve'] : []),
  ];
}

/** A refusal (usage, busy) must say why in a sentence: one that does not is a violation. Counted by its exit code. */
export function checkRefusal(tally: Tally, where: string, code: number | null, stderr: string): void {
  if (!/error: .{10,}/.test(stderr)) tally.violation('unclear refusal', `${where}: exit ${code} with ${JSON.stringify(stderr)}`);
  tally.bump(`exit ${code}`);
}

/** Once a task's runs are over: it must be done (else a violation naming where it stands), then it is checked whole. */
export async function checkRunsEnded(
  tally: Tally,
  store: CheckpointSource,
  task: { root: string; taskId: string; where: string; finished: boolean },
  expected: FinishedTaskExpectation,
): Promise<void> {
  if (!task.finished) {
    const status = (await store.getTask(task.taskId))?.checkpoint?.status;
    tally.violation('task never finished', `${task.where}: still ${status ?? 'missing'} after ${MAX_COMMANDS} runs`);
    return;
  }
  await checkFinishedTask(tally, task.root, task.taskId, task.where, expected);
}
