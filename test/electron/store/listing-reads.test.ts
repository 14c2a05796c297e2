/**
 * What the store reads to list a directory and to rebuild a version: the
 * listing checks what a summary shows and looks up only what a readdir of the
 * task folder says is there; a version is rebuilt from its version files alone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { fileURLToPath } from 'node:url';
import { nodeFs, syncReadsOf, type StoreFs, type SyncStoreReads } from '../../../electron/store/store-fs.js';
import { SYNC_SLICE } from '../../../electron/store/directory-scan.js';
import { TaskReadError } from '../../../electron/store/store-types.js';
import { cleanup, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';
import { SECOND_ARTICLE_CHECKPOINT_JSON } from '../../../shared/checkpoint/article-samples.js';

let root: string;

beforeEach(async () => {
  root = await tempRoot();
});
afterEach(async () => {
  await cleanup(root);
});

/** nodeFs that records every read call as `method path-relative-to-root`, and every one that threw. */
function recordingFs(): { fs: StoreFs; calls: string[]; thrown: string[] } {
  const calls: string[] = [];
  const thrown: string[] = [];
  const rel = (p: string) => path.relative(root, p).split(path.sep).join('/') || '.';
  const wrap =
    <A extends unknown[], R>(name: string, fn: (p: string, ...rest: A) => Promise<R>) =>
    async (p: string, ...rest: A): Promise<R> => {
      calls.push(`${name} ${rel(p)}`);
      try {
        return await fn(p, ...rest);
      } catch (err) {
        thrown.push(`${name} ${rel(p)}`);
        throw err;
      }
    };
  return {
    calls,
    thrown,
    fs: {
      ...nodeFs,
      readWholeFile: wrap('read', nodeFs.readWholeFile),
      readdir: wrap('readdir', nodeFs.readdir),
      readdirNames: wrap('readdir', nodeFs.readdirNames),
      stat: wrap('stat', nodeFs.stat),
      lstat: wrap('lstat', nodeFs.lstat),
      exists: wrap('exists', nodeFs.exists),
    },
  };
}

/** Tasks `t-0000`, `t-0001`, ... filling two listing slices and one task of a third; returns how many. */
async function writeThreeSlicesOfTasks(): Promise<number> {
  const cp = (await openStore(root).create(makeCheckpoint('t-0000'))).checkpoint;
  const hot = await fs.readFile(path.join(root, 't-0000', 'checkpoint.json'), 'utf8');
  const count = 2 * SYNC_SLICE + 1;
  for (let i = 1; i < count; i++) {
    const id = `t-${String(i).padStart(4, '0')}`;
    await fs.mkdir(path.join(root, id));
    await fs.writeFile(path.join(root, id, 'checkpoint.json'), hot.replace(`"task_id":"${cp.task_id}"`, `"task_id":"${id}"`));
  }
  return count;
}

/** Write a task's hot snapshot by hand, as a foreign writer or a bad disk might leave it. */
async function writeHot(taskId: string, doc: unknown): Promise<void> {
  await fs.writeFile(path.join(root, taskId, 'checkpoint.json'), JSON.stringify(doc));
}

describe('listing', () => {
  it('reads each task folder once, its hot snapshot once, and probes for a newer version: nothing else', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('a'));
    const b = (await seed.create(makeCheckpoint('b'))).checkpoint;
    await seed.save('b', { expectedVersion: 1, checkpoint: { ...withoutVersion(b), phase: 'two' } });
    const rec = recordingFs();
    const tasks = await openStore(root, { fs: rec.fs }).listTasks();
    expect(tasks.map((t) => [t.task_id, t.checkpoint?.version, t.problems])).toEqual([
      ['a', 1, []],
      ['b', 2, []],
    ]);
    // One lookup for a version newer than the hot snapshot's. Whether versions/ holds the hot snapshot's own version
    // is the file checks' (fileProblems) to say: they list versions/ anyway.
    expect(rec.calls.filter((c) => c !== 'readdir .').sort()).toEqual([
      'exists a/versions/00000002.json',
      'exists b/versions/00000003.json',
      'read a/checkpoint.json',
      'read b/checkpoint.json',
      'readdir a',
      'readdir b',
    ]);
    // The probes answer "no newer version" with false: no lookup throws.
    expect(rec.thrown).toEqual([]);
  });

  it('notes whether a task folder has a lease folder, so a summary need not look for one', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('free'));
    await seed.create(makeCheckpoint('leased'));
    await fs.mkdir(path.join(root, 'leased', 'lease'));
    const tasks = await seed.listTasks();
    expect(tasks.map((t) => [t.task_id, t.has_lease])).toEqual([
      ['free', false],
      ['leased', true],
    ]);
    expect(Object.keys((await seed.getTask('leased'))!)).not.toContain('has_lease');
  });

  it("lists a checkpoint that fails the summary check with zod's account of it, as opening the task does", async () => {
    const seed = openStore(root);
    const cp = (await seed.create(makeCheckpoint('t'))).checkpoint;
    await writeHot('t', { ...cp, plan: [{ ...cp.plan[0], status: 'finished' }, ...cp.plan.slice(1)] });
    const [listed] = await seed.listTasks();
    // The version files stand in for the bad hot snapshot, which is reported.
    expect(listed.checkpoint?.version).toBe(1);
    expect(listed.problems.map((p) => [p.file, p.reason])).toEqual([['t/checkpoint.json', 'schema']]);
    expect(listed.problems[0].message).toContain('plan[0].status: expected one of');
    expect((await seed.getTask('t'))?.problems).toEqual(listed.problems);
    // With no version to stand in, the task is listed unreadable.
    await fs.rm(path.join(root, 't', 'versions'), { recursive: true });
    const [alone] = await seed.listTasks();
    expect([alone.checkpoint, alone.problems.map((p) => [p.reason, p.severity])]).toEqual([null, [['schema', 'error']]]);
  });

  it('shows a checkpoint whose summary fields are sound, and leaves the rest to opening the task', async () => {
    const seed = openStore(root);
    const cp = (await seed.create(makeCheckpoint('t'))).checkpoint;
    await writeHot('t', { ...cp, phase: 'by hand', run: { ...cp.run, llm_calls: 'many' } });
    const [listed] = await seed.listTasks();
    expect([listed.checkpoint?.phase, listed.problems]).toEqual(['by hand', []]);
    const opened = await seed.getTask('t');
    expect(opened?.checkpoint?.phase).toBe('start');
    expect(opened?.problems.map((p) => p.message).join()).toContain('run.llm_calls: expected array');
  });

  it('reads no further when a folder holds neither a hot snapshot nor versions', async () => {
    await fs.mkdir(path.join(root, 'empty'));
    const rec = recordingFs();
    expect(await openStore(root, { fs: rec.fs }).listTasks()).toEqual([]);
    expect(rec.calls.sort()).toEqual(['readdir .', 'readdir empty']);
    expect(rec.thrown).toEqual([]);
  });
});

/** nodeFs whose synchronous reads record each call as `method path-relative-to-root`. */
function recordingSyncFs(): { fs: StoreFs; calls: string[] } {
  const calls: string[] = [];
  const sync = syncReadsOf(nodeFs)!;
  const rel = (p: string) => path.relative(root, p).split(path.sep).join('/') || '.';
  const wrap =
    <A extends unknown[], R>(name: string, fn: (p: string, ...rest: A) => R) =>
    (p: string, ...rest: A): R => {
      calls.push(`${name} ${rel(p)}`);
      return fn(p, ...rest);
    };
  const syncReads: SyncStoreReads = {
    ...sync,
    readWholeFile: wrap('read', sync.readWholeFile),
    readdir: wrap('readdir', sync.readdir),
    readdirNames: wrap('readdir', sync.readdirNames),
    stat: wrap('stat', sync.stat),
    lstat: wrap('lstat', sync.lstat),
    exists: wrap('exists', sync.exists),
  };
  return { calls, fs: { ...nodeFs, syncReads } };
}

describe('listing through synchronous reads', () => {
  it('opens each hot snapshot outright and looks up a newer version and a lease: no readdir of a task folder', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('a'));
    await seed.create(makeCheckpoint('b'));
    await fs.mkdir(path.join(root, 'b', 'lease'));
    const rec = recordingSyncFs();
    const tasks = await openStore(root, { fs: rec.fs }).listTasks();
    expect(tasks.map((t) => [t.task_id, t.checkpoint?.version, t.has_lease, t.problems])).toEqual([
      ['a', 1, false, []],
      ['b', 1, true, []],
    ]);
    expect(rec.calls.filter((c) => c !== 'readdir .').sort()).toEqual([
      'exists a/lease',
      'exists a/versions/00000002.json',
      'exists b/lease',
      'exists b/versions/00000002.json',
      // Whether versions/ holds the version the hot snapshot names is the file checks' (fileProblems) to say.
      'read a/checkpoint.json',
      'read b/checkpoint.json',
    ]);
  });

  it('lists every case of the bad-checkpoint corpus as the asynchronous calls do', async () => {
    const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/bad-checkpoints/root');
    const opts = { maxFileBytes: 64 * 1024 };
    const viaSync = await openStore(corpus, opts).listTasks();
    const viaAsync = await openStore(corpus, { ...opts, fs: { ...nodeFs, syncReads: undefined } }).listTasks();
    expect(viaSync.length).toBeGreaterThan(10);
    expect(viaSync).toEqual(viaAsync);
  });

  it('lists a folder with versions but no hot snapshot, and skips one with neither, as the asynchronous calls do', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('cold'));
    await fs.rm(path.join(root, 'cold', 'checkpoint.json'));
    await fs.mkdir(path.join(root, 'empty'));
    const viaSync = await openStore(root).listTasks();
    expect(viaSync.map((t) => [t.task_id, t.checkpoint?.version])).toEqual([['cold', 1]]);
    expect(viaSync).toEqual(await openStore(root, { fs: { ...nodeFs, syncReads: undefined } }).listTasks());
  });

  it('goes through a StoreFs whose read call was replaced, so injected faults still reach the listing', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('ok'));
    await seed.create(makeCheckpoint('bad'));
    const faulty: StoreFs = {
      ...nodeFs,
      readWholeFile: (p, o) =>
        p.includes(`${path.sep}bad${path.sep}`)
          ? Promise.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' }))
          : nodeFs.readWholeFile(p, o),
    };
    const tasks = await openStore(root, { fs: faulty }).listTasks();
    expect(tasks.find((t) => t.task_id === 'ok')?.problems).toEqual([]);
    expect(tasks.find((t) => t.task_id === 'bad')?.problems.map((p) => [p.file, p.reason])).toContainEqual([
      'bad/checkpoint.json',
      'unreadable',
    ]);
  });

  it('lets the event loop run between slices of a long listing', async () => {
    const count = await writeThreeSlicesOfTasks();
    // A loop of setImmediate turns runs beside the listing; each hot-snapshot read notes the turn it ran in.
    let turn = 0;
    let done = false;
    const tick = () => {
      turn++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const sync = syncReadsOf(nodeFs)!;
    const readTurns = new Set<number>();
    const noting: StoreFs = {
      ...nodeFs,
      syncReads: {
        ...sync,
        readWholeFile: (p, o) => {
          readTurns.add(turn);
          return sync.readWholeFile(p, o);
        },
      },
    };
    const tasks = await openStore(root, { fs: noting }).listTasks();
    done = true;
    expect(tasks.length).toBe(count);
    expect(tasks.every((t) => t.problems.length === 0)).toBe(true);
    // Three slices, each read within one turn, with the event loop let run between them.
    expect(readTurns.size).toBe(3);
  });

  it('hands each slice of entries to keep as it is read, and answers what keep made, in task id order, each id once', async () => {
    const count = await writeThreeSlicesOfTasks();
    // A root checkpoint.json in the second article's format, under the id of a native task: the listing shows the native one.
    await fs.writeFile(path.join(root, 'checkpoint.json'), JSON.stringify({ ...SECOND_ARTICLE_CHECKPOINT_JSON, task_id: 't-0007' }));
    const store = openStore(root);
    const handed: number[] = [];
    const kept = await store.listTasks((entries) => {
      handed.push(entries.length);
      return entries.map((e) => `${e.task_id} ${e.format} v${e.checkpoint?.version ?? '-'}`);
    });
    // Every entry read went through keep, the shadowed one included, a slice at a time.
    expect(handed).toEqual([SYNC_SLICE, SYNC_SLICE, 2]);
    const listed = await store.listTasks();
    expect(listed).toHaveLength(count);
    expect(kept).toEqual(listed.map((e) => `${e.task_id} ${e.format} v${e.checkpoint?.version ?? '-'}`));
    expect(kept.filter((k) => k.startsWith('t-0007 '))).toEqual(['t-0007 waystation v1']);
  });

  it('answers what keep made through a StoreFs without synchronous reads too', async () => {
    await writeThreeSlicesOfTasks();
    const { syncReads: _sync, ...asyncOnly } = nodeFs;
    const store = openStore(root, { fs: asyncOnly });
    const kept = await store.listTasks((entries) => entries.map((e) => e.task_id));
    expect(kept).toEqual((await openStore(root).listTasks()).map((e) => e.task_id));
  });
});

describe('readVersion', () => {
  it('rebuilds a version from the version files alone, never reading the hot snapshot', async () => {
    const seed = openStore(root);
    let cp = (await seed.create(makeCheckpoint('t'))).checkpoint;
    for (const phase of ['two', 'three'])
      cp = (await seed.save('t', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase } })).checkpoint;
    // A torn hot snapshot does not matter to a version that is on disk whole.
    await fs.writeFile(path.join(root, 't', 'checkpoint.json'), '{"torn');
    const rec = recordingFs();
    const v2 = await openStore(root, { fs: rec.fs }).readVersion('t', 2);
    expect(v2.phase).toBe('two');
    expect(rec.calls.filter((c) => c.startsWith('read ')).sort()).toEqual([
      'read t/versions/00000001.json',
      'read t/versions/00000002.json',
    ]);
  });

  it('still answers for a version it cannot find the way opening the task would', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('t'));
    const err = await seed.readVersion('t', 5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskReadError);
    expect((err as TaskReadError).problems[0].reason).toBe('missing-version');
    await expect(seed.readVersion('nope', 1)).rejects.toBeInstanceOf(TaskReadError);
  });

  it('reports a version file that is there but broken', async () => {
    const seed = openStore(root);
    await seed.create(makeCheckpoint('t'));
    await fs.writeFile(path.join(root, 't', 'versions', '00000001.json'), '{"format":"waystation-version"');
    const err = await seed.readVersion('t', 1).catch((e: unknown) => e);
    expect((err as TaskReadError).problems.map((p) => p.reason)).toEqual(['truncated']);
  });
});
