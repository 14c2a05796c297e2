/**
 * The published JSON Schema is the zod schema's own output. Regenerate it
 * after changing shared/checkpoint/schema.ts with
 * `WAYSTATION_UPDATE_SCHEMA=1 npx vitest run test/docs`.
 */
import { describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKPOINT_SCHEMA_PATH, checkpointJsonSchema, checkpointJsonSchemaText } from '../../shared/checkpoint/json-schema.js';
import { CURRENT_SCHEMA_VERSION } from '../../shared/checkpoint/schema.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const file = path.join(repo, CHECKPOINT_SCHEMA_PATH);

describe('docs/checkpoint.schema.json', () => {
  it('is exactly what the zod schema generates today', async () => {
    const expected = checkpointJsonSchemaText();
    // The Python library bundles the same file (python/tests checks that it is the published one).
    if (process.env.WAYSTATION_UPDATE_SCHEMA === '1') {
      await fs.writeFile(file, expected);
      await fs.writeFile(path.join(repo, 'python/waystation/checkpoint.schema.json'), expected);
    }
    const onDisk = await fs.readFile(file, 'utf8').catch(() => '(missing)');
    expect(onDisk, `${CHECKPOINT_SCHEMA_PATH} is out of date: run WAYSTATION_UPDATE_SCHEMA=1 npx vitest run test/docs`).toBe(expected);
  });

  it('describes the fields a writer in another language must produce', () => {
    const schema = checkpointJsonSchema() as { required: string[]; properties: Record<string, { const?: unknown }> };
    expect(schema.properties.schema_version.const).toBe(CURRENT_SCHEMA_VERSION);
    for (const field of ['schema_version', 'task_id', 'version', 'status', 'plan', 'recovery', 'run', 'source']) {
      expect(schema.required).toContain(field);
    }
    // Defaults make a field optional for writers: the store fills them in.
    expect(schema.required).not.toContain('artifacts');
    expect(schema.required).not.toContain('history');
  });
});
