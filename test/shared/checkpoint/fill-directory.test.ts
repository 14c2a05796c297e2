/** The `<DIR>` of a command hint filled in, quoted where a shell would split the path or read its characters. */
import { expect, it } from 'vitest';
import { fillDirectory } from '../../../shared/checkpoint/fill-directory.js';

it('leaves a plain path as it is, and quotes any other for a POSIX shell', () => {
  expect(fillDirectory('waystation resume <DIR> t1', '/tmp/checkpoints')).toBe('waystation resume /tmp/checkpoints t1');
  expect(fillDirectory('waystation resume <DIR> t1', '/tmp/my dir ü')).toBe("waystation resume '/tmp/my dir ü' t1");
  expect(fillDirectory('waystation resume <DIR> t1', "/tmp/it's")).toBe(`waystation resume '/tmp/it'\\''s' t1`);
  expect(fillDirectory('waystation resume <DIR> t1', null)).toBe('waystation resume <DIR> t1');
});
