/**
 * The benches' command lines: `--help` prints the script's description and
 * options and measures nothing; a mistyped option or a bad count is one line
 * and exit 2, before any work. Each script is run as a user runs it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptUsage, wholeNumbers } from '../../bench/lib/bench-args.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const SCRIPTS = readdirSync(path.join(REPO, 'bench')).filter((f) => f.endsWith('.ts'));

function run(script: string, args: string[]) {
  return spawnSync(process.execPath, [path.join(REPO, 'bin/waystation-tsx.mjs'), path.join(REPO, 'bench', script), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 60_000,
    // As `npm run bench` would not: each script is the program here, never a library another bench imports.
    env: { ...process.env, npm_lifecycle_event: '' },
  });
}

describe('the bench scripts', () => {
  it('are all here', () => {
    expect(SCRIPTS).toEqual(
      expect.arrayContaining(['run-bench.ts', 'runtime-bench.ts', 'store-bench.ts', 'startup-bench.ts', 'compare-langgraph.ts']),
    );
  });

  it.each(SCRIPTS)('%s --help prints its own description and measures nothing', (script) => {
    const r = run(script, ['--help']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const usage = scriptUsage(new URL(`file://${path.join(REPO, 'bench', script)}`).href);
    expect(r.stdout.trim()).toBe(usage);
    // The description, not a comment's margin or the code after it.
    expect(usage).not.toMatch(/^\s*\*/m);
    expect(usage).not.toContain('import ');
  });

  it.each(SCRIPTS)('%s refuses an option it does not know, in one line', (script) => {
    const r = run(script, ['--stpes', '100']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe("Unknown option '--stpes' (--help lists the options)");
  });

  it('refuses a count that is not one, naming the option', () => {
    const r = run('runtime-bench.ts', ['--read-runs', 'three']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('--read-runs takes a whole number of at least 1, got "three" (--help lists the options)');
    const store = run('store-bench.ts', ['--steps', '1']);
    expect(store.status).toBe(2);
    expect(store.stderr.trim()).toBe('--steps takes a whole number of at least 2, got "1" (--help lists the options)');
  });
});

describe('wholeNumbers', () => {
  it('reads a list, and an empty one as none', () => {
    expect(wholeNumbers('steps', '100, 1000,10000', 2)).toEqual([100, 1000, 10000]);
    expect(wholeNumbers('large-plans', '', 2)).toEqual([]);
  });
});
