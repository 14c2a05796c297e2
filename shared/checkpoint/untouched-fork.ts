/**
 * Which forks wait for a person: a module of its own, without the schema's
 * zod, as the inspector's first script imports it (test/lint/page-first-script).
 */

/**
 * A fork nothing has written to since it was made: its newest version is the
 * fork's own first one. Nothing of its own was interrupted, whatever the
 * version it was forked from was doing, so automatic recovery leaves it for a
 * person to resume (a fork carries no stop of its parent's to keep it still).
 */
export function isUntouchedFork(task: { version: number | null; forked_from?: unknown }): boolean {
  return task.version === 1 && task.forked_from != null;
}
