/**
 * Task ids for LangGraph threads: the thread id, with its namespace after a
 * `#` when it has one. Task ids may not hold `/`, `\` or NUL (they cross the
 * API and name files elsewhere), so those, `%` and `#` are percent-escaped,
 * and any thread id maps to one task id and back.
 */

const escape = (s: string) => s.replace(/[%/\\\0#]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
const unescape = (s: string) => s.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The task id of a thread in a namespace ('' for the root graph). */
export function taskIdOf(threadId: string, ns: string): string {
  const id = ns ? `${escape(threadId)}#${escape(ns)}` : escape(threadId);
  // "." and ".." are not task ids either.
  return id === '.' || id === '..' ? escape(id).replace(/\./g, '%2E') : id;
}

/** The thread and namespace a task id names. */
export function threadOf(taskId: string): { thread_id: string; checkpoint_ns: string } {
  const hash = taskId.indexOf('#');
  const decode = (s: string) => unescape(s.replace(/%2E/g, '.'));
  return hash < 0
    ? { thread_id: decode(taskId), checkpoint_ns: '' }
    : { thread_id: decode(taskId.slice(0, hash)), checkpoint_ns: decode(taskId.slice(hash + 1)) };
}
