import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isCheckpointHead } from '../../../shared/checkpoint/checkpoint-head.js';
import { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { sampleCheckpoint } from './sample-checkpoint.js';

/** The sample as a file holds it: plain JSON, no defaults filled beyond what it states. */
const plain = (): Record<string, unknown> => JSON.parse(JSON.stringify(sampleCheckpoint())) as Record<string, unknown>;

/** Set the value at a path of objects and arrays (created as needed), in place. */
function setAt(doc: Record<string, unknown>, path: (string | number)[], value: unknown): void {
  let cur: Record<string | number, unknown> = doc;
  for (const seg of path.slice(0, -1)) {
    const next = cur[seg];
    if (typeof next !== 'object' || next === null) cur[seg] = {};
    cur = cur[seg] as Record<string | number, unknown>;
  }
  cur[path[path.length - 1]] = value;
}

/** The fields a listing reads, and a few it does not. */
const PATHS: (string | number)[][] = [
  ['schema_version'],
  ['task_id'],
  ['task_name'],
  ['version'],
  ['status'],
  ['phase'],
  ['goal'],
  ['plan'],
  ['plan', 0],
  ['plan', 0, 'id'],
  ['plan', 0, 'name'],
  ['plan', 1, 'status'],
  ['plan', 1, 'started_at'],
  ['plan', 0, 'finished_at'],
  ['plan', 0, 'attempts'],
  ['plan', 0, 'result_ref'],
  ['current_step'],
  ['total_steps'],
  ['artifacts'],
  ['artifacts', 0, 'sha256'],
  ['artifacts', 0, 'size'],
  ['artifacts', 0, 'path'],
  ['artifacts', 0, 'step_id'],
  ['side_effects'],
  ['side_effects', 0, 'id'],
  ['side_effects', 0, 'status'],
  ['side_effects', 0, 'idempotency_key'],
  ['recovery'],
  ['recovery', 'mode'],
  ['recovery', 'pending_approval'],
  ['recovery', 'pending_approval', 'plan', 'rerun_step'],
  ['recovery', 'auto_attempts'],
  ['errors'],
  ['errors', 0],
  ['errors', 0, 'what'],
  ['run'],
  ['run', 'created_at'],
  ['run', 'updated_at'],
  ['run', 'tokens_in'],
  ['source'],
  ['source', 'kind'],
  ['history'],
  ['history', 'head'],
  ['history', 'count'],
  ['agent'],
  ['agent', 'name'],
  ['agent', 'project_root'],
  ['resume_hint'],
];

const jsonValue = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom('', 'x', 'done', 'manual', 'runtime', '2026-01-01T00:00:00Z', 'a'.repeat(64), `sha256:${'b'.repeat(64)}`),
  fc.constant([]),
  fc.constant({}),
  fc.constant([{}]),
);

describe('isCheckpointHead', () => {
  it('accepts a valid checkpoint, as a file holds it and as zod returns it', () => {
    expect(isCheckpointHead(plain())).toBe(true);
    expect(isCheckpointHead(sampleCheckpoint())).toBe(true);
  });

  it('refuses a wrong type in each field a list row shows', () => {
    for (const [path, value] of [
      [['current_step'], 'two'],
      [['plan', 0, 'status'], 'finished'],
      [['status'], 'sleeping'],
      [['task_name'], 7],
      [['version'], 0],
      [['recovery', 'mode'], 'sometimes'],
      [['run', 'updated_at'], ''],
      [['agent', 'name'], ''],
    ] as [(string | number)[], unknown][]) {
      const doc = plain();
      setAt(doc, path, value);
      expect(isCheckpointHead(doc), path.join('.')).toBe(false);
      expect(Checkpoint.safeParse(doc).success, path.join('.')).toBe(false);
    }
  });

  it('leaves the fields no listing reads to full validation', () => {
    const doc = plain();
    setAt(doc, ['plan', 0, 'attempts'], -1);
    setAt(doc, ['run', 'llm_calls'], 'many');
    expect(isCheckpointHead(doc)).toBe(true);
    expect(Checkpoint.safeParse(doc).success).toBe(false);
  });

  it('is never stricter than the schema: what it refuses, zod refuses too', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...PATHS), jsonValue), { minLength: 1, maxLength: 3 }), (edits) => {
        const doc = plain();
        // A copy per edit: one generated value set at two paths must not let a later edit write into it.
        for (const [path, value] of edits) setAt(doc, path, structuredClone(value));
        // Round-trip through JSON, as a file would hold it (undefined drops the key).
        const file = JSON.parse(JSON.stringify(doc)) as unknown;
        if (!isCheckpointHead(file)) expect(Checkpoint.safeParse(file).success).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});
