import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActionResult, HostEvent } from '../../../shared/api/contract.js';
import { ApiError } from '../../../shared/api/api-error.js';
import { CURRENT_SCHEMA_VERSION, type CheckpointInput } from '../../../shared/checkpoint/schema.js';
import { FIRST_ARTICLE_TASK_JSON, SECOND_ARTICLE_CHECKPOINT_JSON } from '../../../shared/checkpoint/article-samples.js';
import { runCli } from '../../../electron/cli/main.js';
import { HostService, type HostRunner, type RunnerEvent } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { recordingRunner, type RecordedAction } from '../../support/recording-runner.js';
import { writeMixedDirectory } from '../cli/cli-fixtures.js';
import { trustAll } from '../../support/trust-all.js';

const now = '2026-01-01T00:00:00.000Z';

function task(taskId: string, phase = 'start'): Omit<CheckpointInput, 'version'> {
  return {
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: taskId,
    task_name: 'host test',
    status: 'running',
    phase,
    goal: 'exercise the host',
    plan: [
      { id: 's1', name: 'first', status: 'done' },
      { id: 's2', name: 'second', status: 'pending' },
    ],
    current_step: 1,
    total_steps: 2,
    recovery: { mode: 'manual' },
    run: { created_at: now, updated_at: now },
    source: { kind: 'runtime' },
  };
}

/** A runner that records what it is asked; the processes behind it are the runtime's business. */
function fakeRunner() {
  const calls: unknown[][] = [];
  let listener: ((e: RunnerEvent) => void) | null = null;
  const result = (taskId: string): ActionResult => ({ taskId, version: null, message: 'ok' });
  const runner: HostRunner = {
    start: async (root, req) => (calls.push(['start', root, req]), result(req.taskId ?? 'generated')),
    resume: async (root, id) => (calls.push(['resume', root, id]), result(id)),
    approve: async (root, id, by) => (calls.push(['approve', root, id, by]), result(id)),
    reject: async (root, id, reason, by) => (calls.push(['reject', root, id, reason, by]), result(id)),
    edit: async (root, id, step, value) => (calls.push(['edit', root, id, step, value]), result(id)),
    stop: async (root, id, opts) => (calls.push(['stop', root, id, opts]), result(id)),
    fork: async (root, id, version, opts) => (calls.push(['fork', root, id, version, opts]), result(opts.newTaskId ?? `${id}-fork`)),
    rewind: async (root, id, step, opts) => (calls.push(['rewind', root, id, step, opts]), result(id)),
    onEvent: (l) => ((listener = l), () => (listener = null)),
    shutdown: async () => void calls.push(['shutdown']),
  };
  return { runner, calls, emit: (e: RunnerEvent) => listener?.(e) };
}

let root: string;
let service: HostService;
let events: HostEvent[];
let waiters: Array<() => void>;

function until(predicate: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}; got ${JSON.stringify(events.slice(-5))}`)), 20_000);
    const check = () => {
      if (predicate()) {
        clearTimeout(timer);
        resolve();
      } else waiters.push(check);
    };
    check();
  });
}

async function startService(opts: Partial<ConstructorParameters<typeof HostService>[0]> = {}): Promise<void> {
  service = new HostService({ host: 'web', trust: trustAll, ...opts });
  events = [];
  waiters = [];
  service.subscribe((e) => {
    events.push(e);
    const pending = waiters;
    waiters = [];
    for (const w of pending) w();
  });
  await service.open(root);
}

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-host-')));
});

afterEach(async () => {
  await service?.close();
  await fs.rm(root, { recursive: true, force: true });
});

describe('reading through the host service', () => {
  it("serves the listing exactly as `waystation ls --json` prints it, and the app's list as that listing less the plans", async () => {
    await writeMixedDirectory(root);
    await startService();
    let stdout = '';
    await runCli(['ls', root, '--json'], { out: (s) => (stdout += s), err: () => {}, color: false });
    const printed = JSON.parse(stdout) as { task_id: string; plan: unknown[] }[];
    expect(printed.some((t) => t.plan.length > 0)).toBe(true);
    const listings = JSON.parse(JSON.stringify(await service.listTaskListings()));
    expect(listings).toEqual(printed);
    const light = JSON.parse(JSON.stringify(await service.listTasks())) as Record<string, unknown>[];
    expect(light.every((t) => !('plan' in t))).toBe(true);
    expect(light).toEqual(printed.map(({ plan: _plan, ...summary }) => summary));
  });

  it('returns a task at a version, its history, a diff and a step result', async () => {
    const store = openStore(root);
    await store.create(task('t1'));
    await store.save('t1', {
      expectedVersion: 1,
      checkpoint: { ...task('t1', 'second'), status: 'done' },
      results: { s1: { answer: 42 } },
    });
    await startService();
    const latest = await service.getTask({ taskId: 't1' });
    expect(latest.version).toBe(2);
    expect(latest.latest_version).toBe(2);
    expect(latest.summary.task_id).toBe('t1');
    expect(latest.lease.held).toBe(false);
    const first = await service.getTask({ taskId: 't1', version: 1 });
    expect(first.checkpoint?.phase).toBe('start');
    const { versions } = await service.getHistory({ taskId: 't1' });
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    // After the entry a caller holds: only the versions written since, unless that entry is no longer the task's.
    const mark = { version: 1, updated_at: versions[0].updated_at, bytes: versions[0].bytes };
    expect(await service.getHistory({ taskId: 't1', after: mark })).toEqual({ after: 1, versions: [versions[1]] });
    expect(await service.getHistory({ taskId: 't1', after: { ...mark, bytes: mark.bytes + 1 } })).toEqual({ after: 0, versions });
    expect(await service.getHistory({ taskId: 't1', after: { ...mark, version: 9 } })).toEqual({ after: 0, versions });
    const diff = await service.diffVersions({ taskId: 't1', a: 1, b: 2 });
    expect(diff.entries.some((e) => JSON.stringify(e).includes('phase'))).toBe(true);
    expect(await service.getStepResult({ taskId: 't1', stepId: 's1' })).toEqual({ value: { answer: 42 }, found: true });
    expect(await service.getStepResult({ taskId: 't1', stepId: 's2' })).toEqual({ value: null, found: false });
    expect((await service.verifyTask({ taskId: 't1' })).task_id).toBe('t1');
  });

  it('diffs versions of a native task and of a legacy file, and names what is not there', async () => {
    const store = openStore(root);
    await store.create(task('t1'));
    await store.save('t1', { expectedVersion: 1, checkpoint: task('t1', 'second') });
    await fs.writeFile(
      path.join(root, 'legacy.json'),
      JSON.stringify({ task_id: 'legacy', current_step: 1, total_steps: 2, results: { a: 1 } }),
    );
    await startService();
    const diff = await service.diffVersions({ taskId: 't1', a: 1, b: 2 });
    expect(diff.summary).toEqual((await service.diffVersions({ taskId: 't1', a: 1, b: 2 })).summary);
    expect(diff.entries.some((e) => JSON.stringify(e).includes('phase'))).toBe(true);
    const legacy = (await service.getTask({ taskId: 'legacy' })).latest_version!;
    expect((await service.diffVersions({ taskId: 'legacy', a: legacy, b: legacy })).entries).toEqual([]);
    const past = await service.diffVersions({ taskId: 't1', a: 1, b: 3 }).catch((e: unknown) => e);
    expect([past instanceof ApiError && past.code, String(past)]).toEqual([
      'not-found',
      expect.stringContaining('has versions 1 to 2; there is no version 3'),
    ]);
    const ghost = await service.diffVersions({ taskId: 'ghost', a: 1, b: 2 }).catch((e: unknown) => e);
    expect(ghost instanceof ApiError && ghost.code).toBe('not-found');
  });

  /**
   * Task v1, done, recording one artifact that lives outside the watched directory, as agents' outputs often do: no
   * watcher event can tell it changed. Its folder is removed after `body`.
   */
  async function withOutsideArtifact(body: (file: string) => Promise<void>): Promise<void> {
    const outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-artifacts-')));
    try {
      const file = path.join(outside, 'report.md');
      await fs.writeFile(file, 'as recorded');
      const sha256 = createHash('sha256').update('as recorded').digest('hex');
      await openStore(root).create({
        ...task('v1'),
        status: 'done',
        artifacts: [{ type: 'file', path: file, sha256, size: 11, status: 'written' }],
      });
      await body(file);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  }

  it('announces drift a full verify finds as a change of the task, once, and shows it in the task view', async () => {
    await withOutsideArtifact(async (file) => {
      await startService();
      expect((await service.listTasks())[0].display_status).toBe('done');

      await fs.writeFile(file, 'AS RECORDED');
      // Same size: the listing's stat check cannot see it; the full verify does, and says so.
      expect((await service.listTasks())[0].display_status).toBe('done');
      expect((await service.verifyTask({ taskId: 'v1' })).drift).toBe(true);
      const changes = () => events.filter((e) => e.type === 'task-changed' && e.taskId === 'v1');
      expect(changes()).toHaveLength(1);
      expect((await service.getTask({ taskId: 'v1' })).summary.display_status).toBe('drifted');
      await service.verifyTask({ taskId: 'v1' });
      expect(changes()).toHaveLength(1);

      await fs.writeFile(file, 'as recorded');
      expect((await service.verifyTask({ taskId: 'v1' })).drift).toBe(false);
      expect(changes()).toHaveLength(2);
      expect((await service.getTask({ taskId: 'v1' })).summary.display_status).toBe('done');
    });
  });

  it('lists a task as drifted once a full verify found it, as its task view shows it, with the row sent along', async () => {
    await withOutsideArtifact(async (file) => {
      await startService();
      await fs.writeFile(file, 'AS RECORDED');
      const row = async () => (await service.listTasks()).find((t) => t.task_id === 'v1')!.display_status;
      // Same size: the list's stat cannot see it, until a verify has.
      expect(await row()).toBe('done');
      expect((await service.verifyTask({ taskId: 'v1' })).drift).toBe(true);
      expect((await service.getTask({ taskId: 'v1' })).summary.display_status).toBe('drifted');
      expect(await row()).toBe('drifted');
      expect((await service.listTasks({ limit: 10 })).find((t) => t.task_id === 'v1')?.display_status).toBe('drifted');
      // The change carries the row: a window replaces it without listing every task again.
      const announced = events.filter((e) => e.type === 'task-changed' && e.taskId === 'v1');
      expect(announced.at(-1)).toMatchObject({ version: null, summary: { task_id: 'v1', display_status: 'drifted' } });

      await fs.writeFile(file, 'as recorded');
      expect((await service.verifyTask({ taskId: 'v1' })).drift).toBe(false);
      expect(await row()).toBe('done');
      const cleared = events.filter((e) => e.type === 'task-changed' && e.taskId === 'v1').at(-1);
      expect(cleared).toMatchObject({ version: null, summary: { task_id: 'v1', display_status: 'done' } });
    });
  });

  it('does not show the drift a full verify found of a task on another task written under its name', async () => {
    await withOutsideArtifact(async (file) => {
      await startService();
      await fs.writeFile(file, 'AS RECORDED');
      expect((await service.verifyTask({ taskId: 'v1' })).drift).toBe(true);
      expect((await service.getTask({ taskId: 'v1' })).summary.display_status).toBe('drifted');

      // Removed, and another task written under the name, at the same version, with no artifact at all.
      await fs.rm(path.join(root, 'v1'), { recursive: true });
      await openStore(root).create({ ...task('v1'), status: 'done', phase: 'another task' });
      const detail = await service.getTask({ taskId: 'v1' });
      expect(detail.summary.phase).toBe('another task');
      expect(detail.summary.display_status).toBe('done');
    });
  });

  it('says beforehand that nothing can resume a legacy task no built-in agent recognises, and not of one that one does', async () => {
    // The demo's two article files: the first article's four-step task is checkpoint-demo's, the second's no agent's.
    await fs.writeFile(path.join(root, 'legacy-task-001.json'), JSON.stringify({ ...FIRST_ARTICLE_TASK_JSON, task_id: 'legacy-task-001' }));
    await fs.mkdir(path.join(root, 'article-two'));
    await fs.writeFile(
      path.join(root, 'article-two', 'checkpoint.json'),
      JSON.stringify({ ...SECOND_ARTICLE_CHECKPOINT_JSON, artifacts: [] }),
    );
    await startService();
    const unknown = (await service.getTask({ taskId: 'article-two' })).agent_status;
    expect(unknown).toMatchObject({ origin: 'none', available: false });
    expect(unknown?.problem).toMatch(/no agent Waystation has recognises this task \(article-checkpoint-json format\)/);
    const adopted = (await service.getTask({ taskId: 'legacy-task-001' })).agent_status;
    expect(adopted).toEqual({ name: null, origin: 'none', available: false });
  });

  it('answers not-found for a missing task, version or step', async () => {
    await openStore(root).create(task('t1'));
    await startService();
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: ApiError) => e.code,
      );
    expect(await code(service.getTask({ taskId: 'nope' }))).toBe('not-found');
    expect(await code(service.getTask({ taskId: 't1', version: 9 }))).toBe('not-found');
    expect(await code(service.getStepResult({ taskId: 't1', stepId: 'zz' }))).toBe('not-found');
  });

  it('lists the built-in agents with a JSON Schema of their options', async () => {
    await startService();
    const agents = await service.listAgents();
    expect(agents.map((a) => a.name)).toEqual(expect.arrayContaining(['checkpoint-demo', 'md-summarizer']));
    expect(agents.every((a) => a.origin === 'builtin' && typeof a.options_schema === 'object')).toBe(true);
  });
});

describe('opening directories', () => {
  it('keeps the web host on its own directory', async () => {
    await startService({ host: 'web' });
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-other-'));
    try {
      await expect(service.openDirectory({ path: other })).rejects.toMatchObject({ code: 'forbidden' });
      expect((await service.openDirectory({ path: root })).root).toBe(root);
      expect(await service.chooseDirectory({ readOnly: false })).toBeNull();
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });

  it('lets the desktop reopen a recent folder but not name an arbitrary one', async () => {
    const other = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-other-')));
    const recent: string[] = [];
    try {
      await startService({
        host: 'desktop',
        recent: { list: () => [...recent], readOnly: () => [], remember: async (r) => void recent.unshift(r) },
      });
      expect(recent).toEqual([root]);
      await expect(service.openDirectory({ path: other })).rejects.toMatchObject({ code: 'forbidden' });
      recent.push(other);
      const info = await service.openDirectory({ path: other });
      expect(info).toMatchObject({ root: other, host: 'desktop' });
      expect(events.filter((e) => e.type === 'directory-changed').map((e) => (e as { root: string }).root)).toEqual([root, other]);
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });
});

describe('a directory opened read-only', () => {
  it('runs nothing: no recovery, no agent module loaded, every action refused with the reason; opened again to run, it runs', async () => {
    await openStore(root).create(task('t1'));
    const other = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-other-')));
    const recorded: RecordedAction[] = [];
    const runner = recordingRunner(recorded, { agentCode: true });
    const calls = () => recorded.map((c) => c.what);
    const remembered: Array<[string, boolean]> = [];
    // Newest first; a folder's mode is the one it was last opened in.
    const lastMode = () => new Map([...remembered].reverse());
    const recent = {
      list: () => [...lastMode().keys()],
      readOnly: () => [...lastMode()].filter(([, ro]) => ro).map(([r]) => r),
      remember: async (r: string, o: { readOnly: boolean }) => void remembered.unshift([r, o.readOnly]),
    };
    let chosen = root;
    service = new HostService({ host: 'desktop', runner, recent, trust: trustAll, chooseDirectory: async () => chosen });
    try {
      expect(await service.chooseDirectory({ readOnly: true })).toMatchObject({ root, read_only: true, recent_read_only: [root] });
      expect(await service.getDirectory()).toMatchObject({ read_only: true });
      expect((await service.listTasks()).map((t) => t.task_id)).toEqual(['t1']);
      expect((await service.getTask({ taskId: 't1' })).checkpoint?.task_id).toBe('t1');
      expect((await service.listAgents()).every((a) => a.origin === 'builtin')).toBe(true);

      const actions = [
        () => service.startTask({ agent: 'checkpoint-demo', options: {}, mode: 'manual' }),
        () => service.resumeTask({ taskId: 't1' }),
        () => service.approveResume({ taskId: 't1' }),
        () => service.rejectResume({ taskId: 't1', reason: 'no' }),
        () => service.editStepResult({ taskId: 't1', stepId: 's1', value: 1 }),
      ];
      for (const act of actions)
        await expect(act()).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('is open read-only') });
      await new Promise((r) => setTimeout(r, 50));
      expect(calls()).toEqual([]);

      // Another folder, opened to run; then the first again from the recent list, without saying how: read-only, as last opened.
      chosen = other;
      expect(await service.chooseDirectory({ readOnly: false })).toMatchObject({ root: other, read_only: false, recent_read_only: [root] });
      await expect.poll(() => calls().includes('recoverInterrupted'), { timeout: 10_000 }).toBe(true);
      recorded.length = 0;
      expect(await service.openDirectory({ path: root })).toMatchObject({ root, read_only: true });
      await service.listAgents();
      await new Promise((r) => setTimeout(r, 50));
      expect(calls()).toEqual([]);

      // Opened to run tasks: recovery runs, agents load, actions reach the runner; the folder is no longer remembered read-only.
      expect(await service.openDirectory({ path: root, readOnly: false })).toMatchObject({ root, read_only: false, recent_read_only: [] });
      await service.listAgents();
      await service.resumeTask({ taskId: 't1' });
      await expect.poll(() => calls().includes('recoverInterrupted'), { timeout: 10_000 }).toBe(true);
      expect(calls()).toEqual(expect.arrayContaining(['registeredAgents', 'resume', 'recoverInterrupted']));
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });

  it('is how a host without a runner shows every directory', async () => {
    await startService({ host: 'web', runner: null });
    expect(await service.getDirectory()).toMatchObject({ root, read_only: true });
    await expect(service.resumeTask({ taskId: 'none' })).rejects.toMatchObject({ code: 'not-found' });
  });
});

describe('remembering the folder opened', () => {
  it('opens and watches the directory when the recent folders cannot be saved, and says why', async () => {
    await openStore(root).create(task('t1'));
    const failing = { list: () => [], readOnly: () => [], remember: async () => Promise.reject(new Error('EROFS: read-only file system')) };
    await startService({ host: 'desktop', recent: failing });
    expect(service.root).toBe(root);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'directory-notice', root, detail: expect.stringContaining('EROFS: read-only file system') }),
    );
    expect((await service.listTasks()).map((t) => t.task_id)).toEqual(['t1']);
    // The watcher started: a task written afterwards reaches subscribers.
    await openStore(root).create(task('after'));
    await until(() => events.some((e) => e.type === 'task-changed' && e.taskId === 'after'), 'the task written after opening');
  });
});

describe('live events from the directory', () => {
  it('reports 1,000 versions written by another writer: every version event once, in order, coalesced', async () => {
    const writer = openStore(root);
    await writer.create(task('burst'));
    await startService({ watch: { quietMs: 50, maxDelayMs: 200 } });
    const burstStart = Date.now();
    let version = 1;
    for (; version < 1000; version++) {
      await writer.save('burst', { expectedVersion: version, checkpoint: task('burst', `phase ${version + 1}`) });
    }
    const versionEvents = () =>
      events
        .filter((e) => e.type === 'task-event' && e.event.type === 'version')
        .map((e) => (e as { event: { version?: number } }).event.version);
    await until(() => versionEvents().includes(1000), 'the version event of version 1000');
    expect(versionEvents()).toEqual(Array.from({ length: 999 }, (_, i) => i + 2));
    const lastChange = () => events.filter((e) => e.type === 'task-changed').at(-1) as { version: number } | undefined;
    await until(() => lastChange()?.version === 1000, 'task-changed at version 1000');
    const burstMs = Date.now() - burstStart;
    const changed = events.filter((e) => e.type === 'task-changed');
    // One change per batch, and a batch only after 50 ms without a change: at most one per 50 ms of the burst,
    // however slowly the machine saves, and far fewer than the 999 versions.
    expect(changed.length).toBeLessThanOrEqual(Math.floor(burstMs / 50) + 1);
    expect(changed.length).toBeLessThan(999);
    // Ids are global and consecutive.
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => events[0].id + i));
  });

  /** Write task `again` anew (its folder gone first, if there): a run of `versions` versions named `run`. */
  async function runAgain(run: string, versions: number): Promise<void> {
    await fs.rm(path.join(root, 'again'), { recursive: true, force: true });
    const writer = openStore(root);
    await writer.create(task('again', `${run} run`));
    for (let version = 1; version < versions; version++) {
      await writer.save('again', { expectedVersion: version, checkpoint: task('again', `${run} run ${version + 1}`) });
    }
  }

  /** The version events of task `again` published from the `from`th event on. */
  const versionEvents = (from: number) =>
    events
      .slice(from)
      .filter((e) => e.type === 'task-event' && e.taskId === 'again' && e.event.type === 'version')
      .map((e) => (e as { event: { id: number; version?: number } }).event);

  it.each([
    { first: 6, second: 3, ends: 'shorter' },
    { first: 3, second: 5, ends: 'longer' },
  ])(
    'reports the events of a task removed and written anew under its name within one batch, from its first ($ends)',
    async ({ first, second }) => {
      await openStore(root).create(task('again', 'first run'));
      // A batch only after 400 ms without a change: the removal and the new run below fall in one.
      await startService({ watch: { quietMs: 400, maxDelayMs: 5_000 } });
      const writer = openStore(root);
      for (let version = 1; version < first; version++) {
        await writer.save('again', { expectedVersion: version, checkpoint: task('again', `first run ${version + 1}`) });
      }
      await until(() => versionEvents(0).some((e) => e.version === first), `the first run at version ${first}`);

      const mark = events.length;
      await runAgain('second', second);
      await until(() => versionEvents(mark).some((e) => e.version === second), `the second run at version ${second}`);
      expect(versionEvents(mark).map((e) => [e.id, e.version])).toEqual(Array.from({ length: second }, (_, i) => [i + 1, i + 1]));
    },
  );

  it.each([
    { first: 6, second: 3, ends: 'shorter' },
    { first: 3, second: 6, ends: 'longer' },
  ])(
    'reports the events of a task written before the directory opened and written anew before it changed, from its first ($ends)',
    async ({ first, second }) => {
      await runAgain('first', first);
      // A batch only after 400 ms without a change: the removal and the new run below fall in one, the task's first
      // change since the directory was opened.
      await startService({ watch: { quietMs: 400, maxDelayMs: 5_000 } });
      await service.listTasks();
      // The new run's events are written well after the old log last was, as a run started again later is.
      await new Promise((r) => setTimeout(r, 100));
      const mark = events.length;
      await runAgain('second', second);
      await until(
        () => events.slice(mark).some((e) => e.type === 'task-changed' && e.taskId === 'again' && e.version === second),
        `the second run at version ${second}`,
      );
      expect(versionEvents(mark).map((e) => [e.id, e.version])).toEqual(Array.from({ length: second }, (_, i) => [i + 1, i + 1]));
    },
  );

  it('reports a new task folder and a deleted one', async () => {
    await openStore(root).create(task('old'));
    await startService();
    await service.listTasks();
    await openStore(root).create(task('fresh'));
    await until(() => events.some((e) => e.type === 'task-changed' && e.taskId === 'fresh'), 'the new task');
    await fs.rm(path.join(root, 'old'), { recursive: true });
    await until(() => events.some((e) => e.type === 'task-removed' && e.taskId === 'old'), 'the removal');
  });
});

describe('acting through the runner', () => {
  it('passes validated actions to the runner and publishes its events', async () => {
    // Waiting for approval of a resume plan: approve and reject are asked of it.
    await openStore(root).create({
      ...task('t1'),
      status: 'waiting_approval',
      recovery: { mode: 'confirm', pending_approval: { id: 'a1', requested_at: now, plan: { rerun_step: 's2' } } },
    });
    const fake = fakeRunner();
    await startService({ runner: fake.runner });
    await service.startTask({ agent: 'checkpoint-demo', options: {}, mode: 'confirm' });
    await service.resumeTask({ taskId: 't1' });
    await service.rejectResume({ taskId: 't1', reason: 'wrong plan' });
    await service.approveResume({ taskId: 't1', by: 'fay' });
    await service.editStepResult({ taskId: 't1', stepId: 's1', value: 'x' });
    expect(fake.calls).toEqual([
      ['start', root, { taskId: undefined, agent: 'checkpoint-demo', options: {}, mode: 'confirm' }],
      ['resume', root, 't1'],
      ['reject', root, 't1', 'wrong plan', undefined],
      ['approve', root, 't1', 'fay'],
      ['edit', root, 't1', 's1', 'x'],
    ]);
    await expect(service.resumeTask({ taskId: 'missing' })).rejects.toMatchObject({ code: 'not-found' });
    fake.emit({ taskId: 't1', state: 'started', detail: 'pid 42' });
    expect(events.at(-1)).toMatchObject({ type: 'runner', taskId: 't1', state: 'started', detail: 'pid 42' });
    await service.close();
    expect(fake.calls.at(-1)).toEqual(['shutdown']);
  });

  it('refuses actions when it has no runner', async () => {
    await openStore(root).create(task('t1'));
    await startService();
    await expect(service.resumeTask({ taskId: 't1' })).rejects.toMatchObject({ code: 'forbidden' });
  });
});
