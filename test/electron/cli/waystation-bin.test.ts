/**
 * The real binary, spawned as a user would run it. Kept to a few cases: each
 * spawn starts a process (through tsx when dist/ is not current); the rest is
 * covered in-process, and the launcher's choice in test/bin/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { openStore } from '../../../electron/store/directory-store.js';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, writeMixedDirectory } from './cli-fixtures.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = path.join(repo, 'bin', 'waystation.mjs');
let dir: string;

beforeAll(async () => {
  dir = await makeTempDir('bin');
  await writeMixedDirectory(dir);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

function waystation(...args: string[]) {
  // Piped output and no NO_COLOR: colour must still be off because stdout is not a TTY.
  const env = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: repo, encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bin/waystation.mjs', () => {
  it('lists every command in --help and exits 0', () => {
    const { code, stdout } = waystation('--help');
    expect(code).toBe(0);
    for (const name of ['ls', 'show', 'history', 'diff', 'verify']) expect(stdout).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
  });

  it('prints ls --json for a mixed directory and exits 1 for its unreadable task', () => {
    const { code, stdout } = waystation('ls', dir, '--json');
    expect(code).toBe(1);
    const tasks = JSON.parse(stdout) as { task_id: string; format: string; problems: unknown[] }[];
    expect(new Set(tasks.map((t) => t.format))).toEqual(new Set(['waystation', 'article-task-json', 'article-checkpoint-json']));
    expect(tasks.every((t) => Array.isArray(t.problems))).toBe(true);
  });

  it('writes no colour codes when piped, and exits 1 on drift', () => {
    const { code, stdout } = waystation('verify', dir, 'drifted');
    expect(code).toBe(1);
    expect(stdout).toContain('out/drifted.md');
    expect(stdout).not.toContain(String.fromCharCode(27));
  });

  it('exits 2 for an unknown task', () => {
    const { code, stderr } = waystation('show', dir, 'nope');
    expect(code).toBe(2);
    expect(stderr).toMatch(/no task "nope"/);
  });

  it('ends quietly when the reader of its output goes away (`| head -1`), whatever was left to print', async () => {
    const store = openStore(dir);
    const first = (await store.listTasks()).find((t) => t.format === 'waystation' && t.checkpoint)!;
    // Far more than a pipe holds: the writes after head exits fail with EPIPE.
    for (let i = 0; i < 1500; i++) await store.appendEvent(first.task_id, { type: 'log', data: { line: `event ${i} ${'x'.repeat(60)}` } });
    const r = spawnSync('bash', ['-c', 'set -o pipefail; "$0" "$1" tail "$2" "$3" | head -1', process.execPath, bin, dir, first.task_id], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
