/**
 * The id a new task may take (a start or a fork that names one): letters,
 * digits, ".", "_" and "-", starting with a letter or digit, at most 128
 * characters. The runtime refuses any other when it creates the task; a form
 * says so as the person types, before anything is sent.
 */

/** What the runtime accepts as a new task's id (electron/runtime/task-operations.ts, TASK_ID_RE). */
export const NEW_TASK_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Why `id` cannot name a new task, or null when it can; `taken` are the ids already in the directory. */
export function newTaskIdProblem(id: string, taken: Iterable<string> = []): string | null {
  if (id.length > 128) return `a task id is at most 128 characters (this one has ${id.length})`;
  if (!NEW_TASK_ID_RE.test(id)) return 'a task id uses letters, digits, ".", "_" and "-", starting with a letter or digit';
  for (const t of taken) if (t === id) return `a task named ${id} already exists in this directory`;
  return null;
}
