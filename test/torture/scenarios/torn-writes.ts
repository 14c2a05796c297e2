/**
 * Torn writes: a power cut at a random write of a store saving versions.
 *
 * The store writes through a PowerCutFs; at the cut, a copy of the folder is
 * built as the disk may hold it after restart (un-fsynced data truncated or
 * dropped, un-fsynced renames and links undone, each at random), opened with
 * a fresh store and checked: it reads as exactly a version that was written,
 * at least the last one whose save returned, with a contiguous history; the
 * recovery report accounts for what was lost, and `waystation verify` prints
 * that account; and a new save continues.
 *
 * Half the cuts fall on saves made under the task's lease, which append their
 * versions to segments (a record cut short at the end of a file, checkpoint.json
 * behind by design), and are then let go (`settle`) or not.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../../../electron/store/directory-store.js';
import { runCli } from '../../../electron/cli/main.js';
import { hasRecoveryNews, recoveryReport } from '../../../electron/store/recovery-report.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import type { SaveLease } from '../../../electron/store/store-types.js';
import { versionFileName } from '../../../electron/store/version-file.js';
import { parseSegment } from '../../../electron/store/version-records.js';
import { loopedSave, makeCheckpoint } from '../../electron/store/store-test-helpers.js';
import { PowerCutFs } from '../lib/power-cut-fs.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { messageOf, pick, Tally, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

const TASK = 'torn';
const PLAN = 12;
/** Images built from each cut: the same cut can leave the disk in many states. */
const IMAGES_PER_CUT = 4;

const CHECKS = [
  'durable version lost',
  'state that was never written',
  'history not contiguous',
  'unexpected problem on the recovered task',
  'loss not accounted for',
  'loss not shown by waystation verify',
  'next save failed',
] as const;

/** What the driver asks the store to hold at version v (v >= 2); version 1 is makeCheckpoint's. */
function requestFor(cp: Checkpoint, v: number) {
  return loopedSave(cp, v, PLAN, 200 + ((v * 37) % 300));
}

/** Check that version v, as read back, is what the driver wrote at v; a description of the difference otherwise. */
async function differsFromWritten(store: ReturnType<typeof openStore>, v: number): Promise<string | null> {
  const cp = await store.readVersion(TASK, v);
  const phase = v === 1 ? 'start' : `phase ${v}`;
  if (cp.phase !== phase) return `version ${v} has phase ${JSON.stringify(cp.phase)}, written as ${JSON.stringify(phase)}`;
  const history = await store.readHistory(TASK, v);
  const expected = Array.from({ length: v - 1 }, (_, i) => `m${i + 2}`);
  if (JSON.stringify(history.map((m) => m.content)) !== JSON.stringify(expected))
    return `version ${v}'s history is ${history.length} messages, not the ${expected.length} written`;
  if (v > 1) {
    const ref = cp.plan[v % PLAN].result_ref;
    const result = ref ? ((await store.readBlob(TASK, ref)) as { version?: number }) : null;
    if (result?.version !== v) return `version ${v}'s result names version ${result?.version}`;
  }
  return null;
}

/** Power cuts at random writes, each turned into several recovered disks and checked. */
export async function tornWrites(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('torn writes (power cut)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-torn-'));
  const cuts = Math.max(1, Math.ceil(opts.runs / IMAGES_PER_CUT));
  try {
    for (let c = 0; c < cuts; c++) {
      const live = path.join(base, `live-${c}`);
      await fs.mkdir(live);
      const lease = random() < 0.5 ? { taskId: TASK, held: true, generation: 1 } : undefined;
      // Under the lease, enough saves to fill a segment and start the next.
      const saves = 1 + pick(random, lease ? 40 : 10);
      // About 20 writes a save of its own file, 3 an append: the cut lands anywhere from the task's creation to
      // after the last save.
      const pfs = new PowerCutFs(live, pick(random, (lease ? 5 : 20) * (saves + 1) + 10));
      const store = openStore(live, { fs: pfs });
      let lastDurable = 0;
      let lastAttempted = 1;
      try {
        let cp = (await store.create(makeCheckpoint(TASK, PLAN))).checkpoint;
        // A save that was under way when the power went is not durable, whatever it returned: its process is gone.
        if (!pfs.powerCut) lastDurable = 1;
        for (let v = 2; v <= saves + 1 && !pfs.powerCut; v++) {
          lastAttempted = v;
          cp = (await store.save(TASK, { ...requestFor(cp, v), lease })).checkpoint;
          if (!pfs.powerCut) lastDurable = v;
        }
        if (lease && random() < 0.5) await store.settle(TASK);
      } catch {
        // The cut, surfacing as an error of the save under way.
      }
      if (!pfs.powerCut) pfs.cutNow();
      tally.faults++;

      for (let k = 0; k < IMAGES_PER_CUT && tally.runs < opts.runs; k++) {
        tally.runs++;
        const image = path.join(base, `image-${c}-${k}`);
        await fs.mkdir(image);
        await pfs.materialize(image, random);
        const mode = lease ? ', under the lease' : '';
        await checkImage(
          image,
          lastDurable,
          lastAttempted,
          lease,
          tally,
          `cut ${c} image ${k} (writes ${pfs.writes}, durable ${lastDurable}, attempted ${lastAttempted}${mode})`,
        );
        await fs.rm(image, { recursive: true, force: true });
      }
      tally.figures['entries undone or kept at random'] = pfs.undone + Number(tally.figures['entries undone or kept at random'] ?? 0);
      await fs.rm(live, { recursive: true, force: true });
      if ((c + 1) % 100 === 0) opts.log(`torn writes: ${c + 1}/${cuts} cuts, ${tally.total} violations`);
    }
  } finally {
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

async function checkImage(
  image: string,
  lastDurable: number,
  lastAttempted: number,
  lease: SaveLease | undefined,
  tally: Tally,
  where: string,
): Promise<void> {
  const store = openStore(image);
  const entry = await store.getTask(TASK);
  const report = await recoveryReport(image, TASK);
  const latest = entry?.checkpoint?.version ?? 0;
  if (latest < lastDurable) tally.violation('durable version lost', `${where}: recovered to version ${latest}`);
  if (latest > lastAttempted) tally.violation('state that was never written', `${where}: version ${latest} was never saved`);
  if (entry && entry.problems.some((p) => p.severity === 'error') && lastDurable > 0) {
    tally.violation(
      'unexpected problem on the recovered task',
      `${where}: ${entry.problems.map((p) => `${p.file}: ${p.message}`).join('; ')}`,
    );
  }
  if (report.latest_version !== latest) {
    tally.violation(
      'loss not accounted for',
      `${where}: the recovery report says version ${report.latest_version}, the task shows ${latest}`,
    );
  }
  // A save interrupted before its commit point may leave a temp file naming its version: the report must say so.
  const leftover = (await fs.readdir(path.join(image, TASK, 'versions')).catch(() => [] as string[]))
    .map((n) => /^\.(\d{8})\.json\..*\.tmp$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .filter((v) => v > latest);
  for (const v of leftover) {
    if (!report.interrupted_versions.includes(v) || !report.account.some((line) => line.includes(`version ${v} was interrupted`))) {
      tally.violation('loss not accounted for', `${where}: a temp file of version ${v} remains and the recovery report does not name it`);
    }
  }
  // A record cut short at the end of a segment is a save interrupted before its commit point too.
  const files = (await fs.readdir(path.join(image, TASK, 'versions')).catch(() => [] as string[]))
    .filter((n) => /^\d{8}\.json$/.test(n))
    .sort();
  const newestFile = files.at(-1);
  const segment = newestFile
    ? parseSegment(await fs.readFile(path.join(image, TASK, 'versions', newestFile)), Number(newestFile.slice(0, 8)))
    : null;
  if (segment?.tail === 'torn' && segment.tailVersion! > latest && !report.interrupted_versions.includes(segment.tailVersion!)) {
    tally.violation(
      'loss not accounted for',
      `${where}: version ${segment.tailVersion} was cut short at the end of ${newestFile} and the recovery report does not name it`,
    );
  }
  if (segment?.tail === 'torn') tally.bump('images with a record cut short');
  // Behind while a segment fills is the design (the versions after it are in versions/<hot + 1>), not a loss.
  const lagsBySegment =
    report.hot_version !== null &&
    files.includes(versionFileName(report.hot_version + 1)) &&
    (await isSealed(image, report.hot_version + 1));
  if (lagsBySegment) tally.bump('images with checkpoint.json behind a segment');
  else if (
    report.hot_version !== null &&
    report.hot_version !== latest &&
    !report.account.some((line) => line.startsWith('checkpoint.json'))
  ) {
    tally.violation(
      'loss not accounted for',
      `${where}: checkpoint.json holds version ${report.hot_version}, the task ${latest}, and the report is silent`,
    );
  }
  bumpAccount(tally, report);
  // A cut before the task folder held anything leaves no task for verify to name.
  if (entry) await checkVerifyShows(image, report, tally, where);
  if (!entry?.checkpoint) return;

  const history = await store.history(TASK);
  const numbers = history.map((h) => h.version);
  if (numbers.join() !== Array.from({ length: latest }, (_, i) => i + 1).join()) {
    tally.violation('history not contiguous', `${where}: versions ${numbers.join(',')} for a task at version ${latest}`);
  }
  for (const v of numbers) {
    try {
      const diff = await differsFromWritten(store, v);
      if (diff) tally.violation('state that was never written', `${where}: ${diff}`);
    } catch (err) {
      tally.violation('state that was never written', `${where}: version ${v} cannot be read back: ${messageOf(err)}`);
    }
  }
  if (JSON.stringify(entry.checkpoint) !== JSON.stringify(await store.readVersion(TASK, latest).catch(() => null))) {
    tally.violation('state that was never written', `${where}: the task shows a version ${latest} that differs from versions/${latest}`);
  }

  try {
    const next = await openStore(image).save(TASK, { ...requestFor(entry.checkpoint, latest + 1), lease });
    const diff = await differsFromWritten(openStore(image), latest + 1);
    if (next.checkpoint.version !== latest + 1 || diff)
      tally.violation('next save failed', `${where}: ${diff ?? `saved as version ${next.checkpoint.version}`}`);
  } catch (err) {
    tally.violation('next save failed', `${where}: ${messageOf(err)}`);
  }
}

/** True when version `first`'s file holds sealed records (a segment). */
async function isSealed(image: string, first: number): Promise<boolean> {
  return parseSegment(await fs.readFile(path.join(image, TASK, 'versions', versionFileName(first))), first, false).sealed;
}

/** `waystation verify` prints the account when there is one (in its JSON, or after its refusal), and only then. */
async function checkVerifyShows(
  image: string,
  report: Awaited<ReturnType<typeof recoveryReport>>,
  tally: Tally,
  where: string,
): Promise<void> {
  let out = '';
  let err = '';
  await runCli(['verify', image, TASK, '--json'], { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  const news = hasRecoveryNews(report);
  if (out === '') {
    // Refused: nothing reads whole, and the account follows the problems.
    if (news && !report.account.every((line) => err.includes(line)))
      tally.violation('loss not shown by waystation verify', `${where}: the refusal omits the account: ${err.trim()}`);
    return;
  }
  const shown = (JSON.parse(out) as { recovery?: { account: string[] } }).recovery?.account;
  if (news && JSON.stringify(shown) !== JSON.stringify(report.account)) {
    tally.violation(
      'loss not shown by waystation verify',
      `${where}: verify --json says ${JSON.stringify(shown)}, the report ${JSON.stringify(report.account)}`,
    );
  }
  if (!news && shown)
    tally.violation('loss not shown by waystation verify', `${where}: verify reports a loss where none is: ${JSON.stringify(shown)}`);
  if (news) tally.bump('images whose loss verify printed');
}

function bumpAccount(tally: Tally, report: Awaited<ReturnType<typeof recoveryReport>>): void {
  if (report.interrupted_versions.length > 0) tally.bump('images with an interrupted save named');
  if (report.hot_version !== null && report.hot_version < report.latest_version) tally.bump('images with checkpoint.json behind');
  if (report.events_behind > 0) tally.bump('images whose event log lost lines');
}
