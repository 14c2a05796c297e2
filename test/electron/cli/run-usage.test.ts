/**
 * `waystation run`: options it cannot take refused as usage errors that name the option, with nothing written, and
 * the command that continues a run printed as it can be pasted.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { captureCli as cli } from './capture-cli.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-run-usage-'));
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

it('refuses a --max-attempts that is not a whole number JSON keeps exactly, naming it, not the agent', async () => {
  for (const bad of ['-1', '1.5', 'abc', '99999999999999999999']) {
    const out = await cli('run', dir, 'checkpoint-demo', '--task', 't', '--mode', 'auto', '--max-attempts', bad);
    expect(out.code).toBe(2);
    expect(out.err).toContain(`--max-attempts must be a whole number from 0 to 9007199254740991, not "${bad}"`);
    expect(out.err).not.toContain('describes a task that is not a valid checkpoint');
  }
  expect(await fs.readdir(dir)).toEqual([]);
});

it('prints the command that continues a run with the directory quoted for a shell where it must be', async () => {
  const spaced = path.join(dir, 'my dir ü');
  const before = process.env.SKIP_FAILURE;
  delete process.env.SKIP_FAILURE;
  try {
    const out = await cli('run', spaced, 'checkpoint-demo', '--task', 't1');
    expect(out.code).toBe(1);
    expect(out.out).toContain(`waystation resume '${spaced}' t1`);
  } finally {
    if (before !== undefined) process.env.SKIP_FAILURE = before;
  }
});

it('refuses a file where the directory run, demo or copy would make stands, as bad input, with nothing written', async () => {
  const file = path.join(dir, 'notes.txt');
  await fs.writeFile(file, 'a file\n');
  const source = path.join(dir, 'source');
  await fs.mkdir(source);
  for (const [args, what] of [
    [['run', file, 'checkpoint-demo'], 'the checkpoint directory'],
    [['run', path.join(file, 'inside'), 'checkpoint-demo'], 'the checkpoint directory'],
    [['demo', file], 'the demo directory'],
    [['copy', source, file], 'the checkpoint directory'],
  ] as const) {
    const out = await cli(...args);
    expect(out.code, `${args.join(' ')}: ${out.err}`).toBe(2);
    expect(out.err).toContain(`: cannot create ${what}: `);
    expect(out.err).toContain('nothing was written');
  }
  expect((await fs.readdir(dir)).sort()).toEqual(['notes.txt', 'source']);
  expect(await fs.readdir(source)).toEqual([]);
  expect(await fs.readFile(file, 'utf8')).toBe('a file\n');
});

it('says of a file given to a command that reads a directory that it works on one, not that it changes one', async () => {
  const file = path.join(dir, 'notes.txt');
  await fs.writeFile(file, 'a file\n');
  for (const args of [
    ['verify', file, 't'],
    ['tail', file, 't'],
  ]) {
    const out = await cli(...args);
    expect(out.code).toBe(2);
    expect(out.err).toContain(`${file} is not a directory: this command works on a checkpoint directory or a postgres:// store`);
  }
});
