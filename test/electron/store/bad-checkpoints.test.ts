import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../../electron/store/directory-store.js';
import { CURRENT_SCHEMA_VERSION } from '../../../shared/checkpoint/schema.js';
import { ReadOnlyError, TaskReadError, type CheckpointStore, type ListedTask, type TaskEntry } from '../../../electron/store/store-types.js';
import { hashTree } from './store-test-helpers.js';

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
    const err = await store.save('future-schema', { expectedVersion: 1, checkpoint: { ...cp, schema_version: CURRENT_SCHEMA_VERSION } }).catch((e: unknown) => e);
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
    await expect(store.save('demo-task-001', { expectedVersion: 1, checkpoint: listed.get('demo-task-001')!.checkpoint! })).rejects.toBeInstanceOf(ReadOnlyError);
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
