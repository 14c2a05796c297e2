/**
 * Going back in a task's history: fork, rewind (rerun from a step) and edits
 * of done steps, with the ledger rule on top: an effect the ledger records as
 * done is never repeated unless a person chose it, effect by effect.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import { verifyTask } from '../../../electron/verify/verify-task.js';
import { editStepResult, OperationError, resumeTask, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { forkTask } from '../../../electron/runtime/fork-task.js';
import { planRewind, rewindTask } from '../../../electron/runtime/rewind-task.js';
import { acquireLease } from '../../../electron/store/file-lease.js';
import { mdSummarizer } from '../../../electron/agents/md-summarizer.js';
import { checkpointDemo } from '../../../electron/agents/checkpoint-demo.js';
import { slowAgent } from '../../fakes/slow-agent.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { captureCli } from '../cli/capture-cli.js';
import { hashTree } from '../../support/hash-tree.js';
import { withoutVersion } from '../store/store-test-helpers.js';

let root: string;
let input: string;
let service: FakePublishService;
let store: CheckpointStore;
let env: OperationEnv;

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

beforeEach(async () => {
  // A service of its own per test: it remembers every key it applied.
  service = await startFakePublishService();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-tt-'));
  input = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-tt-in-'));
  await fs.writeFile(path.join(input, 'a.md'), '# Alpha\n\nAlpha comes first. It sets the scene.\n');
  await fs.writeFile(path.join(input, 'b.md'), '# Beta\n\nBeta follows, with more to say.\n');
  store = openStore(root);
  env = { store, root, llm: new OfflineProvider(0), actor: 'ada' };
});
afterEach(async () => {
  await service.close();
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(input, { recursive: true, force: true });
});

async function summarized(taskId: string) {
  const out = await startTask(env, mdSummarizer, { taskId, options: { input, 'publish-url': service.url } });
  expect(out.status).toBe('done');
  expect(total(service.applied)).toBe(1);
  return (await store.getTask(taskId))!.checkpoint!;
}

describe('rewind (rerun from a step)', () => {
  it('keeps a done effect by default: the rerun publishes nothing more, and the earlier results stay in history', async () => {
    const done = await summarized('sum');
    const plan = planRewind(done, 'summarize:a.md');
    expect(plan.rerun.map((s) => s.id)).toEqual(['summarize:a.md', 'summarize:b.md', 'publish-index']);
    expect(plan.artifacts).toEqual(['outputs/sum/a.summary.md', 'outputs/sum/b.summary.md', 'outputs/sum/index.json']);
    expect(plan.effects).toEqual([expect.objectContaining({ type: 'http-publish', idempotency_key: 'sum:publish-index', choice: 'keep' })]);

    const rewound = await rewindTask(env, 'sum', 'summarize:a.md', { reason: 'try again' });
    expect(rewound.status).toBe('waiting_human');
    const after = await store.readVersion('sum', rewound.version);
    expect(after.source).toMatchObject({ kind: 'rewind', actor: 'ada', rewind: { step_id: 'summarize:a.md', redo: [] } });
    expect(after.plan.map((s) => s.status)).toEqual(['pending', 'pending', 'pending']);
    expect(after.plan.every((s) => s.reruns === 1)).toBe(true);
    // The version before still holds the results: history is never rewritten.
    const before = await store.readVersion('sum', done.version);
    expect(before.plan.every((s) => s.status === 'done' && s.result_ref)).toBe(true);

    const resumed = await resumeTask(env, mdSummarizer, 'sum');
    expect(resumed.status).toBe('done');
    expect(total(service.applied)).toBe(1);
    expect(total(service.duplicates)).toBe(0);
    const final = (await store.getTask('sum'))!.checkpoint!;
    expect(final.side_effects).toHaveLength(1);
    expect((await verifyTask(root, final)).ok).toBe(true);
  });

  it('leaves a done task waiting for a person, in the phase its first rerun step ran in, and the list says so', async () => {
    expect((await summarized('sum')).phase).toBe('done');
    const rewound = await rewindTask(env, 'sum', 'publish-index');
    expect(await store.readVersion('sum', rewound.version)).toMatchObject({
      status: 'waiting_human',
      phase: 'publish',
      resume_hint: 'rewound to publish-index by ada: resume reruns 1 step(s): `waystation resume <DIR> sum`',
    });
    const ls = await captureCli('ls', root, '--json');
    expect(JSON.parse(ls.out)).toEqual([expect.objectContaining({ task_id: 'sum', display_status: 'waiting_human', phase: 'publish' })]);

    expect((await resumeTask(env, mdSummarizer, 'sum')).status).toBe('done');
    const again = await rewindTask(env, 'sum', 'summarize:b.md');
    expect(await store.readVersion('sum', again.version)).toMatchObject({ status: 'waiting_human', phase: 'summarize' });
  });

  it('finds that phase by what the versions hold when every save shares one millisecond, as a fast agent does', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-01T00:00:00.000Z') });
    try {
      expect((await summarized('sum')).run.updated_at).toBe('2026-01-01T00:00:00.000Z');
      const rewound = await rewindTask(env, 'sum', 'publish-index');
      expect(await store.readVersion('sum', rewound.version)).toMatchObject({ status: 'waiting_human', phase: 'publish' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('takes a task whose agent names no phase back to start', async () => {
    process.env.SKIP_FAILURE = '1';
    try {
      expect((await startTask(env, checkpointDemo, { taskId: 'demo' })).status).toBe('done');
      const rewound = await rewindTask(env, 'demo', 'check-errors');
      expect(await store.readVersion('demo', rewound.version)).toMatchObject({ status: 'waiting_human', phase: 'start' });
      expect((await resumeTask(env, checkpointDemo, 'demo')).status).toBe('done');
      expect((await store.getTask('demo'))!.checkpoint!.phase).toBe('done');
    } finally {
      delete process.env.SKIP_FAILURE;
    }
  });

  it('performs an effect again, under a new key, only when a person chose redo for it', async () => {
    const done = await summarized('sum');
    const publish = done.side_effects[0];
    const rewound = await rewindTask(env, 'sum', 'publish-index', { redo: [publish.id] });
    const after = await store.readVersion('sum', rewound.version);
    expect(after.side_effects).toEqual([
      expect.objectContaining({ id: publish.id, status: 'done', idempotency_key: 'sum:publish-index', superseded_by: 'effect-2' }),
      expect.objectContaining({
        id: 'effect-2',
        status: 'not_started',
        idempotency_key: 'sum:publish-index-redo2',
        asked_key: 'sum:publish-index',
      }),
    ]);
    expect(after.plan.slice(0, 2).map((s) => s.status)).toEqual(['done', 'done']);

    expect((await resumeTask(env, mdSummarizer, 'sum')).status).toBe('done');
    expect(total(service.applied)).toBe(2);
    expect(service.applied.get('sum:publish-index')).toBe(1);
    expect(service.applied.get('sum:publish-index-redo2')).toBe(1);
    const final = (await store.getTask('sum'))!.checkpoint!;
    expect(final.side_effects.find((e) => e.id === 'effect-2')).toMatchObject({ status: 'done' });

    // Resuming or rewinding again keeps the repeat: it is done under its own key.
    await rewindTask(env, 'sum', 'publish-index');
    expect((await resumeTask(env, mdSummarizer, 'sum')).status).toBe('done');
    expect(total(service.applied)).toBe(2);
  });

  it('shows the redo in a confirm-mode resume plan, which waits for approval like any other', async () => {
    const out = await startTask(env, mdSummarizer, { taskId: 'c', mode: 'confirm', options: { input, 'publish-url': service.url } });
    expect(out.status).toBe('done');
    const cp = (await store.getTask('c'))!.checkpoint!;
    await rewindTask(env, 'c', 'publish-index', { redo: [cp.side_effects[0].id] });
    const waiting = await resumeTask(env, mdSummarizer, 'c');
    expect(waiting.status).toBe('waiting_approval');
    const pending = (await store.getTask('c'))!.checkpoint!.recovery.pending_approval!;
    expect(pending.plan).toMatchObject({ rerun_step: 'publish-index', redo_effects: ['effect-2'] });
    expect(waiting.message).toContain('perform again, under a new key');
    expect(total(service.applied)).toBe(1);
  });

  it('refuses, writing nothing, what it cannot do', async () => {
    const done = await summarized('sum');
    const versions = (await store.history('sum')).length;
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (err: unknown) => err as OperationError,
      );
    expect(await refusal(rewindTask(env, 'sum', 'nope'))).toMatchObject({ code: 'unknown-step' });
    expect(await refusal(rewindTask(env, 'sum', 'summarize:a.md', { redo: ['effect-9'] }))).toMatchObject({ code: 'invalid' });
    // The publish effect belongs to a step this rewind does not rerun.
    expect(await refusal(rewindTask(env, 'sum', 'summarize:a.md', { expectedVersion: done.version - 1 }))).toMatchObject({
      code: 'moved',
    });
    expect((await store.history('sum')).length).toBe(versions);

    // Another runner holds the lease: a typed refusal, nothing written.
    const lease = await acquireLease(path.join(root, 'sum'), 'sum', { owner: 'other runner', heartbeatMs: 0 });
    try {
      expect(await refusal(rewindTask(env, 'sum', 'summarize:a.md'))).toMatchObject({ code: 'busy' });
    } finally {
      await lease.release();
    }
    expect((await store.history('sum')).length).toBe(versions);
  });

  it('refuses a redo of an effect recorded by a step it does not rerun, and a rewind to a step that never ran', async () => {
    const out = await startTask(env, slowAgent, { taskId: 'slow', options: { stepMs: 0, publishUrl: service.url } });
    expect(out.status).toBe('done');
    const cp = (await store.getTask('slow'))!.checkpoint!;
    expect(cp.side_effects).toEqual([expect.objectContaining({ id: 'effect-1', step_id: 'two', status: 'done' })]);
    expect(() => planRewind(cp, 'three', ['effect-1'])).toThrow(/recorded by step two, which this rewind does not rerun/);
    expect(planRewind(cp, 'two', ['effect-1']).effects).toEqual([expect.objectContaining({ id: 'effect-1', choice: 'redo' })]);
    const notRun = { ...cp, plan: cp.plan.map((s) => (s.id === 'three' ? { ...s, status: 'pending' as const } : s)) };
    expect(() => planRewind(notRun, 'three')).toThrow(/has not run yet, nor has any step after it/);
  });
});

describe('fork', () => {
  it('starts a new task from a version, leaving the parent untouched, and does not repeat the effects the parent had done', async () => {
    const done = await summarized('sum');
    const parent = await hashTree(path.join(root, 'sum'));
    const atPublish = (await store.history('sum')).find((v) => v.version < done.version)!.version;
    const fork = await forkTask(env, 'sum', done.version, { taskId: 'sum-b', reason: 'compare' });
    expect(fork).toMatchObject({ task_id: 'sum-b', status: 'done', version: 1 });
    const child = (await store.getTask('sum-b'))!.checkpoint!;
    expect(child.source).toMatchObject({ kind: 'fork', actor: 'ada', forked_from: { task_id: 'sum', version: done.version } });
    expect(child.forked_from).toEqual({ task_id: 'sum', version: done.version });
    expect(child.side_effects).toEqual([
      expect.objectContaining({ status: 'done', idempotency_key: 'sum:publish-index', asked_key: 'sum-b:publish-index' }),
    ]);
    // Its results are its own blobs, equal to the parent's.
    for (const s of child.plan) {
      const mine = await store.readBlob('sum-b', s.result_ref!);
      const theirs = await store.readBlob('sum', done.plan.find((p) => p.id === s.id)!.result_ref!);
      expect(mine).toEqual(theirs);
    }
    expect(await store.readHistory('sum-b')).toEqual(await store.readHistory('sum', done.version));

    // Rerunning the fork's last step keeps the parent's publish: nothing is published again.
    await rewindTask(env, 'sum-b', 'publish-index');
    expect((await resumeTask(env, mdSummarizer, 'sum-b')).status).toBe('done');
    expect(total(service.applied)).toBe(1);
    expect(total(service.duplicates)).toBe(0);
    expect(await hashTree(path.join(root, 'sum'))).toEqual(parent);

    // A fork of an earlier version carries the ledger as it stood then: before the publish, nothing to carry.
    const early = await forkTask(env, 'sum', atPublish, { taskId: 'sum-early' });
    expect((await store.getTask(early.task_id))!.checkpoint!.side_effects).toEqual(
      (await store.readVersion('sum', atPublish)).side_effects.map((e) => ({
        ...e,
        asked_key: e.idempotency_key.replace('sum', 'sum-early'),
      })),
    );
    expect(await hashTree(path.join(root, 'sum'))).toEqual(parent);
  });

  it('carries no stop and no lease: a fork of a stopped task is stopped afresh by whoever stops it, and a resume runs it', async () => {
    const done = await summarized('sum');
    const versions = await store.readVersions(
      'sum',
      (await store.history('sum')).map((v) => v.version),
    );
    const midRun = versions.find((v) => v.status === 'running' && v.plan[0].status === 'done')!.version;
    // A fork of a version mid-run is interrupted; stopping it is a stop of its own, not one the fork made.
    await forkTask(env, 'sum', midRun, { taskId: 'mid' });
    expect((await store.getTask('mid'))!.checkpoint!.recovery.stopped).toBeNull();
    const first = await captureCli('stop', root, 'mid', '--by', 'grace', '--reason', 'hold it');
    expect(first.code).toBe(0);
    expect(first.out).toContain('task mid stopped by grace\n');
    const stopped = (await store.getTask('mid'))!.checkpoint!;
    expect(stopped).toMatchObject({ version: 2, source: { kind: 'stop', actor: 'grace' }, recovery: { stopped: { by: 'grace' } } });

    // Forked from the stopped task, a task holds neither its stop nor its lease.
    await forkTask(env, 'mid', stopped.version, { taskId: 'again' });
    await forkTask(env, 'mid', stopped.version, { taskId: 'fresh' });
    expect((await store.getTask('again'))!.checkpoint!).toMatchObject({ status: 'running', recovery: { stopped: null } });
    expect((await store.readLease('again')).entry).toBeNull();
    expect(await store.readStopRequest('again')).toBeNull();
    const again = await captureCli('stop', root, 'again', '--by', 'bob');
    expect(again.code).toBe(0);
    expect(again.out).toContain('task again stopped by bob\n');
    expect(again.out).not.toContain('already stopped');
    expect((await store.getTask('again'))!.checkpoint!).toMatchObject({ version: 2, recovery: { stopped: { by: 'bob' } } });

    // A person's resume runs each to the end, stopped or not: nothing of the parent's stops it at once.
    for (const id of ['again', 'fresh']) {
      expect((await resumeTask(env, mdSummarizer, id)).status).toBe('done');
      expect((await store.getTask(id))!.checkpoint!.plan.every((s) => s.status === 'done')).toBe(true);
    }
    expect((await store.getTask('sum'))!.checkpoint!.version).toBe(done.version);
  });

  it("takes the stop an earlier build wrote into a fork it made for the fork's hold, not for a person's stop", async () => {
    await summarized('sum');
    const start = await store.readVersion('sum', 1);
    const origin = { task_id: 'sum', version: 1 };
    const note = 'forked from sum at version 1';
    await store.create({
      ...withoutVersion(start),
      task_id: 'older',
      forked_from: origin,
      source: { kind: 'fork', actor: 'ada', note, forked_from: origin },
      recovery: { ...start.recovery, stopped: { by: 'ada', at: start.run.updated_at, reason: note } },
    });
    const stop = await captureCli('stop', root, 'older', '--by', 'bob');
    expect(stop.code).toBe(0);
    expect(stop.out).toContain('task older stopped by bob\n');
    expect((await store.getTask('older'))!.checkpoint!).toMatchObject({ version: 2, recovery: { stopped: { by: 'bob' } } });
  });

  it('forks a failed task at its failure, and the fork resumes there while the parent stays failed', async () => {
    const failed = await startTask(env, checkpointDemo, { taskId: 'demo' });
    expect(failed.status).toBe('failed');
    const parent = await hashTree(path.join(root, 'demo'));
    const fork = await forkTask(env, 'demo', failed.version);
    expect(fork.task_id).toMatch(/^demo-fork-v\d+-[0-9a-f]{4}$/);
    process.env.SKIP_FAILURE = '1';
    try {
      expect((await resumeTask(env, checkpointDemo, fork.task_id)).status).toBe('done');
    } finally {
      delete process.env.SKIP_FAILURE;
    }
    const child = (await store.getTask(fork.task_id))!.checkpoint!;
    expect(child.plan.map((s) => s.attempts)).toEqual([1, 1, 2, 1]);
    expect(await hashTree(path.join(root, 'demo'))).toEqual(parent);
    expect((await store.getTask('demo'))!.checkpoint!.status).toBe('failed');
  });

  it('refuses a version the task does not have, an id that exists, and an id that is not one', async () => {
    const done = await summarized('sum');
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (err: unknown) => err as OperationError,
      );
    // Past the newest: not there, as for every read of a version; a version that cannot be one is bad input.
    expect(await refusal(forkTask(env, 'sum', done.version + 1))).toMatchObject({ code: 'not-found' });
    expect(await refusal(forkTask(env, 'sum', 0))).toMatchObject({ code: 'invalid' });
    expect(await refusal(forkTask(env, 'sum', 1, { taskId: 'sum' }))).toMatchObject({ code: 'exists' });
    expect(await refusal(forkTask(env, 'sum', 1, { taskId: '../x' }))).toMatchObject({ code: 'invalid' });
    expect(await refusal(forkTask(env, 'none', 1))).toMatchObject({ code: 'not-found' });
    expect((await store.listTasks()).map((t) => t.task_id)).toEqual(['sum']);
  });

  it('takes the place of a fork interrupted before its first version, which left only a folder', async () => {
    const done = await summarized('sum');
    // What a fork killed between making the task's folder and writing its version leaves behind.
    await fs.mkdir(path.join(root, 'half', 'versions'), { recursive: true });
    expect((await store.getTask('half'))?.checkpoint).toBeNull();
    const forked = await forkTask(env, 'sum', done.version, { taskId: 'half' });
    expect(forked.task_id).toBe('half');
    const cp = (await store.getTask('half'))!.checkpoint!;
    expect(cp.version).toBe(1);
    expect(cp.forked_from).toMatchObject({ task_id: 'sum', version: done.version });
  });
});

describe('editing a done step', () => {
  it('reruns the later steps by default, or keeps them when a person says they still stand', async () => {
    const done = await summarized('sum');
    const first = done.plan[0];
    const edited = { ...((await store.readBlob('sum', first.result_ref!)) as Record<string, unknown>), summary: 'Edited by hand.' };

    const kept = await editStepResult(env, 'sum', first.id, edited, { later: 'keep' });
    expect(kept.status).toBe('done');
    const afterKeep = (await store.getTask('sum'))!.checkpoint!;
    expect(afterKeep.plan.map((s) => s.status)).toEqual(['done', 'done', 'done']);
    expect(afterKeep.source).toMatchObject({ kind: 'human-edit', edit: { step_id: first.id, after: edited } });
    expect(await store.readBlob('sum', afterKeep.plan[0].result_ref!)).toEqual(edited);

    const rerun = await editStepResult(env, 'sum', first.id, edited);
    expect(rerun.status).toBe('waiting_human');
    const afterRerun = (await store.getTask('sum'))!.checkpoint!;
    expect(afterRerun.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
    // No longer done: back in the phase the first step it reruns ran in.
    expect(afterRerun.phase).toBe('summarize');
    expect((await resumeTask(env, mdSummarizer, 'sum')).status).toBe('done');
    expect(total(service.applied)).toBe(1);
  });
});

describe('the CLI', () => {
  it('rewind shows the plan and writes nothing without --yes; with it, writes the rewind', async () => {
    await summarized('sum');
    const versions = (await store.history('sum')).length;
    const preview = await captureCli('rewind', root, 'sum', 'publish-index', '--redo', 'effect-1');
    expect(preview.code).toBe(0);
    expect(preview.out).toContain('rerun from publish-index');
    expect(preview.out).toContain('redo effect-1 http-publish: performed again under a new key (was sum:publish-index)');
    expect(preview.out).toContain(`nothing was written; to rewind: waystation rewind ${root} sum publish-index --redo effect-1 --yes`);
    expect((await store.history('sum')).length).toBe(versions);

    const written = await captureCli('rewind', root, 'sum', 'publish-index', '--yes', '--json');
    expect(written.code).toBe(0);
    expect(JSON.parse(written.out)).toMatchObject({ task_id: 'sum', status: 'waiting_human', version: versions + 1 });
    const bad = await captureCli('rewind', root, 'sum', 'nope');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('has no step "nope"');
  });

  it('fork names the new task and how to continue it; edit --later keep keeps the steps after the edited one', async () => {
    const done = await summarized('sum');
    const fork = await captureCli('fork', root, 'sum', 'latest', '--task', 'sum-2');
    expect(fork.code).toBe(0);
    expect(fork.out).toContain(`task sum-2 forked from sum at version ${done.version}`);
    const value = JSON.stringify(await store.readBlob('sum', done.plan[0].result_ref!));
    const edit = await captureCli('edit', root, 'sum-2', done.plan[0].id, '--value', value, '--later', 'keep');
    expect(edit.code).toBe(0);
    expect((await store.getTask('sum-2'))!.checkpoint!.plan.every((s) => s.status === 'done')).toBe(true);
    expect((await captureCli('edit', root, 'sum-2', done.plan[0].id, '--value', value, '--later', 'maybe')).code).toBe(2);
  });
});
