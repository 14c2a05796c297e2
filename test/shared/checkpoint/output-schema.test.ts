import { describe, expect, it } from 'vitest';
import { validateAgainstSchema } from '../../../shared/checkpoint/output-schema.js';

const summarySchema = {
  type: 'object',
  required: ['title', 'words'],
  properties: {
    title: { type: 'string', minLength: 1 },
    words: { type: 'integer', minimum: 0 },
    tone: { enum: ['neutral', 'formal'] },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
  },
  additionalProperties: false,
};

describe('validateAgainstSchema', () => {
  it('accepts a value that satisfies the schema', () => {
    expect(validateAgainstSchema(summarySchema, { title: 'A', words: 3, tone: 'formal', tags: ['x'] })).toEqual([]);
  });

  it('asserts format uri as zod url() does (what `new URL` parses), and leaves other formats as annotations', () => {
    const schema = { type: 'object', properties: { url: { type: 'string', format: 'uri' }, at: { type: 'string', format: 'date-time' } } };
    expect(validateAgainstSchema(schema, { url: 'https://example.com/p', at: 'whenever' })).toEqual([]);
    expect(validateAgainstSchema(schema, { url: 'http://127.0.0.1:8080/publish' })).toEqual([]);
    expect(validateAgainstSchema(schema, { url: 'not a url' })).toEqual(['$.url: must be a URL (such as https://example.com/path)']);
  });

  it('accepts anything when there is no schema', () => {
    expect(validateAgainstSchema(null, { any: 1 })).toEqual([]);
    expect(validateAgainstSchema(undefined, 'x')).toEqual([]);
  });

  it('names the path and the expected type of a mismatch', () => {
    expect(validateAgainstSchema(summarySchema, { title: 5, words: 1 })).toEqual(['$.title: expected string, got integer']);
  });

  it('reports missing required properties and unexpected ones', () => {
    const errors = validateAgainstSchema(summarySchema, { title: 'A', extra: true });
    expect(errors).toContain('$: missing required property "words"');
    expect(errors).toContain('$: unexpected property "extra"');
  });

  it('checks string length, numeric bounds and enums', () => {
    const errors = validateAgainstSchema(summarySchema, { title: '', words: -1, tone: 'loud' });
    expect(errors).toEqual([
      '$.title: must be at least 1 character long',
      '$.words: must be ≥ 0',
      '$.tone: must be one of "neutral", "formal"',
    ]);
  });

  it('checks array items by index and array size', () => {
    const errors = validateAgainstSchema(summarySchema, { title: 'A', words: 1, tags: ['a', 2, 'c', 'd'] });
    expect(errors).toEqual(['$.tags: must have at most 3 items', '$.tags[1]: expected string, got integer']);
  });

  it('treats integer as a kind of number and rejects fractions for integer', () => {
    expect(validateAgainstSchema({ type: 'number' }, 3)).toEqual([]);
    expect(validateAgainstSchema({ type: 'integer' }, 3.5)).toEqual(['$: expected integer, got number']);
  });

  it('supports type lists, nullable values and anyOf', () => {
    expect(validateAgainstSchema({ type: ['string', 'null'] }, null)).toEqual([]);
    expect(validateAgainstSchema({ anyOf: [{ type: 'string' }, { type: 'array' }] }, 4)).toHaveLength(1);
    expect(validateAgainstSchema({ anyOf: [{ type: 'string' }, { type: 'array' }] }, [])).toEqual([]);
  });

  it('reports a broken pattern instead of throwing', () => {
    expect(validateAgainstSchema({ type: 'string', pattern: '(' }, 'x')[0]).toMatch(/not a valid regular expression/);
    expect(validateAgainstSchema({ type: 'string', pattern: '^a+$' }, 'b')).toEqual(['$: must match the pattern ^a+$']);
  });
});
