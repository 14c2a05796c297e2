/**
 * childPath gives exactly the string path.join gives, for every folder and
 * name: by concatenation where the folder is already normal, by path.join
 * where it is not.
 */
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childPath } from '../../../electron/store/child-path.js';

/** Path segments, normal and not: ".", "..", empty (a doubled separator), names with dots. */
const segment = fc.oneof(
  fc.constantFrom('', '.', '..', '...', '.hidden', 'versions', 'checkpoint.json', '00000042.json', 'a b', 'ü'),
  fc.stringMatching(/^[a-z0-9._-]{1,8}$/),
);
const folder = fc
  .tuple(fc.boolean(), fc.array(segment, { maxLength: 6 }), fc.boolean())
  .map(([absolute, parts, trailing]) => `${absolute ? '/' : ''}${parts.join('/')}${trailing ? '/' : ''}`);
const name = fc.oneof(segment, fc.constant('a/b'), fc.constant('../x'));

describe('childPath', () => {
  it('equals path.join for any folder and names', () => {
    fc.assert(
      fc.property(folder, name, fc.option(name, { nil: undefined }), (dir, a, b) => {
        const expected = b === undefined ? path.join(dir, a) : path.join(dir, a, b);
        expect(childPath(dir, a, b)).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('for the store’s own folders: a task folder, its versions and hot snapshot', () => {
    const root = path.resolve('/tmp/waystation-root');
    expect(childPath(root, 't1')).toBe(path.join(root, 't1'));
    expect(childPath(childPath(root, 't1'), 'versions', '00000007.json')).toBe(path.join(root, 't1', 'versions', '00000007.json'));
    expect(childPath(path.parse(root).root, 't1')).toBe(path.join(path.parse(root).root, 't1'));
  });
});
