/**
 * Which options a schema does not take: what a start refuses before it
 * writes anything (agent-start-refusals.test.ts has the start itself).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { unknownOptionsMessage } from '../../../electron/runtime/unknown-options.js';

describe('unknownOptionsMessage', () => {
  it('is null when every key is declared', () => {
    expect(unknownOptionsMessage('a', z.object({ input: z.string() }), { input: 'x' })).toBeNull();
  });

  it('names a key a strict object would refuse, in the same words as a stripping one', () => {
    const strict = unknownOptionsMessage('a', z.strictObject({ input: z.string() }), { output: 'x' });
    const strip = unknownOptionsMessage('a', z.object({ input: z.string() }), { output: 'x' });
    expect(strict).toBe('agent a has no option "output"; its options: "input". Nothing was written.');
    expect(strip).toBe(strict);
  });

  it('takes any key a catch-all object takes', () => {
    expect(unknownOptionsMessage('a', z.object({}).catchall(z.number()), { n: 1 })).toBeNull();
    expect(unknownOptionsMessage('a', z.object({}).passthrough(), { n: 1 })).toBeNull();
  });

  it('leaves a schema that is not an object to the schema (a record says what its keys may be)', () => {
    expect(unknownOptionsMessage('a', z.record(z.string(), z.number()), { n: 1 })).toBeNull();
  });

  it('suggests an option that the unknown one is the start of, or two edits from, and nothing farther', () => {
    const schema = z.object({ 'publish-url': z.string().optional(), output: z.string().optional() });
    expect(unknownOptionsMessage('a', schema, { publish: 'u' })).toContain('"publish" (did you mean "publish-url"?)');
    expect(unknownOptionsMessage('a', schema, { ouptut: 'o' })).toContain('(did you mean "output"?)');
    expect(unknownOptionsMessage('a', schema, { colour: 'red' })).toContain('no option "colour";');
  });
});
