/**
 * What a crash or a power cut left behind in one task folder, in words.
 *
 * The versions folder is the record (docs/FORMAT.md): the task recovers to
 * its newest complete version. This report says which version that is, and
 * what did not survive: a save interrupted before its commit point (its temp
 * file in `versions/` names the version it was writing, or its record was cut
 * short at the end of a segment), a hot snapshot left behind, event-log lines
 * lost with the power. It only reads.
 */
import path from 'node:path';
import type { RecoveryReport } from '../../shared/checkpoint/recovery-report.js';
import { isTempName } from './atomic-file.js';
import { BLOBS_DIR } from './blob-store.js';
import { readEventTail } from './event-log.js';
import { relPath, type ReadContext } from './file-reader.js';
import { readVersionBytes } from './segment-compression.js';
import { nodeFs, type StoreFs } from './store-fs.js';
import type { TaskEvent } from './store-types.js';
import { listVersionNumbers, loadVersion, misnumberedFiles, readHot, versionFiles } from './task-reader.js';
import { isAsideName } from './version-heads.js';
import { VERSIONS_DIR, versionPath } from './version-file.js';
import { isSealedHead, parseSegment, type Segment } from './version-records.js';
import { DEFAULT_MAX_FILE_BYTES } from './directory-store.js';

export { hasRecoveryNews, type RecoveryReport } from '../../shared/checkpoint/recovery-report.js';

/** `.00000008.json.<random>.tmp` -> 8. */
const VERSION_TEMP = /^\.(\d{8})\.json\.[0-9a-f]+\.tmp$/;

/**
 * Describe what an interruption left in a native task folder.
 *
 * Reads only; never throws on a bad file (what cannot be read is left out
 * of the figures and said in the account).
 */
export async function recoveryReport(
  root: string,
  taskId: string,
  opts: { fs?: StoreFs; maxFileBytes?: number } = {},
): Promise<RecoveryReport> {
  const fs = opts.fs ?? nodeFs;
  const absRoot = path.resolve(root);
  const realRoot = await fs.realpath(absRoot).catch(() => absRoot);
  const ctx: ReadContext = { fs, root: absRoot, realRoot, maxFileBytes: opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES };
  const taskDir = path.join(absRoot, taskId);
  const account: string[] = [];

  const numbers = await listVersionNumbers(ctx, taskDir);
  let latest = 0;
  for (const v of numbers.slice(-3).reverse()) {
    if ((await loadVersion(ctx, taskDir, v)).ok) {
      latest = v;
      break;
    }
  }
  const newestFile = numbers.at(-1) ?? 0;
  const tail = await segmentTail(ctx, taskDir);

  const hot = await readHot(ctx, taskDir);
  const hotDoc = hot.ok ? (hot.value as { version?: unknown }) : null;
  const hotVersion = hotDoc && Number.isInteger(hotDoc.version) ? (hotDoc.version as number) : null;

  const leftovers: RecoveryReport['leftover_temp_files'] = [];
  const interrupted = new Set<number>();
  for (const dir of [taskDir, path.join(taskDir, VERSIONS_DIR), path.join(taskDir, BLOBS_DIR)]) {
    let entries;
    try {
      entries = await fs.readdir(dir);
    } catch {
      continue;
    }
    for (const e of entries) {
      if (!e.isFile() || !isTempName(e.name)) continue;
      const abs = path.join(dir, e.name);
      const bytes = await fs.stat(abs).then(
        (s) => s.size,
        () => 0,
      );
      leftovers.push({ file: relPath(ctx, abs), bytes });
      const m = VERSION_TEMP.exec(e.name);
      if (m && dir.endsWith(VERSIONS_DIR) && !numbers.includes(Number(m[1]))) interrupted.add(Number(m[1]));
    }
  }

  if (tail?.tail === 'torn' && tail.tailVersion !== undefined) interrupted.add(tail.tailVersion);

  let eventsBehind = 0;
  let torn = 0;
  // From the log's end, back to its newest version event: a log of gigabytes is never read whole.
  const isVersion = (e: TaskEvent) => e.type === 'version' && typeof e.version === 'number';
  const log = await readEventTail(fs, taskDir, (newestFirst) => newestFirst.some(isVersion)).catch(() => null);
  if (log !== null) {
    torn = log.tornBytes;
    const newestEvent = log.newestFirst.reduce((n, e) => (isVersion(e) ? Math.max(n, e.version!) : n), 0);
    eventsBehind = Math.max(0, latest - newestEvent);
  }

  if (latest === 0) {
    account.push(
      numbers.length === 0
        ? `task ${taskId} has no version: it was never saved, or its creation was interrupted`
        : `task ${taskId} has no version that reads whole`,
    );
  } else {
    account.push(`task ${taskId} recovered to version ${latest}, the newest complete version in ${VERSIONS_DIR}/`);
  }
  if (newestFile > latest) account.push(`versions ${latest + 1} to ${newestFile} are on disk but do not read whole; they are not used`);
  // A file named for one version that holds another is passed over like a torn one; the next save moves it aside.
  for (const p of await misnumberedFiles(ctx, taskDir, await versionFiles(ctx, taskDir), latest)) account.push(`${p.file}: ${p.message}`);
  for (const moved of await setAsideFiles(ctx, taskDir)) {
    account.push(
      `${moved}: a misnumbered file a save moved aside (it was named for a version it did not hold); never read, kept for you to look at or delete`,
    );
  }
  if (tail?.tail === 'damaged')
    account.push(`${tail.file}: version ${tail.tailVersion}: ${tail.tailReason}; it and what follows it in that file are not used`);
  for (const v of [...interrupted].sort((a, b) => a - b)) {
    if (v > latest)
      account.push(
        `the save of version ${v} was interrupted before its commit point: nothing of it is used, and the next save writes version ${latest + 1}`,
      );
  }
  if (hotVersion !== null && hotVersion < latest) {
    // Behind by design while its writer appends to a segment, and after that writer stopped without letting its
    // lease go: the versions after it are in versions/<hot + 1> and readers apply them. Nothing was lost then.
    if (!(await isSegment(ctx, taskDir, hotVersion + 1))) {
      account.push(
        `checkpoint.json holds version ${hotVersion}, behind version ${latest}: the save stopped after its commit point; readers use ${VERSIONS_DIR}/ and the next save repairs it`,
      );
    }
  } else if (hotVersion !== null && hotVersion > latest) {
    account.push(
      `checkpoint.json holds version ${hotVersion}, which ${VERSIONS_DIR}/ does not: it is not used, and the next save replaces it`,
    );
  } else if (!hot.ok && latest > 0) {
    account.push(
      `checkpoint.json is ${hot.missing ? 'missing' : 'unreadable'}; readers use ${VERSIONS_DIR}/ and the next save rewrites it`,
    );
  }
  if (eventsBehind > 0) {
    account.push(
      `events.jsonl lacks the events of the last ${eventsBehind} version(s): the log is not fsynced; the versions are the record`,
    );
  }
  if (torn > 0) account.push(`events.jsonl ends in a torn line of ${torn} bytes, which readers ignore`);
  if (leftovers.length > 0) {
    const bytes = leftovers.reduce((n, l) => n + l.bytes, 0);
    account.push(`${leftovers.length} temp file(s) of interrupted writes remain (${bytes} bytes): never read, safe to delete`);
  }

  return {
    task_id: taskId,
    latest_version: latest,
    hot_version: hotVersion,
    interrupted_versions: [...interrupted].filter((v) => v > latest).sort((a, b) => a - b),
    leftover_temp_files: leftovers,
    events_behind: eventsBehind,
    torn_event_bytes: torn,
    account,
  };
}

/** True when version `first`'s file is a segment (sealed records, written to be appended to). */
async function isSegment(ctx: ReadContext, taskDir: string, first: number): Promise<boolean> {
  const read = await readVersionBytes(ctx, versionPath(taskDir, first));
  return read.ok && isSealedHead(read.bytes, first);
}

/** What follows the last whole record of the task's newest version file, when that file is a segment. */
async function segmentTail(ctx: ReadContext, taskDir: string): Promise<(Segment & { file: string }) | null> {
  const last = (await versionFiles(ctx, taskDir)).at(-1);
  if (last === undefined) return null;
  const abs = versionPath(taskDir, last);
  const read = await readVersionBytes(ctx, abs);
  return read.ok ? { ...parseSegment(read.bytes, last), file: relPath(ctx, abs) } : null;
}

/** The files in `versions/` that a save moved aside as misnumbered (set-aside.ts), relative to the root. */
async function setAsideFiles(ctx: ReadContext, taskDir: string): Promise<string[]> {
  const dir = path.join(taskDir, VERSIONS_DIR);
  const names = await ctx.fs.readdirNames(dir).catch(() => [] as string[]);
  return names
    .filter(isAsideName)
    .sort()
    .map((n) => relPath(ctx, path.join(dir, n)));
}
