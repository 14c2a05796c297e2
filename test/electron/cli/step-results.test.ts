/**
 * Step results at the terminal: `show` previews each step's result in its
 * plan, `result` prints one whole. Tasks are written through the store, so
 * results sit in blobs as the runtime leaves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fsp from 'node:fs/promises';
import { openStore } from '../../../electron/store/directory-store.js';
import { displayWidth } from '../../../electron/cli/output.js';
import { RESULT_PREVIEW_WIDTH } from '../../../electron/cli/commands/show.js';
import { captureCli } from './capture-cli.js';
import { makeTempDir, reportVersion, writeNativeTask } from './cli-fixtures.js';

let dir: string;
const LONG = 'A long draft. '.repeat(20).trim();
const REPORT = '# Report\n\nAll good.\n';
const OUTLINE = { sections: ['intro', 'body'], words: 1200 };

beforeAll(async () => {
  dir = await makeTempDir('results');
  const store = openStore(dir);
  const v1 = reportVersion(1);
  const plan = [
    { id: 'analyse', name: '分析需求', status: 'done' as const, attempts: 1 },
    { id: 'outline', name: 'Outline 📝', status: 'done' as const, attempts: 1 },
    { id: 'draft', name: 'Draft', status: 'done' as const, attempts: 1 },
    { id: 'write', name: '编写代码', status: 'pending' as const, attempts: 0 },
  ];
  const { version: _v, ...first } = { ...v1, task_id: 'book', plan, total_steps: 4, current_step: 3 };
  await store.create(first, { results: { analyse: '需求：三个章节', outline: OUTLINE, draft: LONG } });
  const latest = (await store.getTask('book'))!.checkpoint!;
  await store.save('book', {
    expectedVersion: 1,
    checkpoint: { ...latest, plan: latest.plan.map((s) => (s.id === 'write' ? { ...s, status: 'done' } : s)), current_step: 4 },
    results: { write: REPORT },
  });
  // A result whose blob is gone: the reference names a loose blob that was never written.
  await writeNativeTask(dir, [
    {
      ...reportVersion(3),
      task_id: 'lost',
      artifacts: [],
      plan: [{ id: 'outline', name: 'Outline', status: 'done', attempts: 1, result_ref: `sha256:${'ab'.repeat(32)}` }],
      total_steps: 1,
      current_step: 1,
    },
  ]);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('waystation show', () => {
  it('previews each step result: text as text, objects as compact JSON, long ones cut to fit', async () => {
    const { code, out } = await captureCli('show', dir, 'book');
    expect(code).toBe(0);
    const row = (id: string) => out.split('\n').find((l) => new RegExp(`^\\s+\\S?\\s*\\d+\\s+${id}\\s`).test(l))!;
    expect(row('analyse')).toMatch(/需求：三个章节$/);
    expect(row('outline')).toMatch(/\{"sections":\["intro","body"\],"words":1200\}$/);
    expect(row('write')).toMatch(/# Report All good\.$/);
    const draft = row('draft').match(/(A long draft\..*)$/)![1];
    expect(draft.endsWith('…')).toBe(true);
    expect(displayWidth(draft)).toBe(RESULT_PREVIEW_WIDTH);
    expect(out).toContain('waystation result');
  });

  it('aligns the plan by display width, with Chinese names and emoji', async () => {
    const { out } = await captureCli('show', dir, 'book');
    const rows = out.split('\n').filter((l) => /^\s+\S?\s*\d+\s+(analyse|outline|draft|write)\s/.test(l));
    expect(rows).toHaveLength(4);
    // The STATUS column starts at the same terminal column on every row.
    const statusColumn = rows.map((l) => displayWidth(l.slice(0, l.indexOf('done'))));
    expect(new Set(statusColumn).size).toBe(1);
  });

  it('shows the results as of an earlier version', async () => {
    const { out } = await captureCli('show', dir, 'book', '--version', '1');
    const write = out.split('\n').find((l) => /\swrite\s/.test(l))!;
    expect(write).toMatch(/pending\s*$/);
  });

  it('marks a result that cannot be read and exits 1', async () => {
    const { code, out } = await captureCli('show', dir, 'lost');
    expect(code).toBe(1);
    expect(out).toContain('(unreadable result)');
    expect(out).toMatch(/result of outline: /);
  });
});

describe('waystation result', () => {
  it('prints a text result as it is, and quoted with --json', async () => {
    expect(await captureCli('result', dir, 'book', 'draft')).toEqual({ code: 0, out: `${LONG}\n`, err: '' });
    expect(await captureCli('result', dir, 'book', 'write')).toEqual({ code: 0, out: REPORT, err: '' });
    const json = await captureCli('result', dir, 'book', 'analyse', '--json');
    expect(JSON.parse(json.out)).toBe('需求：三个章节');
  });

  it('prints any other result as JSON', async () => {
    const { code, out } = await captureCli('result', dir, 'book', 'outline');
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual(OUTLINE);
  });

  it('says when the step has no result at that version, and exits 1', async () => {
    const { code, out, err } = await captureCli('result', dir, 'book', 'write', '--version', '1');
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(/step write of task book has no result at version 1 \(it is pending\)/);
  });

  it('refuses an unknown step, naming the steps there are, and exits 2', async () => {
    const { code, err } = await captureCli('result', dir, 'book', 'nope');
    expect(code).toBe(2);
    expect(err).toMatch(/task book has no step "nope" at version 2: its steps are analyse, outline, draft, write/);
  });

  it('refuses a version that does not exist, and an unknown task, with exit 2', async () => {
    const beyond = await captureCli('result', dir, 'book', 'draft', '--version', '9');
    expect(beyond.code).toBe(2);
    expect(beyond.err).toMatch(/version 9 does not exist: the task has versions 1 to 2/);
    const unknown = await captureCli('result', dir, 'nobody', 'draft');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/no task "nobody"/);
  });

  it('says when a result cannot be read, and exits 1', async () => {
    const { code, out, err } = await captureCli('result', dir, 'lost', 'outline');
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(/the result of step outline of task lost cannot be read: /);
  });
});
