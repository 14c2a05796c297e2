/**
 * Disk and file-system faults: ENOSPC, EACCES and EIO injected through the
 * StoreFs double, on writes and on reads, at a random call.
 *
 * Store level (saves with one file per version, and saves under the lease
 * appended to a segment): a failed save is a clear StoreWriteError (which
 * file, which code, that the previous version is intact) and leaves the
 * bytes on disk as they were; a fault after the commit point keeps the version and says so;
 * a read fault is a typed problem, never a crash; once the fault is gone the
 * next save works. Runtime level: checkpoint-demo driven in this process over
 * a disk that fails and stays failing; once the fault is cleared the task
 * resumes to the same result as an undisturbed run, with no done step rerun.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkpointDemo } from '../../../electron/agents/checkpoint-demo.js';
import { OfflineProvider } from '../../../electron/llm/offline-provider.js';
import { resumeTask, startTask, type OperationEnv } from '../../../electron/runtime/task-operations.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { isTempName } from '../../../electron/store/atomic-file.js';
import { recoveryReport } from '../../../electron/store/recovery-report.js';
import { StoreWriteError, TaskReadError } from '../../../electron/store/store-types.js';
import { makeCheckpoint, withoutVersion } from '../../electron/store/store-test-helpers.js';
import { FaultyFs, type FaultCode, type FaultGroup } from '../lib/faulty-fs.js';
import { doneStepsRunAgain, finalResults } from '../lib/task-audit.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';
import { hashTree } from '../../support/hash-tree.js';

const CODES: FaultCode[] = ['ENOSPC', 'EACCES', 'EIO'];
/** Long enough that replacing it by `<task>` in the results touches nothing else. */
const TASK = 'faulted-task';

const CHECKS = [
  'unclear error',
  'failed save left something on disk',
  'temp file left and not accounted for',
  'previous version damaged',
  'saved version unreadable',
  'reader crashed',
  'save failed after the fault was gone',
  'task did not resume after the fault was gone',
  'done step executed again',
  'final result differs from an undisturbed run',
] as const;

const same = (a: Record<string, string>, b: Record<string, string>) => JSON.stringify(a) === JSON.stringify(b);

/** The tree without temp files of interrupted writes, which readers never read. */
const withoutTemps = (tree: Record<string, string>) =>
  Object.fromEntries(Object.entries(tree).filter(([f]) => !isTempName(path.basename(f))));

/** Temp files in `after` that were not in `before`, relative to the root with forward slashes. */
const newTemps = (before: Record<string, string>, after: Record<string, string>) =>
  Object.keys(after)
    .filter((f) => isTempName(path.basename(f)) && !(f in before))
    .map((f) => f.split(path.sep).join('/'));

/** Faults on store writes and reads, and on a running task. */
export async function diskFaults(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('disk faults (ENOSPC, EACCES, EIO)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-disk-'));
  const savedSkip = process.env.SKIP_FAILURE;
  try {
    // The reference: the demo undisturbed, in this process.
    process.env.SKIP_FAILURE = '1';
    const refRoot = path.join(base, 'reference');
    await fs.mkdir(refRoot);
    await startTask(envFor(refRoot, openStore(refRoot)), checkpointDemo, { taskId: 'reference-task' });
    const expected = await finalResults(refRoot, 'reference-task');

    for (let i = 0; i < opts.runs; i++) {
      const root = path.join(base, `run-${i}`);
      await fs.mkdir(root);
      const code = CODES[pick(random, CODES.length)];
      const where = `run ${i} (seed ${opts.seed})`;
      try {
        if (i % 3 === 2) await runtimeFault(root, code, pick(random, 90), tally, expected, `${where}, ${code}`);
        else {
          const underLease = random() < 0.5;
          // An append is a handful of write calls, a save of its own file two dozen.
          await storeFault(
            root,
            code,
            random() < 0.7 ? 'write' : 'read',
            pick(random, underLease ? 8 : 24),
            tally,
            `${where}, ${code}`,
            underLease,
          );
        }
      } catch (err) {
        tally.violation('reader crashed', `${where}: the harness failed: ${messageOf(err)}`);
      }
      tally.runs++;
      await fs.rm(root, { recursive: true, force: true });
      if ((i + 1) % 200 === 0) opts.log(`disk faults: ${i + 1}/${opts.runs}, ${tally.faults} faults, ${tally.total} violations`);
    }
  } finally {
    if (savedSkip === undefined) delete process.env.SKIP_FAILURE;
    else process.env.SKIP_FAILURE = savedSkip;
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

function envFor(root: string, store: ReturnType<typeof openStore>): OperationEnv {
  return { store, root, llm: new OfflineProvider(0), env: { ...process.env, SKIP_FAILURE: '1' }, report: () => {} };
}

async function storeFault(
  root: string,
  code: FaultCode,
  group: FaultGroup,
  nth: number,
  tally: Tally,
  where: string,
  underLease: boolean,
): Promise<void> {
  const good = openStore(root);
  let cp = (await good.create(makeCheckpoint('t', 4))).checkpoint;
  const faulty = new FaultyFs({ group, nth, code, persistent: false }, !underLease);
  const bad = openStore(root, { fs: faulty });
  const lease = underLease ? { taskId: 't', held: true, generation: 1 } : undefined;
  // Under the lease, version 2 starts the segment that version 3 is appended to, in the store that meets the fault.
  const writer = underLease ? bad : good;
  cp = (
    await writer.save('t', {
      expectedVersion: 1,
      checkpoint: { ...withoutVersion(cp), phase: 'two' },
      results: { s1: { n: 1 } },
      appendHistory: [{ role: 'user', content: 'one' }],
      lease,
    })
  ).checkpoint;
  const before = await hashTree(root);
  faulty.arm();
  where = `${where}, ${group} call ${nth}${underLease ? ', under the lease' : ''}`;

  if (group === 'read') {
    // Every reader, through the faulty disk: each answers with the task (perhaps with problems) or a typed error.
    const readers: [string, () => Promise<unknown>][] = [
      ['listTasks', () => bad.listTasks()],
      ['getTask', () => bad.getTask('t')],
      ['history', () => bad.history('t')],
      ['readVersion', () => bad.readVersion('t', 1)],
      ['readHistory', () => bad.readHistory('t')],
    ];
    for (const [name, read] of readers) {
      try {
        const value = await read();
        if (name === 'getTask') {
          const entry = value as Awaited<ReturnType<typeof bad.getTask>>;
          // The task is there: a read fault may make it unreadable, never make it vanish.
          if (entry === null) tally.violation('unclear error', `${where}: getTask answered that there is no task t`);
          if (faulty.injected > 0 && entry?.checkpoint && entry.checkpoint.version !== 2 && entry.problems.length === 0) {
            tally.violation('unclear error', `${where}: getTask showed version ${entry.checkpoint.version} with no problem`);
          }
        }
      } catch (err) {
        const typed = err instanceof TaskReadError || (err as { code?: string }).code === code;
        if (!typed || !messageOf(err).includes(code)) tally.violation('reader crashed', `${where}: ${name} threw ${messageOf(err)}`);
      }
    }
    if (faulty.injected > 0) tally.faults += faulty.injected;
    if (!same(before, await hashTree(root))) tally.violation('previous version damaged', `${where}: a read changed the bytes on disk`);
    return;
  }

  let saved: Awaited<ReturnType<typeof bad.save>> | null = null;
  try {
    saved = await bad.save('t', {
      expectedVersion: 2,
      checkpoint: { ...withoutVersion(cp), phase: 'three' },
      results: { s2: { n: 2 } },
      appendHistory: [{ role: 'user', content: 'two' }],
      lease,
    });
  } catch (err) {
    if (faulty.injected === 0) throw err;
    const ok =
      err instanceof StoreWriteError &&
      err.message.includes(code) &&
      /version 2 is intact/.test(err.message) &&
      err.problems.every((p) => p.file.length > 0);
    if (!ok) tally.violation('unclear error', `${where} (${faulty.firstFault}): ${messageOf(err)}`);
    const after = await hashTree(root);
    if (!same(withoutTemps(before), withoutTemps(after)))
      tally.violation('failed save left something on disk', `${where} (${faulty.firstFault}): the files on disk changed`);
    // A temp file the failed save could not remove (its unlink failed too) is harmless, but must be accounted for.
    const left = newTemps(before, after);
    if (left.length > 0) {
      tally.bump('temp files a failed save could not remove');
      const listed = (await recoveryReport(root, 't')).leftover_temp_files.map((l) => l.file);
      const unlisted = left.filter((f) => !listed.includes(f));
      if (unlisted.length > 0)
        tally.violation(
          'temp file left and not accounted for',
          `${where} (${faulty.firstFault}): ${unlisted.join(', ')} not in the recovery report`,
        );
    }
  }
  if (faulty.injected > 0) tally.faults += faulty.injected;
  if (faulty.injected > 0 && underLease) tally.bump('write faults met by a save appended under the lease');
  const entry = await openStore(root).getTask('t');
  if (saved) {
    if (faulty.injected > 0)
      tally.bump(saved.warnings?.length ? 'faults after the commit point, reported as warnings' : 'faults absorbed without effect');
    if (entry?.checkpoint?.version !== 3 || entry.checkpoint.phase !== 'three') {
      tally.violation(
        'saved version unreadable',
        `${where} (${faulty.firstFault}): the save returned version 3, the disk shows ${entry?.checkpoint?.version}`,
      );
    }
  } else if (entry?.checkpoint?.version !== 2 || entry.problems.length > 0) {
    tally.violation(
      'previous version damaged',
      `${where} (${faulty.firstFault}): after the failed save the task shows ${entry?.checkpoint?.version} with ${entry?.problems.length} problems`,
    );
  }
  // The fault is gone: the same store instance carries on.
  faulty.clear();
  const at = entry?.checkpoint;
  if (!at) return;
  try {
    const next = await bad.save('t', {
      expectedVersion: at.version,
      checkpoint: { ...withoutVersion(at), phase: 'after' },
      results: { s3: { n: 3 } },
      lease,
    });
    if (next.checkpoint.version !== at.version + 1)
      tally.violation('save failed after the fault was gone', `${where}: saved as ${next.checkpoint.version}`);
  } catch (err) {
    tally.violation('save failed after the fault was gone', `${where} (${faulty.firstFault}): ${messageOf(err)}`);
  }
}

async function runtimeFault(root: string, code: FaultCode, nth: number, tally: Tally, expected: string, where: string): Promise<void> {
  const faulty = new FaultyFs({ group: 'write', nth, code, persistent: true });
  where = `${where}, the task's write call ${nth} on`;
  let outcome = null;
  try {
    outcome = await startTask(envFor(root, openStore(root, { fs: faulty })), checkpointDemo, { taskId: TASK });
  } catch (err) {
    if (faulty.injected === 0) throw err;
    if (!/ENOSPC|EACCES|EIO/.test(messageOf(err))) tally.violation('unclear error', `${where}: the run stopped with ${messageOf(err)}`);
  }
  if (faulty.injected > 0) tally.faults++;
  faulty.clear();
  if (outcome?.status !== 'done') {
    const entry = await openStore(root).getTask(TASK);
    try {
      if (!entry?.checkpoint) await startTask(envFor(root, openStore(root)), checkpointDemo, { taskId: TASK });
      else await resumeTask(envFor(root, openStore(root)), checkpointDemo, TASK, { trigger: 'human' });
    } catch (err) {
      tally.violation('task did not resume after the fault was gone', `${where} (${faulty.firstFault}): ${messageOf(err)}`);
      return;
    }
  }
  const cp = (await openStore(root).getTask(TASK))?.checkpoint;
  if (cp?.status !== 'done') {
    tally.violation('task did not resume after the fault was gone', `${where} (${faulty.firstFault}): the task is ${cp?.status}`);
    return;
  }
  for (const v of await doneStepsRunAgain(root, TASK)) tally.violation('done step executed again', `${where} (${faulty.firstFault}): ${v}`);
  if ((await finalResults(root, TASK)) !== expected)
    tally.violation('final result differs from an undisturbed run', `${where} (${faulty.firstFault})`);
}
