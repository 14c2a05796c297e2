/**
 * What continues a task, as the operations a person runs on any task (stop,
 * edit, rewind, fork) name it in their outcome and in the resume hint they
 * save: `waystation resume` where Waystation runs the task's agent; for a
 * task another program wrote (a Python program through Waystation's library,
 * any writer of docs/FORMAT.md), that program run again, since `waystation
 * resume` refuses such a task and naming it would send a person into that
 * refusal.
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { agentStatus } from './agent-status.js';
import { commandHint } from './command-hint.js';

export interface Continuation {
  /** The command to type, or what to do in words. */
  text: string;
  /** Whether `text` is a command (quoted as code in a hint) rather than words. */
  command: boolean;
}

/** What continues `cp` (see the module's comment); `root` is the checkpoint directory its agent is looked up in. */
export async function continuation(root: string, cp: Checkpoint): Promise<Continuation> {
  const { kind } = await agentStatus(root, cp);
  if (kind !== 'foreign' && kind !== 'none') return { text: commandHint(cp, 'resume'), command: true };
  const agent = cp.agent ? ` (agent "${cp.agent.name}")` : '';
  return { text: `run the program that wrote ${cp.task_id} again${agent}; Waystation does not resume it`, command: false };
}

/** As a resume hint writes it: a command in backticks, words as they are. */
export function hintText(c: Continuation): string {
  return c.command ? `\`${c.text}\`` : c.text;
}
