/**
 * An agent's options schema as JSON Schema: what the start form is built
 * from and what `waystation agents --json` prints. The built-in agents are
 * described in the host's process, registered ones in a worker process;
 * both go through this one conversion, so a form looks the same whichever
 * process described its agent.
 */
import { z } from 'zod';

/**
 * The JSON Schema of an agent's options, as a caller may write them.
 *
 * Defaults may be left out (`io: 'input'`), and a part zod cannot express
 * (a transform, a custom check) is left open rather than failing the whole
 * schema; `{}` when the value is not a zod schema at all.
 */
export function optionsJsonSchema(schema: unknown): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return {};
  }
}
