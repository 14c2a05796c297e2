/**
 * The commands the CLI prints for a person to paste next are read back by a
 * shell as the words meant: a directory or a step name with spaces is
 * quoted, as the `next:` lines already quote the directory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { captureCli } from './capture-cli.js';

let tmp: string;

beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pasted-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** The words a POSIX shell makes of `command`'s arguments (the text after its first word). */
function shellWords(command: string): string[] {
  const args = command.slice(command.indexOf(' ') + 1);
  return execFileSync('sh', ['-c', `for w in ${args}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);
}

describe('a command printed to paste', () => {
  it("names a directory and a step with spaces as a shell reads them back: demo's and rewind's", async () => {
    const dir = path.join(tmp, "my dir's ✓");
    const demo = await captureCli('demo', dir);
    expect(demo.code).toBe(0);
    const browse = /browse it: (waystation serve .*)\n/.exec(demo.out)?.[1];
    expect(shellWords(browse!)).toEqual(['serve', dir]);

    const cp = JSON.parse(await fs.readFile(path.join(dir, 'demo-done', 'checkpoint.json'), 'utf8')) as { plan: { name: string }[] };
    const step = cp.plan.map((s) => s.name).find((name) => name.includes(' '));
    expect(step).toBeDefined();
    const preview = await captureCli('rewind', dir, 'demo-done', step!);
    expect(preview.code).toBe(0);
    const rewind = /to rewind: (waystation rewind .*)\n/.exec(preview.out)?.[1];
    expect(shellWords(rewind!)).toEqual(['rewind', dir, 'demo-done', step, '--yes']);
  }, 30_000);
});
