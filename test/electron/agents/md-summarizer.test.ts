import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { verifyTask } from '../../../electron/verify/verify-task.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { startTask, resumeTask } from '../../../electron/runtime/task-operations.js';
import { forkTask } from '../../../electron/runtime/fork-task.js';
import { rewindTask } from '../../../electron/runtime/rewind-task.js';
import { hashTree } from '../../support/hash-tree.js';
import { mdSummarizer, outputDir, recordedPath, SUMMARY_INSTRUCTIONS, summaryRequest } from '../../../electron/agents/md-summarizer.js';
import { checkpointDemo } from '../../../electron/agents/checkpoint-demo.js';
import { builtInAgent } from '../../../electron/agents/registry.js';
import { OfflineProvider, offlineReply } from '../../../electron/llm/offline-provider.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';

let root: string;
let input: string;
let service: FakePublishService;

beforeAll(async () => {
  service = await startFakePublishService();
});
afterAll(async () => {
  await service.close();
});
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-md-'));
  input = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-md-in-'));
  for (const [name, body] of Object.entries({
    'a.md': '# Alpha\n\nAlpha comes first. It sets the scene.\n',
    'b.md': '# Beta\n\n## Details\nBeta follows.\n',
    'notes/c.md': '# Gamma\n\nGamma lives in a folder.\n',
    'd.md': '# Delta\n\nDelta is last.\n',
    'ignored.txt': 'not markdown',
  })) {
    await fs.mkdir(path.dirname(path.join(input, name)), { recursive: true });
    await fs.writeFile(path.join(input, name), body);
  }
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(input, { recursive: true, force: true });
});

describe('the built-in agents', () => {
  it('are registered by name', () => {
    expect(builtInAgent('md-summarizer')).toBe(mdSummarizer);
    expect(builtInAgent('checkpoint-demo')).toBe(checkpointDemo);
    expect(builtInAgent('nope')).toBeNull();
  });
});

describe('md-summarizer', () => {
  it('plans one step per Markdown file, writes summaries as artifacts and publishes the index once', async () => {
    const store = openStore(root);
    const out = await startTask({ store, root, llm: new OfflineProvider(0) }, mdSummarizer, {
      taskId: 'sum',
      options: { input, 'publish-url': service.url },
    });
    expect(out.status).toBe('done');
    const cp = (await store.getTask('sum'))!.checkpoint!;
    expect(cp.plan.map((s) => s.id)).toEqual([
      'summarize:a.md',
      'summarize:b.md',
      'summarize:d.md',
      'summarize:notes/c.md',
      'publish-index',
    ]);
    expect(cp.artifacts.map((a) => a.path)).toEqual([
      'outputs/sum/a.summary.md',
      'outputs/sum/b.summary.md',
      'outputs/sum/d.summary.md',
      'outputs/sum/notes/c.summary.md',
      'outputs/sum/index.json',
    ]);
    const summary = await fs.readFile(path.join(root, 'outputs/sum/b.summary.md'), 'utf8');
    // The file's own title and sentence, not the prompt around it.
    expect(summary).toBe('# Summary of b.md\n\nBeta\n\nBeta follows.\n\nSections: Details.\n');
    expect(service.applied.get('sum:publish-index')).toBe(1);
    const published = service.records.get('sum:publish-index')!.body as { files: { file: string }[] };
    expect(published.files.map((f) => f.file)).toEqual(['a.md', 'b.md', 'd.md', 'notes/c.md']);
    expect((await verifyTask(root, cp)).ok).toBe(true);
  });

  it('when the publish reply is lost, the agent-level probe settles it before the agent runs again', async () => {
    const store = openStore(root);
    const env = { store, root, llm: new OfflineProvider(0) };
    service.failNext('drop-after-apply');
    expect((await startTask(env, mdSummarizer, { taskId: 'lost', options: { input, 'publish-url': service.url } })).status).toBe('failed');
    const resumed = await resumeTask(env, mdSummarizer, 'lost');
    expect(resumed.status).toBe('done');
    const cp = (await store.getTask('lost'))!.checkpoint!;
    expect(cp.side_effects[0]).toMatchObject({ status: 'done', reconciliation: 'probed-done' });
    expect(service.applied.get('lost:publish-index')).toBe(1);
    expect(service.duplicates.has('lost:publish-index')).toBe(false);
  });

  it('killed midway and resumed, it skips the files already done and publishes exactly once', async () => {
    const runner = new Runner({ root, env: { ...process.env, OPENAI_API_KEY: '', WAYSTATION_OFFLINE_LATENCY_MS: '150' } });
    const { child, done } = runner.spawnWorker({
      kind: 'start',
      root,
      taskId: 'killed',
      agentRef: { name: 'md-summarizer' },
      options: { input, 'publish-url': service.url },
    });
    runner.onEvent((e) => {
      if (e.type === 'line' && e.line === 'summarize:b.md: done') child.kill('SIGKILL');
    });
    expect((await done).crashed).toBe(true);
    const store = openStore(root);
    const before = (await store.getTask('killed'))!.checkpoint!;
    const doneBefore = before.plan.filter((s) => s.status === 'done').map((s) => s.id);
    expect(doneBefore).toEqual(expect.arrayContaining(['summarize:a.md', 'summarize:b.md']));
    expect(doneBefore).not.toContain('publish-index');

    const resumed = await runner.resume('killed');
    expect(resumed.status).toBe('done');
    const cp = (await store.getTask('killed'))!.checkpoint!;
    for (const id of doneBefore) expect(cp.plan.find((s) => s.id === id)!.attempts).toBe(1);
    const starts = (await store.readEvents('killed')).filter((e) => e.type === 'step-start').map((e) => e.step_id);
    for (const id of doneBefore) expect(starts.filter((s) => s === id)).toHaveLength(1);
    expect(service.applied.get('killed:publish-index')).toBe(1);
    expect(service.duplicates.has('killed:publish-index')).toBe(false);
    // The summary equals what an uninterrupted run writes: the offline model is deterministic.
    const expected = offlineReply([
      { role: 'system', content: SUMMARY_INSTRUCTIONS },
      { role: 'user', content: summaryRequest('d.md', await fs.readFile(path.join(input, 'd.md'), 'utf8')) },
    ]);
    expect(await fs.readFile(path.join(root, 'outputs/killed/d.summary.md'), 'utf8')).toBe(`# Summary of d.md\n\n${expected}\n`);
  });

  it('writes its own output folder, found under the directory as it is now: a copy resumed elsewhere writes into itself', async () => {
    const env = { store: openStore(root), root, llm: new OfflineProvider(0) };
    service.failNext('500');
    expect((await startTask(env, mdSummarizer, { taskId: 'moved', options: { input, 'publish-url': service.url } })).status).toBe('failed');
    const cp = (await env.store.getTask('moved'))!.checkpoint!;
    expect(cp.agent?.options).not.toHaveProperty('output');
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-md-copy-'));
    try {
      await fs.cp(root, copy, { recursive: true });
      // The original's output is gone, so nothing written there can pass unnoticed.
      await fs.rm(path.join(root, 'outputs'), { recursive: true });
      const resumed = await resumeTask({ store: openStore(copy), root: copy, llm: new OfflineProvider(0) }, mdSummarizer, 'moved');
      expect(resumed.status).toBe('done');
      const index = JSON.parse(await fs.readFile(path.join(copy, 'outputs/moved/index.json'), 'utf8')) as { files: unknown[] };
      expect(index.files).toHaveLength(4);
      await expect(fs.access(path.join(root, 'outputs'))).rejects.toThrow();
      const done = (await openStore(copy).getTask('moved'))!.checkpoint!;
      expect((await verifyTask(copy, done)).ok).toBe(true);
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  });

  it('in a fork rerun from a step writes its own folder, and the task it was forked from keeps its files', async () => {
    const env = { store: openStore(root), root, llm: new OfflineProvider(0) };
    expect((await startTask(env, mdSummarizer, { taskId: 'orig', options: { input } })).status).toBe('done');
    const parentFiles = await hashTree(path.join(root, 'outputs', 'orig'));
    const forked = await forkTask(env, 'orig', (await env.store.getTask('orig'))!.checkpoint!.version, { taskId: 'branch' });
    expect(forked.status).toBe('done');
    await rewindTask(env, 'branch', 'summarize:b.md');
    expect((await resumeTask(env, mdSummarizer, 'branch')).status).toBe('done');

    expect(await hashTree(path.join(root, 'outputs', 'orig'))).toEqual(parentFiles);
    expect((await verifyTask(root, (await env.store.getTask('orig'))!.checkpoint!)).ok).toBe(true);
    const index = JSON.parse(await fs.readFile(path.join(root, 'outputs/branch/index.json'), 'utf8')) as {
      task_id: string;
      files: unknown[];
    };
    expect(index).toMatchObject({ task_id: 'branch' });
    expect(index.files).toHaveLength(4);
    await expect(fs.access(path.join(root, 'outputs/branch/b.summary.md'))).resolves.toBeUndefined();
  });

  it("in a fork of a task that recorded its default output folder, writes its own and leaves that task's files alone", async () => {
    // How tasks were created before the default went unrecorded: `outputs/<task>` relative to the directory, and
    // absolute before outputs were recorded relative.
    const recordingDefault = (absolute: boolean) =>
      ({
        ...mdSummarizer,
        resolveOptions: async (o: Record<string, unknown>, planEnv: Parameters<NonNullable<typeof mdSummarizer.resolveOptions>>[1]) => ({
          ...(await mdSummarizer.resolveOptions!(o as never, planEnv)),
          output: absolute ? path.join(planEnv.rootDir, 'outputs', planEnv.taskId) : `outputs/${planEnv.taskId}`,
        }),
      }) as typeof mdSummarizer;
    const env = { store: openStore(root), root, llm: new OfflineProvider(0) };
    const latest = async (id: string) => (await env.store.getTask(id))!.checkpoint!;
    for (const [old, absolute] of [
      ['rel', false],
      ['abs', true],
    ] as const) {
      expect((await startTask(env, recordingDefault(absolute), { taskId: old, options: { input } })).status).toBe('done');
      const recorded = absolute ? path.join(root, 'outputs', old) : `outputs/${old}`;
      expect((await latest(old)).agent?.options.output).toBe(recorded);
      const oldFiles = await hashTree(path.join(root, 'outputs', old));

      // A fork rerun from a step, and a fork of that fork: each carries the first task's folder in its options.
      const fork = `${old}-fork`;
      const forkOfFork = `${old}-fork-2`;
      await forkTask(env, old, (await latest(old)).version, { taskId: fork });
      await rewindTask(env, fork, 'summarize:b.md');
      expect((await resumeTask(env, mdSummarizer, fork)).status).toBe('done');
      await forkTask(env, fork, (await latest(fork)).version, { taskId: forkOfFork });
      expect((await latest(forkOfFork)).agent?.options.output).toBe(recorded);
      await rewindTask(env, forkOfFork, 'publish-index');
      expect((await resumeTask(env, mdSummarizer, forkOfFork)).status).toBe('done');

      expect(await hashTree(path.join(root, 'outputs', old))).toEqual(oldFiles);
      expect((await verifyTask(root, await latest(old))).ok).toBe(true);
      for (const id of [fork, forkOfFork]) {
        const index = JSON.parse(await fs.readFile(path.join(root, 'outputs', id, 'index.json'), 'utf8')) as { task_id: string };
        expect(index.task_id).toBe(id);
      }
      expect((await latest(fork)).artifacts.map((a) => a.path)).toEqual(
        expect.arrayContaining([`outputs/${fork}/b.summary.md`, `outputs/${fork}/index.json`]),
      );
    }
  });

  it('resumes a task that recorded an absolute output folder, writing where it always did', async () => {
    // How tasks were created before the output folder was recorded relative.
    const absoluteOutput = {
      ...mdSummarizer,
      resolveOptions: async (o: Record<string, unknown>, planEnv: Parameters<NonNullable<typeof mdSummarizer.resolveOptions>>[1]) => ({
        ...(await mdSummarizer.resolveOptions!(o as never, planEnv)),
        output: path.join(planEnv.rootDir, 'outputs', planEnv.taskId),
      }),
    } as typeof mdSummarizer;
    const env = { store: openStore(root), root, llm: new OfflineProvider(0) };
    service.failNext('500');
    expect((await startTask(env, absoluteOutput, { taskId: 'old', options: { input, 'publish-url': service.url } })).status).toBe('failed');
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-md-copy-'));
    try {
      await fs.cp(root, copy, { recursive: true });
      await fs.rm(path.join(root, 'outputs/old/index.json'));
      const resumed = await resumeTask({ store: openStore(copy), root: copy, llm: new OfflineProvider(0) }, mdSummarizer, 'old');
      expect(resumed.status).toBe('done');
      expect(JSON.parse(await fs.readFile(path.join(root, 'outputs/old/index.json'), 'utf8'))).toMatchObject({ task_id: 'old' });
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  });

  it('takes an output folder outputs/<task> for the default of the task a fork came from, and no other folder', () => {
    const dir = path.join(os.tmpdir(), 'dir');
    expect(outputDir(undefined, dir, 'f', true)).toBe(path.join(dir, 'outputs', 'f'));
    expect(outputDir('outputs/p', dir, 'f', true)).toBe(path.join(dir, 'outputs', 'f'));
    expect(outputDir(path.join(dir, 'outputs', 'p'), dir, 'f', true)).toBe(path.join(dir, 'outputs', 'f'));
    // A task of its own keeps the folder it holds; so does a fork whose folder is not a task's default.
    expect(outputDir('outputs/p', dir, 't', false)).toBe(path.join(dir, 'outputs', 'p'));
    expect(outputDir('summaries', dir, 'f', true)).toBe(path.join(dir, 'summaries'));
    expect(outputDir('outputs/p/deeper', dir, 'f', true)).toBe(path.join(dir, 'outputs', 'p', 'deeper'));
    expect(outputDir(path.join(os.tmpdir(), 'elsewhere', 'outputs', 'p'), dir, 'f', true)).toBe(
      path.join(os.tmpdir(), 'elsewhere', 'outputs', 'p'),
    );
  });

  it('names a path inside the directory relatively, and one outside it absolutely', () => {
    const dir = path.join(os.tmpdir(), 'dir');
    expect(recordedPath(path.join(dir, 'outputs', 't'), dir)).toBe('outputs/t');
    expect(recordedPath(dir, dir)).toBe('.');
    expect(recordedPath(path.join(dir, '..', 'elsewhere'), dir)).toBe(path.join(os.tmpdir(), 'elsewhere'));
    // A folder whose name starts with two dots is still inside.
    expect(recordedPath(path.join(dir, '..dots', 'x'), dir)).toBe('..dots/x');
  });
});
