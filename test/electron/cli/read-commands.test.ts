/**
 * The read commands run in-process through runCli against a hand-written
 * directory: fast, and the same code path as the real binary minus the spawn
 * (which waystation-bin.test.ts covers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../../../electron/cli/main.js';
import { TaskListing } from '../../../shared/checkpoint/task-summary.js';
import { Checkpoint } from '../../../shared/checkpoint/schema.js';
import { VerifyReport } from '../../../shared/checkpoint/verify-report.js';
import { ChangeSummary } from '../../../shared/diff/semantic-summary.js';
import { makeTempDir, writeMixedDirectory, writeNativeTask, reportVersion, OUTLINE_TEXT } from './cli-fixtures.js';

let mixed: string;
let healthy: string;

beforeAll(async () => {
  mixed = await makeTempDir('mixed');
  await writeMixedDirectory(mixed);
  healthy = await makeTempDir('healthy');
  await writeNativeTask(healthy, [reportVersion(1), reportVersion(2)]);
  // Version 2 records the outline; a listing shows a task whose recorded file is missing as drifted.
  await fsp.mkdir(path.join(healthy, 'out'));
  await fsp.writeFile(path.join(healthy, 'out', 'outline.md'), OUTLINE_TEXT);
});
afterAll(async () => {
  await fsp.rm(mixed, { recursive: true, force: true });
  await fsp.rm(healthy, { recursive: true, force: true });
});

async function run(args: string[], color = false) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { out: (s) => (stdout += s), err: (s) => (stderr += s), color });
  return { code, stdout, stderr };
}

const ANSI = new RegExp(String.fromCharCode(27) + '\\[');

describe('waystation ls', () => {
  it('lists native tasks, both article formats and an unreadable task, and exits 1 for the unreadable one', async () => {
    const { code, stdout } = await run(['ls', mixed, '--json']);
    expect(code).toBe(1);
    const tasks = TaskListing.array().parse(JSON.parse(stdout));
    const byId = new Map(tasks.map((t) => [t.task_id, t]));
    expect([...byId.keys()].sort()).toEqual(expect.arrayContaining(['drifted', 'legacy-001', 'live', 'report', 'stale', 'torn']));

    expect(byId.get('report')).toMatchObject({
      format: 'waystation',
      version: 3,
      status: 'done',
      display_status: 'done',
      read_only: false,
      problems: [],
    });
    expect(byId.get('report')?.plan).toEqual([
      { id: 'outline', name: 'Outline', status: 'done' },
      { id: 'write', name: 'Write', status: 'done' },
    ]);
    expect(byId.get('report')?.step_counts).toEqual({ pending: 0, running: 0, done: 2, failed: 0, skipped: 0 });
    expect(byId.get('live')?.display_status).toBe('running');
    expect(byId.get('stale')?.display_status).toBe('interrupted');

    const legacy = byId.get('legacy-001');
    expect(legacy).toMatchObject({ format: 'article-task-json', read_only: true, current_step: 2, total_steps: 4 });
    // Read-only article files carry a warning, not an error: they do not make ls fail.
    expect(legacy?.problems.map((p) => [p.reason, p.severity])).toEqual([['legacy-format', 'warning']]);
    const articleTwo = tasks.find((t) => t.format === 'article-checkpoint-json');
    expect(articleTwo).toMatchObject({ read_only: true, location: 'article-two/checkpoint.json', phase: 'validate_tool_result' });

    const torn = byId.get('torn');
    expect(torn).toMatchObject({
      display_status: 'unreadable',
      status: null,
      version: null,
      plan: [],
      step_counts: { pending: 0, running: 0, done: 0, failed: 0, skipped: 0 },
    });
    expect(torn?.problems.some((p) => p.severity === 'error')).toBe(true);
  });

  it('exits 0 for a directory whose tasks are all healthy', async () => {
    const { code, stdout } = await run(['ls', healthy, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      expect.objectContaining({ task_id: 'report', version: 2, display_status: 'interrupted', problems: [] }),
    ]);
  });

  it('prints a table without colour codes unless colour is on', async () => {
    const plain = await run(['ls', mixed]);
    expect(plain.stdout).toMatch(/report\s+done\s+2\/2/);
    expect(plain.stdout).toMatch(/torn/);
    expect(plain.stdout).not.toMatch(ANSI);
    expect((await run(['ls', mixed], true)).stdout).toMatch(ANSI);
  });

  it('treats a missing directory as a usage error', async () => {
    const { code, stderr } = await run(['ls', path.join(mixed, 'nope')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/no such directory/);
  });
});

describe('waystation show', () => {
  it('prints the canonical checkpoint, latest or by version', async () => {
    const latest = await run(['show', mixed, 'report', '--json']);
    expect(latest.code).toBe(0);
    expect(Checkpoint.parse(JSON.parse(latest.stdout))).toMatchObject({ version: 3, status: 'done' });
    const first = await run(['show', mixed, 'report', '--version', '1', '--json']);
    expect(JSON.parse(first.stdout)).toMatchObject({ version: 1, phase: 'outlining' });
  });

  it('shows goal, plan, artifacts and run metadata to a person', async () => {
    const { code, stdout } = await run(['show', mixed, 'report']);
    expect(code).toBe(0);
    for (const text of ['Write the quarterly report', 'Outline', 'out/report.md', 'report-notify', 'offline', '300 in, 30 out']) {
      expect(stdout).toContain(text);
    }
  });

  it('refuses unknown tasks and bad or out-of-range versions with exit code 2', async () => {
    expect((await run(['show', mixed, 'no-such-task'])).code).toBe(2);
    expect((await run(['show', mixed, 'report', '--version', 'abc'])).code).toBe(2);
    expect((await run(['show', mixed, 'report', '--version', '0'])).code).toBe(2);
    const beyond = await run(['show', mixed, 'report', '--version', '9']);
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/versions 1 to 3/);
  });

  it('exits 1 with the problems when the checkpoint cannot be read', async () => {
    const { code, stdout, stderr } = await run(['show', mixed, 'torn', '--json']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/torn/);
  });
});

describe('waystation history', () => {
  it('lists versions oldest first with their source and time', async () => {
    const { code, stdout } = await run(['history', mixed, 'report', '--json']);
    expect(code).toBe(0);
    const versions = JSON.parse(stdout) as { version: number; source: { kind: string }; updated_at: string; bytes: number }[];
    expect(versions.map((v) => [v.version, v.source.kind, v.updated_at])).toEqual([
      [1, 'runtime', '2026-01-10T10:01:00Z'],
      [2, 'runtime', '2026-01-10T10:02:00Z'],
      [3, 'runtime', '2026-01-10T10:03:00Z'],
    ]);
    expect(versions.every((v) => v.bytes > 0)).toBe(true);
  });

  it('lists the versions that exist and exits 1 when one is missing', async () => {
    const gappy = await makeTempDir('gap');
    try {
      await writeNativeTask(gappy, [reportVersion(1), reportVersion(2), reportVersion(3)]);
      await fsp.rm(path.join(gappy, 'report', 'versions', '00000002.json'));
      const { code, stdout, stderr } = await run(['history', gappy, 'report', '--json']);
      expect(code).toBe(1);
      expect((JSON.parse(stdout) as { version: number }[]).map((v) => v.version)).toEqual([1, 3]);
      expect(stderr).toMatch(/00000002\.json/);
      expect((await run(['diff', gappy, 'report', '1', '2'])).code).toBe(1);
    } finally {
      await fsp.rm(gappy, { recursive: true, force: true });
    }
  });
});

describe('waystation history, a version that does not read', () => {
  it('is named with the reason a read of it gives, and exits 1, not left out of the list in silence', async () => {
    const damaged = await makeTempDir('damaged');
    try {
      await writeNativeTask(damaged, [reportVersion(1), reportVersion(2), reportVersion(3)]);
      const file = path.join(damaged, 'report', 'versions', '00000002.json');
      // Cut short: the file is there, its version does not read.
      const text = await fsp.readFile(file, 'utf8');
      await fsp.writeFile(file, text.slice(0, text.length / 2));
      const { code, stdout, stderr } = await run(['history', damaged, 'report', '--json']);
      expect(code).toBe(1);
      expect((JSON.parse(stdout) as { version: number }[]).map((v) => v.version)).not.toContain(2);
      expect(stderr).toMatch(/00000002\.json/);
      expect(stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await fsp.rm(damaged, { recursive: true, force: true });
    }
  });
});

describe('waystation diff', () => {
  it('summarizes and lists the changes between two versions', async () => {
    const { code, stdout } = await run(['diff', mixed, 'report', '1', 'latest', '--json']);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ task_id: 'report', a: 1, b: 3 });
    const summary = ChangeSummary.parse(result.summary);
    expect(summary.status).toEqual({ from: 'running', to: 'done' });
    expect(summary.step_transitions.map((t) => [t.id, t.from, t.to])).toEqual([
      ['outline', 'running', 'done'],
      ['write', 'pending', 'done'],
    ]);
    expect(summary.artifacts_added.map((a) => a.path)).toEqual(['out/outline.md', 'out/report.md']);
    expect(summary.spend.tokens_in).toBe(200);
    expect(result.entries).toContainEqual({ op: 'replace', path: '/status', before: 'running', after: 'done' });
  });

  it('prints a readable summary, and with --exit-code exits 1 only when versions differ', async () => {
    const human = await run(['diff', mixed, 'report', '2', '3']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ {2}step write \(.+\): running → done$/m);
    expect(human.stdout).toContain('/status');
    expect((await run(['diff', mixed, 'report', '2', '3', '--exit-code'])).code).toBe(1);
    expect((await run(['diff', mixed, 'report', '3', '3', '--exit-code'])).code).toBe(0);
    expect((await run(['diff', mixed, 'report', '1', '7'])).code).toBe(2);
  });

  it('numbers the current step from 1, as the plan does, and says when it moved past the last step', async () => {
    // current_step is 0, then 1, then 2 (an index): the plan's steps 1 and 2, then past its end.
    expect((await run(['diff', mixed, 'report', '1', '2'])).stdout).toMatch(/^ {2}step {5}1 of 2 → 2 of 2$/m);
    expect((await run(['diff', mixed, 'report', '2', '3'])).stdout).toMatch(/^ {2}step {5}2 of 2 → end of the plan$/m);
    // --json keeps the checkpoint's own field, as the format defines it.
    expect(JSON.parse((await run(['diff', mixed, 'report', '1', '2', '--json'])).stdout).summary.current_step).toEqual({ from: 0, to: 1 });
  });
});

describe('waystation verify', () => {
  it('reports a task whose artifacts match as ok, exit 0', async () => {
    const { code, stdout } = await run(['verify', mixed, 'report', '--json']);
    expect(code).toBe(0);
    const report = VerifyReport.parse(JSON.parse(stdout));
    expect(report.artifacts.map((a) => [a.path, a.status])).toEqual([
      ['out/outline.md', 'ok'],
      ['out/report.md', 'ok'],
    ]);
  });

  it('reports drift with exit code 1', async () => {
    const { code, stdout } = await run(['verify', mixed, 'drifted', '--json']);
    expect(code).toBe(1);
    expect(VerifyReport.parse(JSON.parse(stdout))).toMatchObject({
      ok: false,
      drift: true,
      artifacts: [expect.objectContaining({ status: 'modified' })],
    });
    expect((await run(['verify', mixed, 'drifted'])).stdout).toMatch(/modified\s+out\/drifted\.md/);
  });
});

describe('usage errors', () => {
  it('maps unknown commands, unknown options and a missing command to exit code 2', async () => {
    expect((await run(['frobnicate'])).code).toBe(2);
    expect((await run(['ls', mixed, '--bogus'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
    expect((await run(['show', mixed])).code).toBe(2);
  });

  it('prints help with every command and exits 0', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const name of ['ls', 'show', 'history', 'diff', 'verify', 'Exit status']) expect(stdout).toContain(name);
  });

  it("gives each writing command the exit codes it can end with: a run's for the commands that run an agent", async () => {
    for (const command of ['run', 'resume', 'approve'])
      expect((await run([command, '--help'])).stdout).toContain('8  a person stopped the run');
    for (const command of ['stop', 'fork', 'rewind', 'edit', 'reject']) {
      const { stdout } = await run([command, '--help']);
      expect(stdout, command).toContain('0  written (stop: the run stopped');
      expect(stdout, command).not.toContain('the task is done');
    }
  });
});
