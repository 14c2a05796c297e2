/**
 * Options an agent's schema refused, said the way the Python library says it
 * (python/waystation/schema.py, `validate`): one `options.<path>: <problem>`
 * each. zod's own wording for an option left out, "Invalid input: expected
 * string, received undefined", reads as if something had been given; a
 * person who ran `waystation run DIR md-summarizer` without `--input` is told
 * `options.input: is required` instead. Messages an agent wrote into its
 * schema (`.min(1, 'an --input folder is required')`) are kept as written.
 */
import type { z } from 'zod';

/** The value at `path` inside `given`, or undefined when any step of it is missing. */
function valueAt(given: unknown, path: readonly PropertyKey[]): unknown {
  let at = given;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** The problems of `error`, from parsing `given` against an agent's options, joined into one line. */
export function optionIssuesMessage(error: z.ZodError, given: unknown): string {
  return error.issues
    .map((issue) => {
      // `options.items[1].name`, as the Python library writes a path.
      const where = issue.path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : `${at}.${String(key)}`), 'options');
      if (issue.code === 'invalid_type' && valueAt(given, issue.path) === undefined) return `${where}: is required`;
      // "Invalid input: expected number, received string": what follows the category says it all.
      return `${where}: ${issue.message.replace(/^Invalid (input|option): /, '')}`;
    })
    .join('; ');
}
