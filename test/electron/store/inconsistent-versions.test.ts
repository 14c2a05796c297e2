/**
 * Version numbers that contradict each other: a checkpoint.json that claims a
 * version no file holds, and a version file that holds another version than
 * its name. Every reader reports them, and the next save follows the newest
 * version that reads, never a file that does not exist.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../electron/cli/main.js';
import { HostService } from '../../../electron/host/host-service.js';
import type { HostEvent } from '../../../shared/api/contract.js';
import { DEFAULT_MAX_FILE_BYTES, openStore } from '../../../electron/store/directory-store.js';
import { FileCheckThread } from '../../../electron/store/file-check-thread.js';
import { recoveryReport } from '../../../electron/store/recovery-report.js';
import { cleanup, loopedSave, makeCheckpoint, tempRoot, withoutVersion } from './store-test-helpers.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import { nodeFs, type StoreFs } from '../../../electron/store/store-fs.js';

let root: string;
beforeEach(async () => {
  root = await tempRoot();
});
afterEach(() => cleanup(root));

/** A task with ten versions, each a file of its own. */
async function tenVersions(taskId: string): Promise<void> {
  const store = openStore(root);
  let cp = (await store.create(makeCheckpoint(taskId, 3))).checkpoint;
  for (let v = 2; v <= 10; v++) {
    const next = withoutVersion(cp);
    next.phase = `phase ${v}`;
    cp = (await store.save(taskId, { expectedVersion: cp.version, checkpoint: next })).checkpoint;
  }
}

/** As the runtime writes: version 1, then versions 2 to `last` as records of one segment, checkpoint.json at the last. */
async function segmentTask(taskId: string, last: number): Promise<void> {
  const store = openStore(root);
  const lease: SaveLease = { taskId, held: true, generation: 1 };
  let cp = (await store.create(makeCheckpoint(taskId, 5))).checkpoint;
  for (let v = 2; v <= last; v++) cp = (await store.save(taskId, { ...loopedSave(cp, v, 5, 30), lease })).checkpoint;
  await store.settle(taskId);
}

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  return { code, out, err };
}

/**
 * What the inspector shows of task t: its row's problems (once they contain `awaited`, when given: the list
 * is built first and its files checked after, row by row) and its view's.
 */
async function inspector(awaited?: string): Promise<{ listed: string; detail: string; shown: number | undefined; row: number | null }> {
  const service = new HostService({ host: 'web', runner: null });
  try {
    await service.open(root);
    const listed = async () => JSON.stringify((await service.listTasks())[0].problems);
    if (awaited) await expect.poll(listed, { timeout: 15_000 }).toContain(awaited);
    const detail = await service.getTask({ taskId: 't' });
    const row = (await service.listTasks())[0].version;
    return { listed: await listed(), detail: JSON.stringify(detail.problems), shown: detail.checkpoint?.version, row };
  } finally {
    await service.close();
  }
}

describe('inconsistent version numbers', () => {
  it('a checkpoint.json ahead of versions/ is reported by every reader, and the next save follows the newest version file', async () => {
    await tenVersions('t');
    const hot = path.join(root, 't', 'checkpoint.json');
    const doc = JSON.parse(await fs.readFile(hot, 'utf8')) as { version: number };
    doc.version = 15;
    await fs.writeFile(hot, JSON.stringify(doc));

    // A list row is read from checkpoint.json alone; the file checks that follow every listing find that no file
    // holds its version, and the row is then read whole, as the task view reads it: it shows the version the task
    // shows, with that error, so `ls` fails and the task is not shown as healthy, nor as version 15.
    const ls = await cli('ls', root, '--json');
    expect(ls.code).toBe(1);
    const row = (JSON.parse(ls.out) as { version: number; problems: { message: string; severity?: string }[] }[])[0];
    expect(row.version).toBe(10);
    expect(row.problems).toEqual([
      expect.objectContaining({ message: expect.stringContaining('claims version 15, which no file in versions/ holds') }),
    ]);
    expect(row.problems[0].severity ?? 'error').toBe('error');
    const history = await cli('history', root, 't');
    expect(history.code).toBe(1);
    expect(history.err).toContain('claims version 15');
    const verify = await cli('verify', root, 't');
    expect(verify.out + verify.err).toContain('claims version 15');
    // Opening the task shows the newest version that reads.
    const seen = await inspector('claims version 15');
    expect(seen.shown).toBe(10);
    // Its row too, once the file checks found the error: not a row of version 15 beside a view of version 10.
    expect(seen.row).toBe(10);
    expect(seen.listed).toContain('claims version 15');
    expect(seen.detail).toContain('claims version 15');

    // The edit follows version 10 and writes 11: no file of version 15 is ever named.
    const edit = await cli('edit', root, 't', 's1', '--value', '{"edited":true}');
    expect(edit.err).not.toContain('00000015');
    expect(edit.code).toBe(0);
    const after = await openStore(root).getTask('t');
    expect(after?.checkpoint?.version).toBe(11);
    expect(after?.problems).toEqual([]);
  });

  it('a task saved under the lease lists clean, and its checkpoint.json claiming past its segment is reported by the file checks', async () => {
    await segmentTask('s', 12);
    expect(await fs.readdir(path.join(root, 's', 'versions'))).toEqual(expect.arrayContaining(['00000001.json', '00000002.json']));
    expect(await fs.readdir(path.join(root, 's', 'versions'))).not.toContain('00000012.json');
    const clean = await openStore(root).listTasks();
    expect(clean.map((t) => [t.task_id, t.checkpoint?.version])).toEqual([['s', 12]]);
    // The segment is the newest file: its ends say it holds version 12, and the look at its head for a misnumbered
    // file uses what that read found. One open of it.
    const opened: string[] = [];
    const counting: StoreFs = {
      ...nodeFs,
      syncReads: undefined,
      open: (p, flags, mode) => {
        opened.push(path.relative(root, p));
        return nodeFs.open(p, flags, mode);
      },
    };
    expect(await openStore(root, { fs: counting, fileCheckThread: false }).fileProblems(clean)).toEqual([[]]);
    expect(opened).toEqual([path.join('s', 'versions', '00000002.json')]);

    for (const claimed of [13, 30]) {
      const hot = path.join(root, 's', 'checkpoint.json');
      const doc = JSON.parse(await fs.readFile(hot, 'utf8')) as { version: number };
      doc.version = claimed;
      await fs.writeFile(hot, JSON.stringify(doc));
      const listed = await openStore(root).listTasks();
      const [found] = await openStore(root).fileProblems(listed);
      expect(found.map((p) => p.message)).toEqual([
        `checkpoint.json claims version ${claimed}, which no file in versions/ holds (the newest file there is version 2)`,
      ]);
      // Opening the task shows the newest version that reads.
      const opened = await openStore(root).getTask('s');
      expect(opened?.checkpoint?.version).toBe(12);
      expect(JSON.stringify(opened?.problems)).toContain(`claims version ${claimed}`);
    }
  });

  it('a task whose first version file is gone: the listing says so, as opening the task and `history` do', async () => {
    await segmentTask('s', 12);
    await fs.rm(path.join(root, 's', 'versions', '00000001.json'));
    const missing = 'version 1 is missing from the history; later versions stay readable where they are full snapshots';
    const [found] = await openStore(root).fileProblems(await openStore(root).listTasks());
    expect(found.map((p) => [p.file, p.reason, p.message])).toEqual([
      [path.join('s', 'versions', '00000001.json'), 'missing-version', missing],
    ]);
    expect((await openStore(root).getTask('s'))?.problems.map((p) => p.message)).toContain(missing);
    const ls = await cli('ls', root);
    expect(ls.out).toContain(missing);
    const history = await cli('history', root, 's');
    expect(history.err).toContain(missing);
    expect([ls.code, history.code]).toEqual([1, 1]);
  });

  it('a segment cut short before the version checkpoint.json claims: every reader shows the newest whole version, with the error', async () => {
    await segmentTask('t', 8);
    // Cut in the middle of version 6's record: versions 6 to 8, each durable before checkpoint.json named 8, are lost.
    const segment = path.join(root, 't', 'versions', '00000002.json');
    const bytes = await fs.readFile(segment);
    const sixth = bytes.indexOf('{"format":"waystation-version","version":6,');
    await fs.writeFile(segment, bytes.subarray(0, sixth + 40));
    const claim = 'checkpoint.json claims version 8, which no file in versions/ holds whole: version 6: its record was cut short';

    const ls = await cli('ls', root, '--json');
    expect(ls.code).toBe(1);
    const row = (JSON.parse(ls.out) as { version: number; problems: { message: string; severity?: string }[] }[])[0];
    expect(row.version).toBe(5);
    // (The looped saves' own plans break an invariant at version 5, said beside it.)
    const said = row.problems.find((p) => p.message.includes(claim));
    expect(said?.severity ?? 'error').toBe('error');
    const opened = await openStore(root).getTask('t');
    expect(opened?.checkpoint?.version).toBe(5);
    expect(JSON.stringify(opened?.problems)).toContain(claim);
    const history = await cli('history', root, 't');
    expect(history.code).toBe(1);
    expect(history.out).not.toMatch(/^6\s/m);
    const seen = await inspector(claim);
    expect([seen.shown, seen.row]).toEqual([5, 5]);
  });

  it('a version file holding another version is reported by every reader, and the other versions stay listed', async () => {
    await tenVersions('t');
    const versions = path.join(root, 't', 'versions');
    await fs.copyFile(path.join(versions, '00000001.json'), path.join(versions, '00000005.json'));

    // The listing itself reads no version file's head; ls and the inspector's list ask the store for them.
    const ls = await cli('ls', root);
    expect(ls.code).toBe(1);
    expect(ls.out).toContain('t/versions/00000005.json');
    expect(ls.out).toContain('named for version 5 but holds version 1');
    const lsJson = await cli('ls', root, '--json');
    const row = (JSON.parse(lsJson.out) as { version: number; problems: { file: string; severity: string }[] }[])[0];
    expect(row.version).toBe(10);
    expect(row.problems).toEqual([expect.objectContaining({ file: 't/versions/00000005.json', severity: 'error' })]);
    const history = await cli('history', root, 't');
    expect(history.code).toBe(1);
    expect(history.err).toContain('t/versions/00000005.json');
    expect(history.err).toContain('named for version 5 but holds version 1');
    const verify = await cli('verify', root, 't');
    expect(verify.code).not.toBe(0);
    expect(verify.out + verify.err).toContain('named for version 5 but holds version 1');
    const show = await cli('show', root, 't');
    expect(show.out + show.err).toContain('named for version 5 but holds version 1');
    const seen = await inspector('named for version 5 but holds version 1');
    expect(seen.listed).toContain('named for version 5 but holds version 1');
    expect(seen.detail).toContain('named for version 5 but holds version 1');
  });

  it("in a directory of many tasks, checked on a thread of the store, the same files are reported as on the store's own", async () => {
    await tenVersions('t');
    const versions = path.join(root, 't', 'versions');
    await fs.copyFile(path.join(versions, '00000002.json'), path.join(versions, '00000007.json'));
    // More tasks than a check on the store's own thread takes.
    const store = openStore(root);
    for (let i = 0; i < 120; i += 40)
      await Promise.all(Array.from({ length: 40 }, (_, k) => store.create(makeCheckpoint(`u${String(i + k).padStart(3, '0')}`, 1))));
    const listed = await store.listTasks();
    expect(listed.length).toBe(121);
    const threaded = await store.fileProblems(listed);
    const here = await openStore(root, { fileCheckThread: false }).fileProblems(listed);
    await store.close();
    expect(threaded).toEqual(here);
    // The thread itself answers (a store falls back to its own thread when it cannot), and refuses once closed.
    const thread = new FileCheckThread({ root, maxFileBytes: DEFAULT_MAX_FILE_BYTES }, 50);
    expect(await thread.check(listed)).toEqual(here);
    expect(thread.running).toBe(true);
    // Ended once idle, and started again by the next question.
    await expect.poll(() => thread.running, { timeout: 5_000 }).toBe(false);
    expect(await thread.check(listed)).toEqual(here);
    expect(thread.running).toBe(true);
    await thread.close();
    await expect(thread.check(listed)).rejects.toThrow('closed');
    // Questions past the two handed to a thread wait on the store's side, where they can be taken back, the newest first.
    const backlog = new FileCheckThread({ root, maxFileBytes: DEFAULT_MAX_FILE_BYTES });
    const slices = [0, 1, 2, 3, 4].map((k) => listed.slice(k * 25, k * 25 + 25));
    const answers = slices.map((slice) => backlog.check(slice));
    const taken = [backlog.takeBack(), backlog.takeBack(), backlog.takeBack(), backlog.takeBack()];
    expect(taken.map((q) => q?.entries ?? null)).toEqual([slices[4], slices[3], slices[2], null]);
    for (const q of taken) if (q) q.resolve(await openStore(root, { fileCheckThread: false }).fileProblems(q.entries));
    expect(await Promise.all(answers)).toEqual(
      slices.map((slice) => here.slice(listed.indexOf(slice[0]), listed.indexOf(slice[0]) + slice.length)),
    );
    await backlog.close();
    // A store answers on its own thread what is still waiting for its thread once a listing of it ends.
    const helped = openStore(root);
    const takeBack = vi.spyOn(FileCheckThread.prototype, 'takeBack');
    const asked = [0, 1, 2, 3].map(() => helped.fileProblems(listed));
    await helped.listTasks();
    expect(await Promise.all(asked)).toEqual([here, here, here, here]);
    expect(takeBack.mock.results.some((r) => r.value !== null)).toBe(true);
    takeBack.mockRestore();
    await helped.close();
    const flagged = threaded.flatMap((found, i) => found.map((p) => `${listed[i].task_id}: ${p.file}`));
    expect(flagged).toEqual(['t: t/versions/00000007.json']);

    const ls = await cli('ls', root, '--json');
    expect(ls.code).toBe(1);
    const rows = JSON.parse(ls.out) as { task_id: string; problems: { file: string; message: string }[] }[];
    expect(rows.filter((r) => r.problems.length > 0).map((r) => [r.task_id, r.problems.map((p) => p.file)])).toEqual([
      ['t', ['t/versions/00000007.json']],
    ]);
    expect(rows.find((r) => r.task_id === 't')!.problems[0].message).toContain('named for version 7 but holds version 2');
  });

  it('the inspector checks the files of its list once the list is built, and publishes the row that gains a problem', async () => {
    await tenVersions('t');
    await tenVersions('u');
    const versions = path.join(root, 't', 'versions');
    await fs.copyFile(path.join(versions, '00000001.json'), path.join(versions, '00000005.json'));
    const service = new HostService({ host: 'web', runner: null });
    const changed: HostEvent[] = [];
    service.subscribe((e) => {
      if (e.type === 'task-changed') changed.push(e);
    });
    try {
      await service.open(root);
      await expect.poll(() => changed.length, { timeout: 15_000 }).toBe(1);
      const [event] = changed as Extract<HostEvent, { type: 'task-changed' }>[];
      expect(event).toMatchObject({ taskId: 't', version: 10 });
      expect(JSON.stringify(event.summary?.problems)).toContain('named for version 5 but holds version 1');
      const rows = await service.listTasks();
      expect(rows.map((r) => [r.task_id, r.problems.length])).toEqual([
        ['t', 1],
        ['u', 0],
      ]);
    } finally {
      await service.close();
    }
  });

  it('a file copied over an older version while the inspector is open shows in its list at the next change of the task', async () => {
    await tenVersions('t');
    const service = new HostService({ host: 'web', runner: null });
    try {
      await service.open(root);
      expect((await service.listTasks())[0].problems).toEqual([]);
      const versions = path.join(root, 't', 'versions');
      await fs.copyFile(path.join(versions, '00000002.json'), path.join(versions, '00000006.json'));
      // versions/ is not watched (folder-watches.ts): the row is read again when the task's own files change.
      const writer = openStore(root);
      const cp = (await writer.getTask('t'))!.checkpoint!;
      await writer.save('t', { expectedVersion: cp.version, checkpoint: { ...withoutVersion(cp), phase: 'phase 11' } });
      await expect
        .poll(async () => JSON.stringify((await service.listTasks())[0].problems), { timeout: 15_000 })
        .toContain('named for version 6 but holds version 2');
    } finally {
      await service.close();
    }
  });

  it('a newest version file holding another version is passed over like a torn one: reported, moved aside by the next save, which writes that version', async () => {
    await tenVersions('t');
    const versions = path.join(root, 't', 'versions');
    const copied = await fs.readFile(path.join(versions, '00000001.json'));
    await fs.writeFile(path.join(versions, '00000010.json'), copied);

    // Opening the task shows version 9 and says what is wrong with the file of version 10, and what the next save does.
    const history = await cli('history', root, 't');
    expect(history.out + history.err).toContain('named for version 10 but holds version 1');
    const seen = await inspector();
    expect(seen.shown).toBe(9);
    expect(seen.detail).toContain('the next save moves it aside');
    const before = await recoveryReport(root, 't');
    expect(before.latest_version).toBe(9);
    expect(before.account.join('\n')).toContain('t/versions/00000010.json: the file is named for version 10 but holds version 1');

    // The edit follows version 9 and writes version 10 itself; the misnumbered file is kept beside it, never read.
    const edit = await cli('edit', root, 't', 's1', '--value', '{"edited":true}');
    expect(edit.err).toBe('');
    expect(edit.code).toBe(0);
    const names = await fs.readdir(versions);
    const aside = names.filter((n) => n.startsWith('00000010.json.misnumbered-'));
    expect(aside).toHaveLength(1);
    expect(await fs.readFile(path.join(versions, aside[0]))).toEqual(copied);
    const store = openStore(root);
    const after = await store.getTask('t');
    expect(after?.checkpoint?.version).toBe(10);
    expect(after?.problems).toEqual([]);
    expect((await store.readVersion('t', 10)).plan[0].result_ref).not.toBeNull();
    expect((await store.readVersion('t', 9)).phase).toBe('phase 9');
    const report = await recoveryReport(root, 't');
    expect(report.latest_version).toBe(10);
    expect(report.account.join('\n')).toContain(`t/versions/${aside[0]}: a misnumbered file a save moved aside`);
  });

  it('a save through the store moves a misnumbered newest file aside and says so in its warnings', async () => {
    await tenVersions('t');
    const versions = path.join(root, 't', 'versions');
    await fs.copyFile(path.join(versions, '00000003.json'), path.join(versions, '00000011.json'));
    const store = openStore(root);
    const entry = await store.getTask('t');
    expect(entry?.checkpoint?.version).toBe(10);
    const next = withoutVersion(entry!.checkpoint!);
    next.phase = 'after the misnumbered file';
    const saved = await store.save('t', { expectedVersion: 10, checkpoint: next });
    expect(saved.checkpoint.version).toBe(11);
    expect(saved.warnings?.map((w) => w.message).join('\n')).toMatch(
      /was named for version 11 but held another version: it was moved to t\/versions\/00000011\.json\.misnumbered-\d+/,
    );
    const fresh = await openStore(root).getTask('t');
    expect(fresh?.checkpoint?.phase).toBe('after the misnumbered file');
    expect(fresh?.problems).toEqual([]);
  });
});
