import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { FIRST_ARTICLE_TASK_JSON, SECOND_ARTICLE_CHECKPOINT_JSON } from '../../../shared/checkpoint/article-samples.js';
import { CURRENT_SCHEMA_VERSION } from '../../../shared/checkpoint/schema.js';
import { ConflictError, ReadOnlyError, type CheckpointStore } from '../../../electron/store/store-types.js';
import { cleanup, hashTree, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';

/** The first article's task with a step result that is not text, which the import keeps as a JSON blob. */
const firstArticle = { ...FIRST_ARTICLE_TASK_JSON, results: { ...FIRST_ARTICLE_TASK_JSON.results, 编写代码: { code: 'def f(): pass' } } };
const secondArticle = { ...SECOND_ARTICLE_CHECKPOINT_JSON, task_id: 'agent-demo' };

let root: string;
let store: CheckpointStore;
beforeEach(async () => {
  root = await tempRoot();
  store = openStore(root);
});
afterEach(async () => {
  await cleanup(root);
});

describe('legacy tasks', () => {
  it('reads the first article format with its history, read-only', async () => {
    await fs.writeFile(path.join(root, 'demo-task-001.json'), JSON.stringify(firstArticle));
    const t = await store.getTask('demo-task-001');
    expect([t?.format, t?.read_only, t?.problems.map((p) => p.reason)]).toEqual(['article-task-json', true, ['legacy-format']]);
    // Says what resuming it does, and which agent recognises it.
    expect(t?.problems[0].message).toContain('imports it as a Waystation task in demo-task-001/');
    expect(t?.problems[0].message).toContain("checkpoint-demo's");
    expect(await store.readHistory('demo-task-001')).toEqual(firstArticle.history);
    expect((await store.history('demo-task-001')).map((h) => h.version)).toEqual([1]);
    expect((await store.readVersion('demo-task-001', 1)).plan[0].result).toBe(firstArticle.results.分析需求);
  });

  it('imports a root <id>.json into folder <id>/ as version 1, results in blobs, original untouched', async () => {
    await fs.writeFile(path.join(root, 'demo-task-001.json'), JSON.stringify(firstArticle));
    const before = await hashTree(root);
    const res = await store.importTask('demo-task-001');
    expect(res.checkpoint.version).toBe(1);
    expect(res.checkpoint.task_id).toBe('demo-task-001');
    expect(res.checkpoint.source).toMatchObject({
      kind: 'import',
      imported_from: { path: 'demo-task-001.json', format: 'article-task-json' },
    });
    expect(res.checkpoint.plan[0].result).toBeUndefined();
    expect(await store.readBlob('demo-task-001', res.checkpoint.plan[1].result_ref!)).toEqual({ code: 'def f(): pass' });
    expect(await store.readHistory('demo-task-001')).toEqual(firstArticle.history);
    expect((await hashTree(root))['demo-task-001.json']).toBe(before['demo-task-001.json']);
    // The listing shows the native task only, and it can be saved.
    const tasks = await store.listTasks();
    expect(tasks.map((t) => [t.task_id, t.format])).toEqual([['demo-task-001', 'waystation']]);
    const next = await store.save('demo-task-001', {
      expectedVersion: 1,
      checkpoint: { ...withoutVersion(res.checkpoint), status: 'running', source: { kind: 'runtime' } },
    });
    expect(next.checkpoint.version).toBe(2);
    await expect(store.importTask('demo-task-001')).rejects.toThrow(/already a Waystation task/);
  });

  it('imports a legacy folder F/ into F-imported/ and hides F from the listing', async () => {
    await fs.mkdir(path.join(root, 'agent-demo'));
    await fs.writeFile(path.join(root, 'agent-demo', 'checkpoint.json'), JSON.stringify(secondArticle));
    const [listed] = await store.listTasks();
    expect([listed.task_id, listed.format]).toEqual(['agent-demo', 'article-checkpoint-json']);
    // No built-in agent resumes the second article's format: the warning does not promise an import a resume refuses.
    expect(listed.problems[0].message).toContain('no built-in agent resumes it');
    const before = await hashTree(path.join(root, 'agent-demo'));
    const res = await store.importTask('agent-demo');
    expect(res.checkpoint.task_id).toBe('agent-demo-imported');
    expect(res.checkpoint.side_effects[0].id).toBe('effect:publish-agent-checkpoint-2026-05-08');
    expect(await hashTree(path.join(root, 'agent-demo'))).toEqual(before);
    expect((await store.listTasks()).map((t) => [t.task_id, t.format])).toEqual([['agent-demo-imported', 'waystation']]);
    await expect(store.importTask('agent-demo')).rejects.toBeInstanceOf(ConflictError);
  });

  it('imports a root checkpoint.json into a folder named by its task_id', async () => {
    await fs.writeFile(path.join(root, 'checkpoint.json'), JSON.stringify(secondArticle));
    const listed = await store.listTasks();
    expect(listed.map((t) => [t.task_id, t.location, t.format])).toEqual([['agent-demo', 'checkpoint.json', 'article-checkpoint-json']]);
    const res = await store.importTask('agent-demo');
    expect(res.checkpoint.task_id).toBe('agent-demo');
    expect((await store.listTasks()).map((t) => [t.task_id, t.location, t.format])).toEqual([['agent-demo', 'agent-demo', 'waystation']]);
    expect(JSON.parse(await fs.readFile(path.join(root, 'checkpoint.json'), 'utf8'))).toEqual(secondArticle);
  });

  it('refuses to save over a legacy file', async () => {
    await fs.writeFile(path.join(root, 'checkpoint.json'), JSON.stringify(secondArticle));
    await expect(store.save('agent-demo', { expectedVersion: 3, checkpoint: makeCheckpoint('agent-demo') })).rejects.toBeInstanceOf(
      ReadOnlyError,
    );
    expect(await fs.readdir(root)).toEqual(['checkpoint.json']);
  });
});

describe('schema versions', () => {
  it('refuses to save over a task whose newest version has a future schema, writing nothing', async () => {
    const cp = (await store.create(makeCheckpoint('f'))).checkpoint;
    const future = { ...JSON.parse(JSON.stringify(cp)), version: 2, schema_version: CURRENT_SCHEMA_VERSION + 1, new_field: 1 };
    await fs.writeFile(
      path.join(root, 'f', 'versions', '00000002.json'),
      JSON.stringify({ format: 'waystation-version', version: 2, kind: 'full', checkpoint: future }),
    );
    await fs.writeFile(path.join(root, 'f', 'checkpoint.json'), JSON.stringify(future));
    const before = await hashTree(root);
    const fresh = openStore(root);
    const t = await fresh.getTask('f');
    expect([t?.read_only, t?.problems.map((p) => p.reason)]).toEqual([true, ['future-schema']]);
    await expect(fresh.save('f', { expectedVersion: 2, checkpoint: withoutVersion(cp) })).rejects.toBeInstanceOf(ReadOnlyError);
    expect(await hashTree(root)).toEqual(before);
  });

  it('saves after an older-schema version: the new version is written in the current schema', async () => {
    const cp = (await store.create(makeCheckpoint('old'))).checkpoint;
    const { recovery: _r, status: _s, ...v1 } = JSON.parse(JSON.stringify(cp));
    const legacy = { ...v1, schema_version: 1, mode: 'auto' };
    await fs.writeFile(
      path.join(root, 'old', 'versions', '00000001.json'),
      JSON.stringify({ format: 'waystation-version', version: 1, kind: 'full', checkpoint: legacy }),
    );
    await fs.writeFile(path.join(root, 'old', 'checkpoint.json'), JSON.stringify(legacy));
    const fresh = openStore(root);
    const migrated = (await fresh.getTask('old'))!.checkpoint!;
    expect(migrated.recovery.mode).toBe('auto');
    const res = await fresh.save('old', { expectedVersion: 1, checkpoint: { ...withoutVersion(migrated), phase: 'after' } });
    expect((await openStore(root).readVersion('old', 2)).phase).toBe('after');
    expect((await openStore(root).readVersion('old', 1)).schema_version).toBe(CURRENT_SCHEMA_VERSION);
    expect(res.checkpoint.schema_version).toBe(CURRENT_SCHEMA_VERSION);
  });
});
