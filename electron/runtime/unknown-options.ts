/**
 * Options an agent does not have. A zod object drops keys it does not
 * declare, so `--inptu notes` (a typo) or an option of another agent would
 * start a task as if it had not been given: the task runs on its defaults and
 * the person learns of it from what it made. A start names such options and
 * writes nothing instead, in the words the Python library uses for an
 * option its JSON Schema does not name (python/waystation/options.py). An
 * agent whose schema takes any key (a loose or catch-all object) is given
 * what it takes.
 */
import type { z } from 'zod';
import { nearestName } from './nearest-name.js';

/** Wrappers whose inner schema decides the keys (`.default()`, `.optional()`, `.transform()`, ...). */
interface SchemaDef {
  type?: string;
  shape?: Record<string, unknown>;
  catchall?: unknown;
  innerType?: { _zod?: { def?: SchemaDef } };
  in?: { _zod?: { def?: SchemaDef } };
}

/** The keys the object at the root of `schema` declares, or null when it takes keys it does not declare, or is no object. */
function declaredKeys(schema: z.ZodType): string[] | null {
  let def = (schema as unknown as { _zod?: { def?: SchemaDef } })._zod?.def;
  // A handful of wrappers at most; a cycle is not something zod builds, but the walk is bounded anyway.
  for (let depth = 0; def && depth < 8; depth++) {
    if (def.type === 'object') {
      const takesAny = def.catchall !== undefined && (def.catchall as { _zod?: { def?: SchemaDef } })._zod?.def?.type !== 'never';
      return takesAny ? null : Object.keys(def.shape ?? {});
    }
    def = (def.innerType ?? def.in)?._zod?.def;
  }
  return null;
}

/**
 * Why `options` cannot start a task of agent `agent` whose options schema is `schema`: the keys it does not
 * declare, each with the nearest it does, and the ones it has. Null when every key is one the schema takes.
 */
export function unknownOptionsMessage(agent: string, schema: z.ZodType, options: Record<string, unknown>): string | null {
  const keys = declaredKeys(schema);
  if (keys === null) return null;
  const unknown = Object.keys(options).filter((k) => !keys.includes(k));
  if (unknown.length === 0) return null;
  const named = unknown.map((k) => {
    const near = nearestName(k, keys);
    return near ? `"${k}" (did you mean "${near}"?)` : `"${k}"`;
  });
  const has = keys.length === 0 ? 'it takes no options' : `its options: ${keys.map((k) => `"${k}"`).join(', ')}`;
  return `agent ${agent} has no option ${named.join(', no option ')}; ${has}. Nothing was written.`;
}
