/**
 * The checkpoint as a JSON Schema, for writers in other languages.
 *
 * Generated from the zod schema, so the published file can never drift from
 * what the store validates: `docs/checkpoint.schema.json` is this output, and
 * a test regenerates it and compares.
 */
import { z } from 'zod';
import { Checkpoint, CURRENT_SCHEMA_VERSION } from './schema.js';

/** Where the published schema lives in the repository. */
export const CHECKPOINT_SCHEMA_PATH = 'docs/checkpoint.schema.json';

/**
 * The JSON Schema of one checkpoint (`checkpoint.json`, or the `checkpoint`
 * of a full version file), as a writer may produce it: fields with defaults
 * may be left out, and unknown fields are kept.
 */
export function checkpointJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(Checkpoint, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: `Waystation checkpoint, schema_version ${CURRENT_SCHEMA_VERSION}`,
    description:
      'One version of a task. Written as checkpoint.json (the latest version) and as the checkpoint of a full version file; see docs/FORMAT.md for the directory layout and the write protocol. Generated from shared/checkpoint/schema.ts: do not edit by hand.',
    ...rest,
  };
}

/** The published file's exact text: two-space indentation and a final newline. */
export function checkpointJsonSchemaText(): string {
  return `${JSON.stringify(checkpointJsonSchema(), null, 2)}\n`;
}
