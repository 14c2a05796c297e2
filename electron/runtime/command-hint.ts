/**
 * The command a person types next, as the runtime writes it into resume
 * hints and outcomes: `waystation resume <DIR> TASK`. The directory is left
 * as `<DIR>` (the runtime does not know how the person named it); the CLI
 * fills it in with the path it was given before printing.
 */

/** The placeholder for the checkpoint directory in a command hint. */
export const DIR_PLACEHOLDER = '<DIR>';

/** `waystation <verb> <DIR> <task id><extra>`, for a task or its id. */
export function commandHint(task: string | { task_id: string }, verb: string, extra = ''): string {
  const taskId = typeof task === 'string' ? task : task.task_id;
  return `waystation ${verb} ${DIR_PLACEHOLDER} ${taskId}${extra}`;
}
