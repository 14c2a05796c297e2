import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openStore } from '../../../electron/store/directory-store.js';
import { CURRENT_SCHEMA_VERSION } from '../../../shared/checkpoint/schema.js';
import type { TaskDetail } from '../../../shared/api/contract.js';
import type { TaskSummary } from '../../../shared/checkpoint/task-summary.js';
import {
  ReadOnlyError,
  TaskReadError,
  type CheckpointStore,
  type ListedTask,
  type TaskEntry,
} from '../../../electron/store/store-types.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

const execFileAsync = promisify(execFile);

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/bad-checkpoints');
const root = path.join(corpus, 'root');

let before: Record<string, string>;
let store: CheckpointStore;
let listed: Map<string, ListedTask>;

beforeAll(async () => {
  before = await hashTree(corpus);
  store = openStore(root, { maxFileBytes: 64 * 1024 });
  listed = new Map((await store.listTasks()).map((t) => [t.task_id, t]));
});

afterAll(async () => {
  // Reading the corpus, listing it and failing to write into it changed no byte of it.
  expect(await hashTree(corpus)).toEqual(before);
});

const reasons = (t: ListedTask | TaskEntry | null | undefined) => (t?.problems ?? []).map((p) => p.reason);

describe('the bad-checkpoint corpus', () => {
  it.each([
    ['truncated', 'truncated'],
    ['empty-file', 'truncated'],
    ['invalid-json', 'invalid-json'],
    ['wrong-types', 'schema'],
    ['not-utf8', 'not-utf8'],
    ['too-large', 'too-large'],
    ['link-file', 'outside-root'],
    ['outside-link', 'outside-root'],
    ['cycle-a', 'unreadable'],
    ['cycle-b', 'unreadable'],
  ])('%s is listed with a %s problem and no checkpoint', (id, reason) => {
    const t = listed.get(id);
    expect(t).toBeDefined();
    expect(reasons(t)).toEqual([reason]);
    expect(t!.checkpoint).toBeNull();
    expect(t!.problems[0].severity).toBe('error');
  });

  it('names the field, what was expected and what was found for wrong types', () => {
    const message = listed.get('wrong-types')!.problems[0].message;
    expect(message).toContain('current_step: expected number, got string "two"');
    expect(message).toContain('plan[0].status: expected one of');
    expect(message).toContain('got string "finished"');
  });

  it('does not follow a symlink out of the root', () => {
    const t = listed.get('link-file')!;
    expect(t.problems[0].file).toBe('link-file/checkpoint.json');
    expect(listed.get('outside-link')!.checkpoint).toBeNull();
  });

  it('shows a future-schema task read-only, with a warning, and refuses to write over it', async () => {
    const t = listed.get('future-schema')!;
    expect(t.read_only).toBe(true);
    expect(reasons(t)).toEqual(['future-schema']);
    expect(t.problems[0].severity).toBe('warning');
    expect(t.checkpoint?.schema_version).toBe(99);
    expect((t.checkpoint as Record<string, unknown>).hologram).toEqual({ new_in_99: true });
    const { version: _v, ...cp } = t.checkpoint!;
    const err = await store
      .save('future-schema', { expectedVersion: 1, checkpoint: { ...cp, schema_version: CURRENT_SCHEMA_VERSION } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReadOnlyError);
    expect(String(err)).toMatch(/schema 99/);
  });

  it('migrates an older schema in memory', () => {
    const t = listed.get('migrated-v1')!;
    expect(t.problems).toEqual([]);
    expect(t.checkpoint?.schema_version).toBe(CURRENT_SCHEMA_VERSION);
    expect(t.checkpoint?.recovery.mode).toBe('auto');
    expect(t.checkpoint?.status).toBe('done');
  });

  it('uses the newest complete version when the hot snapshot is behind, without a problem', async () => {
    const t = await store.getTask('behind');
    expect(t?.checkpoint?.version).toBe(4);
    expect(t?.checkpoint?.phase).toBe('phase 4');
    expect(t?.problems).toEqual([]);
    expect(listed.get('behind')?.checkpoint?.version).toBe(4);
  });

  it('reports a version missing from the middle of the history, and still shows the task', async () => {
    const t = await store.getTask('missing-version');
    expect(reasons(t)).toEqual(['missing-version']);
    expect(t?.problems[0].file).toBe('missing-version/versions/00000003.json');
    expect(t?.checkpoint?.version).toBe(4);
    const err = await store.readVersion('missing-version', 4).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskReadError);
    expect((err as TaskReadError).problems[0].reason).toBe('missing-version');
    expect((await store.readVersion('missing-version', 2)).phase).toBe('phase 2');
    expect((await store.history('missing-version')).map((h) => h.version)).toEqual([1, 2]);
  });

  it('lists both article formats read-only with a legacy-format warning', () => {
    const a = listed.get('demo-task-001')!;
    expect([a.format, a.read_only, reasons(a)]).toEqual(['article-task-json', true, ['legacy-format']]);
    const b = listed.get('article-folder')!;
    expect([b.format, b.read_only, reasons(b)]).toEqual(['article-checkpoint-json', true, ['legacy-format']]);
    expect(reasons(listed.get('torn-article'))).toEqual(['truncated']);
  });

  it('refuses to save over a legacy task', async () => {
    await expect(
      store.save('demo-task-001', { expectedVersion: 1, checkpoint: listed.get('demo-task-001')!.checkpoint! }),
    ).rejects.toBeInstanceOf(ReadOnlyError);
  });

  it('keeps every other task browsable: each getTask answers without throwing', async () => {
    for (const id of listed.keys()) {
      const t = await store.getTask(id);
      expect(t?.task_id).toBe(id);
    }
  });

  it('reads the too-large file once the limit allows it', async () => {
    const roomy = openStore(root, { maxFileBytes: 1024 * 1024 });
    const t = await roomy.getTask('too-large');
    expect(t?.problems).toEqual([]);
    expect(t?.checkpoint?.goal.length).toBe(100 * 1024);
  });
});

describe('named pipes and special files', () => {
  // A reader that opened a pipe in blocking mode would wait for a writer forever, inside a synchronous call
  // no in-process timeout can interrupt: the readers run in a child process, which the timeout kills.
  const readers = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'special-file-readers.ts');
  const tsx = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/waystation-tsx.mjs');
  const ids = ['pipe-hot', 'pipe-version', 'pipe-events', 'pipe-lease', 'pipe-link', 'zero-link'];
  let dir: string;
  let before: Record<string, string>;
  let lines: Array<{
    reader: string;
    code?: number;
    out?: string;
    err?: string;
    list?: TaskSummary[];
    detail?: TaskDetail | { error: string };
  }>;

  beforeAll(async () => {
    dir = await tempRoot('waystation-fifo-');
    const s = openStore(dir);
    for (const id of [...ids, 'healthy']) {
      const first = (await s.create(makeCheckpoint(id))).checkpoint;
      await s.save(id, { expectedVersion: first.version, checkpoint: { ...withoutVersion(first), task_name: `${id}, renamed` } });
    }
    const fifo = async (rel: string) => {
      await fs.rm(path.join(dir, rel), { force: true });
      execFileSync('mkfifo', [path.join(dir, rel)]);
    };
    await fifo('pipe-hot/checkpoint.json');
    // With no checkpoint.json the newest version file is what must be read.
    await fs.rm(path.join(dir, 'pipe-version/checkpoint.json'));
    await fifo('pipe-version/versions/00000002.json');
    await fifo('pipe-events/events.jsonl');
    await fs.mkdir(path.join(dir, 'pipe-lease/lease'));
    await fifo('pipe-lease/lease/1.json');
    await fifo('pipe-link/pipe');
    await fs.rm(path.join(dir, 'pipe-link/checkpoint.json'));
    await fs.symlink('pipe', path.join(dir, 'pipe-link/checkpoint.json'));
    await fs.rm(path.join(dir, 'zero-link/checkpoint.json'));
    await fs.symlink('/dev/zero', path.join(dir, 'zero-link/checkpoint.json'));
    before = await hashTree(dir);
    const { stdout } = await execFileAsync(process.execPath, [tsx, readers, dir, ...ids], {
      timeout: 30_000,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    });
    lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as (typeof lines)[number]);
  }, 90_000);

  afterAll(async () => {
    expect(await hashTree(dir)).toEqual(before);
    await cleanup(dir);
  });

  it('every CLI reader returns, with a typed exit code and no stack trace', () => {
    const cli = lines.filter((l) => l.code !== undefined);
    expect(cli.map((l) => l.reader)).toEqual(['ls', ...ids.flatMap((id) => [`show ${id}`, `history ${id}`, `verify ${id}`])]);
    for (const l of cli) {
      expect([0, 1, 2]).toContain(l.code);
      expect(l.err).not.toMatch(/\n\s+at /);
    }
  });

  it('lists every task, naming the pipe as not a regular file', () => {
    const list = lines.find((l) => l.reader === 'listTasks')!.list!;
    const byId = new Map(list.map((t) => [t.task_id, t]));
    expect([...byId.keys()].sort()).toEqual([...ids, 'healthy'].sort());
    expect(byId.get('healthy')!.problems).toEqual([]);
    const pipe = (id: string, file: string) => byId.get(id)!.problems.find((p) => p.file === file);
    expect(pipe('pipe-hot', 'pipe-hot/checkpoint.json')).toMatchObject({
      reason: 'unreadable',
      message: expect.stringContaining('not a regular file'),
    });
    expect(pipe('pipe-version', 'pipe-version/versions/00000002.json')).toMatchObject({
      reason: 'unreadable',
      message: expect.stringContaining('not a regular file'),
    });
    expect(pipe('pipe-link', 'pipe-link/checkpoint.json')).toMatchObject({
      reason: 'unreadable',
      message: expect.stringContaining('not a regular file'),
    });
    expect(pipe('zero-link', 'zero-link/checkpoint.json')).toMatchObject({ reason: 'outside-root' });
    // The versions stand in for a hot snapshot that cannot be read.
    expect(byId.get('pipe-hot')!.version).toBe(2);
    expect(byId.get('pipe-version')!.version).toBe(1);
    expect(byId.get('pipe-events')!.version).toBe(2);
    // A lease entry that cannot be read holds nothing.
    expect(byId.get('pipe-lease')!.display_status).toBe('interrupted');
  });

  it('opens every task in the host, or refuses the one that links out of the root', () => {
    const opened = (id: string) => lines.find((l) => l.reader === `getTask ${id}`)!.detail!;
    for (const id of ids.filter((i) => i !== 'zero-link')) expect(opened(id)).toMatchObject({ summary: { task_id: id } });
    expect(opened('zero-link')).toEqual({ error: expect.stringContaining('outside the checkpoint directory') });
  });
});
