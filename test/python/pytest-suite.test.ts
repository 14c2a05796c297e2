/**
 * The Python library's own suite (python/tests, pytest with hypothesis), run as part of `npm test`.
 *
 * pytest exits 0 when every test passed, 1 when one failed, and 5 when it
 * collected nothing: the summary line is checked too, so an empty or skipped
 * suite is a failure here, not a pass.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the Python library', () => {
  it('passes its pytest suite', () => {
    const run = spawnSync('python3', ['-m', 'pytest', 'python/tests', '-q', '-p', 'no:cacheprovider'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      timeout: 600_000,
    });
    const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    expect(run.error, 'python3 must be installed (.ci/run installs it with pytest and hypothesis)').toBeUndefined();
    expect(run.status, output).toBe(0);
    const summary = /(\d+) passed/.exec(output);
    expect(summary, output).not.toBeNull();
    expect(Number(summary![1])).toBeGreaterThan(50);
    expect(output).not.toMatch(/\d+ (failed|error)/);
  }, 600_000);
});
