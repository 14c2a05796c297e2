/**
 * Reading one task, native or legacy, into a TaskEntry. Never throws on bad
 * files and never writes: every failure becomes a problem on the entry.
 */
import { constants } from 'node:fs';
import path from 'node:path';
import type { Checkpoint, HistoryMessage, HistoryRef as HistoryRefType } from '../../shared/checkpoint/schema.js';
import { Checkpoint as CheckpointSchema, HistoryRef } from '../../shared/checkpoint/schema.js';
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { convertLegacy, detectLegacyFormat, type LegacyFormat } from '../../shared/checkpoint/legacy.js';
import type { ListedFiles, TaskEntry } from './store-types.js';
import { eventLogProblem, eventsPath } from './event-log.js';
import { checkCheckpoint, checkCheckpointHead, formatIssues, safeParseReporting, type Checked } from './checkpoint-check.js';
import { exists, readBytes, readJsonFile, readKeptJsonFile, relPath, type FileRead, type ReadContext } from './file-reader.js';
import { checkDeltas } from './incremental-validate.js';
import { freezeSince, type KeptSnapshot, type KeptVersion } from './kept-checkpoints.js';
import { FIRST_HEAD_READ, isCompressed, readHeadOf, readVersionBytes } from './segment-compression.js';
import { childPath } from './child-path.js';
import { errorCode, READ_FLAGS, syncReadsOf, type StoreFileHandle } from './store-fs.js';
import { envelopeVersionOf, headVersion, misnumberedProblem, type FileEnds } from './version-heads.js';
import {
  locateRecord,
  parseVersionFileName,
  rebuildVersion,
  VersionNames,
  hasOwnFile,
  VERSIONS_DIR,
  versionFileName,
  versionPath,
  versionWalk,
  type KnownVersion,
  type RebuiltVersion,
  type AppliedDelta,
} from './version-file.js';
import { isSealedHead, lastSeal, parseSegment, SEAL_TAIL_BYTES, SEGMENT_VERSIONS } from './version-records.js';

export const HOT_FILE = 'checkpoint.json';

/**
 * How far a read of a task goes: what its list row shows, or all of it.
 *
 * A listing checks each hot snapshot for what a summary shows and skips the
 * gap check; opening a task validates everything and lists `versions/`.
 * The versions applied to a hot snapshot that is behind (a running task's
 * segment) are checked at the same depth; versions read to stand in for a
 * missing or unreadable hot snapshot are always validated whole (the rare
 * case).
 */
export interface ReadDepth<C extends CheckpointHead> {
  /** List `versions/` to report gaps in the history. */
  gaps: boolean;
  /** Note on the entry whether the folder has a `lease/` folder (ListedTask.has_lease). */
  noteLease: boolean;
  /**
   * Check that `versions/` holds the version the hot snapshot names, reading the head of its file to catch one
   * that holds another version (version-heads.ts, hotAhead). A listing does not: the file checks that follow it
   * (listedFileProblems) list `versions/` anyway and say so, and its row carries their error.
   */
  heads: boolean;
  /** Check a parsed checkpoint file. */
  check(doc: unknown, file: string): Checked<C>;
  /**
   * Keep the hot snapshot, parsed and checked, for the next read of the task (kept-checkpoints.ts): opening a
   * task does, a listing does not (it would hold thousands, and a listing reads each once).
   */
  keep: boolean;
  /**
   * The checkpoint the deltas of the versions after a kept hot snapshot make of it, checking only what they
   * change (incremental-validate.ts, checkDeltas); null to check the rebuilt document with `check`. Absent where
   * `check` costs less than the deltas.
   */
  checkDeltas?(base: C, deltas: readonly AppliedDelta[]): C | null;
  /** A checkpoint validated whole, as this depth's type (a Checkpoint is a head too). */
  whole(cp: Checkpoint): C;
}

/** A listing's read: see ReadDepth. */
export const LISTING: ReadDepth<CheckpointHead> = {
  gaps: false,
  noteLease: true,
  heads: false,
  check: checkCheckpointHead,
  keep: false,
  whole: (cp) => cp,
};

/** Opening a task: see ReadDepth. */
export const DETAIL: ReadDepth<Checkpoint> = {
  gaps: true,
  noteLease: false,
  heads: true,
  check: checkCheckpoint,
  keep: true,
  checkDeltas,
  whole: (cp) => cp,
};

/** What reading a task's message history needs of its newest checkpoint: what a list row checks, and `history`. */
export type HistoryHead = CheckpointHead & { history: HistoryRefType };

/**
 * Reading a task's message history: the checkpoint checked as a listing checks it, and its `history` as the
 * schema says, without the gap check, whose listing of `versions/` (and a read of each segment's tail) reports
 * problems nothing read here depends on. The rest of the checkpoint is not what is read: validating it whole
 * (a copy of every object in it, the plan of 10,000 steps included) cost more than the history did, and opening
 * the task reports what is wrong with it. What the cheap check refuses gets zod's own account, as in a listing.
 */
export const HISTORY: ReadDepth<HistoryHead> = {
  gaps: false,
  noteLease: false,
  // As when the task is opened: a version file holding another version than its name is not taken for it.
  heads: true,
  check(doc, file) {
    const head = checkCheckpointHead(doc, file);
    if (!head.checkpoint) return { ...head, checkpoint: null };
    const history = HistoryRef.safeParse((head.checkpoint as { history?: unknown }).history ?? { count: 0, head: null });
    if (history.success) return { ...head, checkpoint: { ...head.checkpoint, history: history.data } };
    const whole = checkCheckpoint(doc, file);
    return whole.checkpoint ? whole : { ...whole, checkpoint: null };
  },
  keep: true,
  whole: (cp) => cp,
};

/** A version loaded and validated (as a whole Checkpoint unless checked for less). */
export type LoadedVersion<C extends CheckpointHead = Checkpoint> =
  | { ok: true; checkpoint: C; doc: unknown; readOnly: boolean; problems: Problem[]; fullBytes: number; deltaBytes: number }
  | { ok: false; problems: Problem[]; missing: boolean };

/** Rebuild, migrate and validate one version of a native task. */
export async function loadVersion(ctx: ReadContext, taskDir: string, version: number): Promise<LoadedVersion> {
  return checkRebuilt(ctx, taskDir, version, await rebuildVersion(ctx, taskDir, version), checkCheckpoint);
}

/**
 * The message history's head of version `version` of a task, as the store's last read of the task made that version
 * (readNativeTask, a store kept open): the newest version rebuilt after the kept hot snapshot (KeptSnapshot.later),
 * or the snapshot's own version. A host shows a running task's newest version, then asks for that version's
 * messages: rebuilding it again from the start of its segment, and validating it whole, cost more than the rest
 * of both reads. Taken on terms that make the answer what a store opened afresh reads, checkpoint.json being the
 * copy of its version that writers keep: a later version where its record is found in the file it was read from,
 * and that file still starts with the bytes it was rebuilt from (a store opened afresh reads a version from
 * versions/ alone, so checkpoint.json, rewritten when a segment closes, is not read for it); the snapshot's own
 * version where checkpoint.json still has the kept bytes, compared byte for byte, and a file of versions/ holds
 * the version, as hotAhead checks. Null when nothing kept answers, for the caller's own read. `reader` is the
 * context it read with, holding its listing of versions/ and the file it read last: the history's chunks are in the
 * files of versions no newer than this one, and the history read goes on with it (readHistoryChain).
 */
export async function keptHistoryHead(
  ctx: ReadContext,
  taskDir: string,
  version: number,
): Promise<{ history: HistoryRefType; reader: ReadContext } | null> {
  const abs = childPath(taskDir, HOT_FILE);
  const kept = ctx.kept?.peek(abs);
  if (!kept) return null;
  const later = kept.later?.version === version ? kept.later : null;
  const checkedOf = (doc: KeptSnapshot | KeptVersion) =>
    cleanCheckpoint(doc.made(checkCheckpoint)) ?? cleanCheckpoint(doc.made(HISTORY.check));
  const checked = later ? checkedOf(later) : checkedOf(kept);
  if (checked?.version !== version) return null;
  if (!later) {
    const raw = await readBytes(ctx, abs);
    if (!raw.ok || ctx.kept?.match(abs, raw.bytes) !== kept) return null;
  }
  const listed = await listVersionFiles(ctx, taskDir);
  if (!listed) return null;
  const { ctx: walk } = versionWalk(oneRead(ctx, taskDir, listed));
  if (later) {
    const located = await locateRecord(walk, taskDir, version);
    return located.ok && walk.segments?.startsWith(later.source) ? { history: checked.history, reader: walk } : null;
  }
  const ahead = await hotAhead(walk, taskDir, version, relPath(ctx, abs), listed);
  return ahead ? null : { history: checked.history, reader: walk };
}

/**
 * Several versions of a native task, in the order asked, rebuilt oldest
 * first: each from the one before it unless a full snapshot lies between, so
 * two versions over the same snapshot read and parse it once.
 */
export async function loadVersions(ctx: ReadContext, taskDir: string, versions: readonly number[]): Promise<LoadedVersion[]> {
  const out = new Map<number, LoadedVersion>();
  let known: { version: number; rebuilt: RebuiltVersion } | undefined;
  for (const version of [...new Set(versions)].sort((a, b) => a - b)) {
    const rebuilt = await rebuildVersion(ctx, taskDir, version, known);
    if (rebuilt.ok) known = { version, rebuilt: rebuilt.value };
    out.set(version, checkRebuilt(ctx, taskDir, version, rebuilt, checkCheckpoint));
  }
  return versions.map((v) => out.get(v)!);
}

/**
 * A rebuilt version, checked: by `checkKnown` when it can tell from the version the rebuild started from (what the
 * deltas since it change), else by `check` on the whole document.
 */
function checkRebuilt<C extends CheckpointHead>(
  ctx: ReadContext,
  taskDir: string,
  version: number,
  rebuilt: Awaited<ReturnType<typeof rebuildVersion>>,
  check: (doc: unknown, file: string) => Checked<C>,
  checkKnown?: (rebuilt: RebuiltVersion, file: string) => Checked<C> | null,
): LoadedVersion<C> {
  if (!rebuilt.ok) return rebuilt;
  const file = relPath(ctx, versionPath(taskDir, version));
  const checked: Checked<C> = checkKnown?.(rebuilt.value, file) ?? check(rebuilt.value.doc, file);
  if (!checked.checkpoint) return { ok: false, problems: checked.problems, missing: false };
  if (checked.checkpoint.version !== version) {
    return {
      ok: false,
      problems: [problem(file, 'invariant', `version file ${version} holds a checkpoint with version ${checked.checkpoint.version}`)],
      missing: false,
    };
  }
  return {
    ok: true,
    checkpoint: checked.checkpoint,
    doc: rebuilt.value.doc,
    readOnly: checked.readOnly,
    problems: checked.problems,
    fullBytes: rebuilt.value.fullBytes,
    deltaBytes: rebuilt.value.deltaBytes,
  };
}

/**
 * The version numbers present in `versions/`, ascending; temp files and
 * strays are skipped. A file followed by a gap in the names is read: it may
 * be a segment holding the versions after its own (up to the next file).
 */
export async function listVersionNumbers(ctx: ReadContext, taskDir: string, files?: readonly number[]): Promise<number[]> {
  files ??= await versionFiles(ctx, taskDir);
  const { ctx: reader, pace } = versionWalk(ctx);
  const out: number[] = [];
  for (let i = 0; i < files.length; i++) {
    const first = files[i];
    const next = files[i + 1] ?? Infinity;
    out.push(first);
    if (next === first + 1) continue;
    await pace();
    const last = await segmentLast(reader, taskDir, first);
    for (let v = first + 1; v <= last && v < next; v++) out.push(v);
  }
  return out;
}

/**
 * True when the file that holds `version` also holds a later version: a
 * segment appended to past it. A writer about to create the file of
 * `version + 1` asks this first, since that file would win over the record
 * another writer (a lease holder that does not know yet it lost the lease)
 * appended meanwhile.
 */
export async function heldPast(ctx: ReadContext, taskDir: string, version: number): Promise<boolean> {
  for (let f = version; f >= Math.max(1, version - SEGMENT_VERSIONS + 1); f--) {
    if (await exists(ctx, versionPath(taskDir, f))) return (await segmentLast(ctx, taskDir, f)) > version;
  }
  return false;
}

/**
 * The last version the file of version `first` holds: `first` itself unless
 * it is a segment. Seals are checked where the versions are read; here only
 * what the file holds is counted, from its first and last bytes (two small
 * reads), or from its records when its tail is not a seal (cut short).
 */
async function segmentLast(ctx: ReadContext, taskDir: string, first: number): Promise<number> {
  const abs = versionPath(taskDir, first);
  const ends = await fileEnds(ctx, abs, first);
  if (ends === 'one-version') return first;
  if (typeof ends === 'number') return ends;
  const read = await readVersionBytes(ctx, abs);
  return read.ok ? (parseSegment(read.bytes, first, false).records.at(-1)?.version ?? first) : first;
}

/**
 * What a version file's first and last bytes say: it holds one version (its
 * head is not a sealed record's), or it is a segment whose last seal names
 * the version returned; `unknown` when the file must be read whole to tell
 * (a torn tail, a symbolic link, not a regular file, a failed read).
 */
async function fileEnds(ctx: ReadContext, abs: string, first: number): Promise<FileEnds | 'unknown'> {
  // A file seen before, and the same file still, says the same: a task opened again reads one lstat a file.
  const asked = ctx.heads?.endsOf(ctx, abs);
  const noted = asked && (await asked);
  if (noted !== undefined) return noted;
  let handle: StoreFileHandle;
  try {
    handle = await ctx.fs.open(abs, READ_FLAGS | constants.O_NOFOLLOW);
  } catch {
    return 'unknown';
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return 'unknown';
    // Enough for a compressed segment's head as Waystation's writers keep it, in the one read.
    const read = Buffer.alloc(Math.min(st.size, FIRST_HEAD_READ));
    await handle.read(read, 0, read.length, 0);
    // A compressed segment's head is what its first bytes inflate to (segment-compression.ts).
    const compressed = isCompressed(read);
    const head = compressed ? await readHeadOf(handle, st.size, read) : read;
    const ends = await endsFrom(handle, st.size, head, compressed, first);
    // What the head and the ends say is kept, as the store's look at the file's head would keep it
    // (version-heads.ts): the file checks of a listing read both of the newest file.
    ctx.heads?.note(abs, st, envelopeVersionOf(head), ends === 'unknown' ? undefined : ends);
    return ends;
  } catch {
    return 'unknown';
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** What a version file's head (`head`, inflated when `compressed`) and last bytes say; see fileEnds. */
async function endsFrom(
  handle: StoreFileHandle,
  size: number,
  head: Buffer,
  compressed: boolean,
  first: number,
): Promise<FileEnds | 'unknown'> {
  // Only a full segment is compressed: one whose inflated head is a sealed record's holds sixteen versions,
  // counted without inflating the rest (a version among them that does not read says so when read).
  if (compressed) return isSealedHead(head, first) ? first + SEGMENT_VERSIONS - 1 : 'unknown';
  if (!isSealedHead(head, first)) return 'one-version';
  const tail = Buffer.alloc(Math.min(size, SEAL_TAIL_BYTES));
  await handle.read(tail, 0, tail.length, size - tail.length);
  const last = lastSeal(tail);
  return last !== null && last >= first && last < first + SEGMENT_VERSIONS ? last : 'unknown';
}

/** The numbers the files in `versions/` are named for, ascending; temp files and strays are skipped. */
export async function versionFiles(ctx: ReadContext, taskDir: string): Promise<number[]> {
  return (await listVersionFiles(ctx, taskDir)) ?? [];
}

/** versionFiles, or null when `versions/` could not be listed (not there, or not readable). */
async function listVersionFiles(ctx: ReadContext, taskDir: string): Promise<number[] | null> {
  let names: string[];
  try {
    // Names only, no Dirent a file: a listing of tasks the runtime wrote lists each one's versions/.
    names = await ctx.fs.readdirNames(path.join(taskDir, VERSIONS_DIR));
  } catch {
    return null;
  }
  const out: number[] = [];
  for (const name of names) {
    const n = parseVersionFileName(name);
    if (n !== null) out.push(n);
  }
  return out.sort((a, b) => a - b);
}

/**
 * The newest version of a task, from a version known to exist (the hot
 * snapshot's): each version file after it is looked up by name, and a file
 * found is asked for the last version it holds (segmentLast). A stat per
 * file, two small reads per segment, and a stat per version that segment
 * holds (a version's own file supersedes its record in a segment).
 */
export async function newestVersion(ctx: ReadContext, taskDir: string, from: number): Promise<{ newest: number; problems: Problem[] }> {
  let newest = from;
  for (;;) {
    const next = await probeVersion(ctx, taskDir, newest + 1);
    if (next.problem) return { newest, problems: [next.problem] };
    if (!next.present) return { newest, problems: [] };
    newest++;
    const last = await segmentLast(ctx, taskDir, newest);
    for (let v = newest + 1; v <= last; v++) {
      if (await hasOwnFile(ctx, taskDir, v)) break;
      newest = v;
    }
  }
}

/**
 * Whether version `version` of a task exists, for the freshness check after
 * the hot snapshot: a problem instead when the disk would not say (EIO,
 * EACCES), since taking that for "not there" would silently show an older
 * version, and for "there" would report a version missing that may not be.
 */
export async function probeVersion(ctx: ReadContext, taskDir: string, version: number): Promise<{ present: boolean; problem?: Problem }> {
  const abs = versionPath(taskDir, version);
  // A read that listed versions/ (readNativeTask) has the answer: a file put there since is seen by the next read.
  if (ctx.versionNames) return { present: await ctx.versionNames.has(ctx, taskDir, version) };
  try {
    // One lookup, answered synchronously where the file system can, as `exists` answers its own.
    const sync = syncReadsOf(ctx.fs);
    return { present: sync ? sync.exists(abs) : await ctx.fs.exists(abs) };
  } catch (err) {
    const code = errorCode(err) ?? String(err);
    const message = `cannot check whether version ${version} exists (${code}): the task may have versions newer than the one shown; nothing was changed`;
    return { present: false, problem: problem(relPath(ctx, abs), 'unreadable', message) };
  }
}

/**
 * The problem when checkpoint.json names a version that `versions/` does not
 * hold (a hot snapshot copied from elsewhere, or edited by hand), or whose
 * file there holds another version (misnumbered): the copy is then not used,
 * as a torn one is not, and the task shows its newest version that reads.
 * A look at the head of the version's own file (read once per file and store,
 * version-heads.ts, a stat after that); when it has none, heldInFiles.
 */
async function hotAhead(
  ctx: ReadContext,
  taskDir: string,
  version: number,
  file: string,
  listed: readonly number[] | null,
): Promise<Problem | undefined> {
  // A version the read's listing shows without a file of its own (a running task's: a segment's record) is not
  // opened: the listing answers, as it answers probeVersion.
  const unlisted = ctx.versionNames && !(await ctx.versionNames.has(ctx, taskDir, version));
  const held = unlisted ? 'missing' : await headVersion(ctx, versionPath(taskDir, version));
  if (typeof held === 'number' && held !== version) {
    return problem(
      file,
      'invariant',
      `checkpoint.json claims version ${version}, but ${VERSIONS_DIR}/${versionFileName(version)} holds version ${held}`,
    );
  }
  // A head that is not an envelope's is left to the reads that parse the file, which say what is wrong with it.
  if (held !== 'missing') return undefined;
  return heldInFiles(ctx, taskDir, version, listed ?? (await versionFiles(ctx, taskDir)), file);
}

/**
 * The problem when no file of `versions/` (listed: `files`) holds `version`,
 * which has no file of its own. A folder with no version file at all holds a
 * task written as its checkpoint.json alone (by hand, or by a writer in
 * another language): nothing contradicts it.
 */
async function heldInFiles(
  ctx: ReadContext,
  taskDir: string,
  version: number,
  files: readonly number[],
  file: string,
): Promise<Problem | undefined> {
  if (files.length === 0) return undefined;
  // A writer saving under the lease leaves checkpoint.json at the last version of a segment (task-writer.ts): the
  // file before the version, if its first and last bytes say it holds the version, is read no further. That is
  // every task the runtime wrote; anything else is looked for record by record below.
  const before = files.findLast((f) => f < version);
  if (before !== undefined && version - before < SEGMENT_VERSIONS) {
    const last = await fileEnds(ctx, versionPath(taskDir, before), before);
    if (typeof last === 'number' && last >= version) return undefined;
  }
  // The files listed answer which versions have a file of their own: no lookup per name below the version.
  const located = await locateRecord({ ...ctx, versionNames: VersionNames.listed(taskDir, files) }, taskDir, version);
  if (located.ok) return undefined;
  if (!located.missing) {
    // The file that would hold it is cut short or damaged before it. A copy is written only once its version is
    // durable, so no power cut leaves this: the versions from there on are lost, and the copy cannot stand in.
    const where = located.problem.file === file ? '' : ` (${located.problem.file})`;
    return problem(
      file,
      'invariant',
      `checkpoint.json claims version ${version}, which no file in ${VERSIONS_DIR}/ holds whole: ${located.problem.message}${where}`,
    );
  }
  return problem(
    file,
    'invariant',
    `checkpoint.json claims version ${version}, which no file in ${VERSIONS_DIR}/ holds (the newest file there is version ${files.at(-1)})`,
  );
}

/**
 * Problems for version files whose envelope holds another version than the
 * file is named for (a file copied or renamed into `versions/`): from the
 * first bytes of each file, each read once per store (version-heads.ts), so
 * opening a task again costs a stat per file and a read per new one. Files
 * past `shown`, the version the task stands at, are moved aside by the next
 * save; the others stay, and are errors. A file whose head is not an
 * envelope is left to the reads that parse it, which say what is wrong.
 */
export async function misnumberedFiles(ctx: ReadContext, taskDir: string, files: readonly number[], shown: number): Promise<Problem[]> {
  const { ctx: reader, pace } = versionWalk(ctx);
  const out: Problem[] = [];
  for (const n of files) {
    await pace();
    const abs = versionPath(taskDir, n);
    const held = await headVersion(reader, abs);
    if (typeof held === 'number' && held !== n) out.push(misnumberedProblem(ctx, abs, n, held, n > shown));
  }
  return out;
}

/**
 * The problems of a listed task's version files that its listing did not
 * look for (see CheckpointSource.fileProblems): a readdir of `versions/`, a
 * stat of each file, and a look at the head of each file that may have been
 * put there since the files after it (outOfOrder). What the listing already
 * reported of a file is not said twice. A legacy task has no version files,
 * and a folder linked out of the root is not read through.
 */
export async function listedFileProblems(ctx: ReadContext, entry: ListedFiles): Promise<Problem[]> {
  if (entry.format !== 'waystation' || entry.problems.some((p) => p.reason === 'outside-root')) return [];
  const taskDir = path.join(ctx.root, entry.location);
  const files = await versionFiles(ctx, taskDir);
  if (files.length === 0) return [];
  const shown = entry.checkpoint?.version;
  // The version the row shows, when it has no file of its own (a task the runtime wrote: a segment's last record,
  // usually in the newest file, whose head is kept for the look at it below); one with a file of its own is the
  // newest, or out of order, and its head is read below.
  const ahead =
    shown !== undefined && !files.includes(shown)
      ? await heldInFiles(ctx, taskDir, shown, files, relPath(ctx, childPath(taskDir, HOT_FILE)))
      : undefined;
  const found = await misnumberedFiles(ctx, taskDir, await outOfOrder(ctx, taskDir, files), shown ?? 0);
  if (ahead) found.unshift(ahead);
  // Version 1 always has a file of its own, and every version after it is rebuilt from it: a first file of another
  // number is a history lost from its start, which the names alone show (a gap further on may lie inside a segment).
  found.unshift(...gapProblems(ctx, taskDir, files.slice(0, 1)));
  // The same problem, not another of the same file and kind: a row's invariant error on checkpoint.json (a summary's
  // own check) once hid the files' finding that the version it claims is lost.
  return found.filter((m) => !entry.problems.some((p) => p.file === m.file && p.reason === m.reason && p.message === m.message));
}

/**
 * The version files whose heads a listing reads: the newest, and each whose
 * change time (ctime) is later than the next file's. A writer creates a
 * task's version files one after the other and never touches one once the
 * next exists (a segment is appended to only while it is the newest), so
 * their change times follow their numbers; a file copied over one, or
 * renamed or copied into `versions/` afterwards, gets a change time of the
 * moment it was put there, which no one can set back. A folder copied whole
 * gives its files change times in the copy's order, and those out of order
 * are read: a read too many. Change times are kept to a tick of the kernel's
 * clock (4 ms here), so a file copied over one within the tick in which the
 * next was created looks in order; opening the task reads every head
 * (misnumberedFiles), and so do `history` and `verify`. A file that cannot be
 * stat-ed is read (its read says what is wrong). A stat costs a quarter of
 * the open, stat, read and close of a head, across the 100,000 version files
 * of a large directory.
 */
async function outOfOrder(ctx: ReadContext, taskDir: string, files: readonly number[]): Promise<number[]> {
  const ctimes: number[] = [];
  for (const n of files)
    ctimes.push(
      await ctx.fs.lstat(versionPath(taskDir, n)).then(
        (st) => st.ctimeMs,
        () => Infinity,
      ),
    );
  return files.filter((_, i) => i === files.length - 1 || !(ctimes[i] <= ctimes[i + 1]));
}

/**
 * The problems of version `version`, which did not load: the file's own
 * problem when it is misnumbered (moved aside by the next save when every
 * version tried above it was misnumbered too: `above`), else what the read
 * said.
 */
async function unloaded(
  ctx: ReadContext,
  taskDir: string,
  version: number,
  problems: Problem[],
  above: boolean,
): Promise<{ problems: Problem[]; misnumbered: boolean }> {
  const abs = versionPath(taskDir, version);
  const held = await headVersion(ctx, abs);
  if (typeof held !== 'number' || held === version) return { problems, misnumbered: false };
  return { problems: [misnumberedProblem(ctx, abs, version, held, above)], misnumbered: true };
}

/** Problems for gaps in the numbered history: `[1, 2, 5]` misses 3 and 4. */
export function gapProblems(ctx: ReadContext, taskDir: string, numbers: number[]): Problem[] {
  const out: Problem[] = [];
  let expected = 1;
  for (const n of numbers) {
    if (n > expected) {
      const range = n - 1 === expected ? `version ${expected} is` : `versions ${expected} to ${n - 1} are`;
      out.push(
        problem(
          relPath(ctx, versionPath(taskDir, expected)),
          'missing-version',
          `${range} missing from the history; later versions stay readable where they are full snapshots`,
        ),
      );
    }
    expected = n + 1;
  }
  return out;
}

/**
 * Read a native task folder.
 *
 * `hot` is the already-read `checkpoint.json`. Freshness costs one stat of the
 * next version's file (none when the folder is known to have no `versions/`);
 * `depth.gaps` adds a readdir of `versions/` to report gaps.
 */
export async function readNativeTask<C extends CheckpointHead>(
  ctx: ReadContext,
  taskId: string,
  taskDir: string,
  hot: FileRead<unknown>,
  depth: ReadDepth<C>,
  hasVersions = true,
): Promise<TaskEntry<C>> {
  const problems: Problem[] = [];
  // One listing of versions/ answers, for a read that goes past the hot snapshot's check, which versions have a
  // file of their own: for the check that a file holds the snapshot's version, the lookups for versions after it,
  // the rebuild's walk and the gap check (a stat per version of the newest segment, twice, before).
  const listed = hasVersions && (depth.heads || depth.gaps) ? await listVersionFiles(ctx, taskDir) : null;
  const reader = oneRead(ctx, taskDir, listed);
  // Why checkpoint.json could not be used, when it could not: an error only if no version can stand in for it.
  const hotProblems: Problem[] = [];
  let checkpoint: C | null = null;
  let readOnly = false;
  let hotVersion: number | null = null;
  let hotDoc: unknown = null;
  // The hot snapshot is kept and checked without a problem: a valid base for the versions after it.
  let keptBase: C | null = null;
  let keptSnapshot: KeptSnapshot | undefined;
  if (hot.ok) {
    const hotFile = relPath(ctx, childPath(taskDir, HOT_FILE));
    const checked = hot.kept ? hot.kept.checked(depth.check, hotFile) : depth.check(hot.value, hotFile);
    const named = checked.checkpoint?.version;
    // A listing leaves this to the file checks (listedFileProblems), which list versions/ anyway: done here, it
    // was a lookup, a listing of versions/ and a read of a segment's ends for every task the runtime wrote,
    // and more than the rest of the listing together.
    const ahead = named !== undefined && hasVersions && depth.heads ? await hotAhead(reader, taskDir, named, hotFile, listed) : undefined;
    if (ahead) {
      // Taken at its word, the task would show a version no file holds, and the next save would follow it.
      hotProblems.push(ahead);
    } else if (checked.checkpoint) {
      problems.push(...checked.problems);
      checkpoint = checked.checkpoint;
      readOnly = checked.readOnly;
      hotVersion = checked.checkpoint.version;
      hotDoc = hot.value;
      // Not a document of an older schema, which the check migrates: the deltas apply to the document as
      // stored, and what they make of it is then checked whole, as a read without the kept snapshot does.
      const current = (hot.value as { schema_version?: unknown }).schema_version === checked.checkpoint.schema_version;
      if (hot.kept && current && checked.problems.length === 0 && !checked.readOnly) {
        keptBase = checked.checkpoint;
        keptSnapshot = hot.kept;
      }
    } else {
      hotProblems.push(...checked.problems);
    }
  } else if (!hot.missing) {
    hotProblems.push(hot.problem);
  }

  let numbers: number[] | null = null;
  if (hotVersion !== null) {
    // The hot snapshot is behind while a segment fills (and after a crash between a version's commit and the
    // snapshot's rename): not an error. The versions after it are applied to it.
    let newest = hotVersion;
    if (hasVersions) {
      const found = await newestVersion(reader, taskDir, hotVersion);
      newest = found.newest;
      problems.push(...found.problems);
    }
    const hotKnown: KnownVersion = { version: hotVersion, rebuilt: { doc: hotDoc, fullBytes: 0, deltaBytes: 0, fullVersion: hotVersion } };
    // A kept snapshot checked clean keeps the newest version read after it (kept-checkpoints.ts, KeptVersion): the
    // walk ends there, where its file still starts with the bytes it was read from, and else at the snapshot.
    const kept = keptSnapshot;
    const later = kept?.later && kept.later.version > hotVersion && kept.later.version <= newest ? kept.later : null;
    const laterBase = later ? cleanCheckpoint(later.made(depth.check)) : null;
    // A depth that checks by what changed starts from the kept version only with that version checked clean.
    const fromLater = later && (laterBase || !depth.checkDeltas) ? later : null;
    const knowns = fromLater ? [fromLater.known, hotKnown] : [hotKnown];
    const checkKnown = (r: RebuiltVersion, file: string): Checked<C> | null => {
      if (!r.since) return null;
      if (fromLater && r.from === fromLater.version && r.since.length === 0) return fromLater.checked(depth.check, file);
      // From a version checked clean, the versions after it are checked by what they change.
      const base = r.from === hotVersion ? keptBase : r.from === fromLater?.version ? laterBase : null;
      const changed = base && depth.checkDeltas ? depth.checkDeltas(base, r.since) : null;
      return changed ? { checkpoint: freezeSince(changed, base), problems: [], readOnly: false } : null;
    };
    // Misnumbered files above the version the task will stand at are moved aside by the next save (set-aside.ts).
    let above = true;
    for (let v = newest; v > hotVersion; v--) {
      // Checked as deeply as the hot snapshot would have been: a running task's row is read this way on every save.
      const rebuilt = await rebuildVersion(reader, taskDir, v, knowns);
      const loaded = checkRebuilt(ctx, taskDir, v, rebuilt, depth.check, checkKnown);
      if (loaded.ok) {
        checkpoint = loaded.checkpoint;
        readOnly = loaded.readOnly;
        problems.push(...loaded.problems);
        const made = rebuilt.ok ? rebuilt.value : null;
        if (kept && made?.source && v === newest && made.doc !== fromLater?.rebuilt.doc) {
          // The kept document the deltas were applied to, if any (a full snapshot among them has none).
          const previous = made.from === undefined ? null : made.from === fromLater?.version ? fromLater.doc : hotDoc;
          const checked = { checkpoint: loaded.checkpoint, problems: loaded.problems, readOnly: loaded.readOnly };
          kept.keepLater(v, made, made.source, previous)?.put(depth.check, checked);
        }
        break;
      }
      const bad = await unloaded(ctx, taskDir, v, loaded.problems, above);
      above &&= bad.misnumbered;
      problems.push(...bad.problems);
    }
  } else {
    numbers = hasVersions ? await listVersionNumbers(ctx, taskDir, listed ?? undefined) : [];
    if (numbers.length === 0 && hot.ok === false && hot.missing) {
      problems.push(problem(relPath(ctx, taskDir), 'missing-version', 'the task has neither checkpoint.json nor any version file'));
    }
    // The newest few are tried: one bad file should not hide the versions before it.
    let above = true;
    for (const v of numbers.slice(-3).reverse()) {
      const loaded = await loadVersion(ctx, taskDir, v);
      if (loaded.ok) {
        checkpoint = depth.whole(loaded.checkpoint);
        readOnly = readOnly || loaded.readOnly;
        problems.push(...loaded.problems);
        break;
      }
      const bad = await unloaded(ctx, taskDir, v, loaded.problems, above);
      above &&= bad.misnumbered;
      problems.push(...bad.problems);
    }
    // checkpoint.json is a copy of the newest version that writers do not fsync (docs/FORMAT.md): torn, empty
    // or unparsable after a power cut, it costs nothing while the versions read, so it is only a warning then.
    // One that names a version no file holds (or a file holding another) is no power cut's doing: a version is
    // durable before its copy is written, so versions were lost or files moved, and that stays an error.
    const shown = checkpoint?.version;
    problems.unshift(
      ...hotProblems.map((p) =>
        shown === undefined
          ? p
          : {
              ...p,
              ...(p.reason === 'invariant' ? {} : { severity: 'warning' as const }),
              message: `${p.message}; showing version ${shown} from versions/ instead (checkpoint.json is a copy the next save rewrites)`,
            },
      ),
    );
  }

  if (depth.gaps) {
    // One listing of versions/ for both checks below.
    const files = hasVersions ? (listed ?? (await versionFiles(ctx, taskDir))) : [];
    numbers ??= hasVersions ? await listVersionNumbers(reader, taskDir, files) : [];
    problems.push(...gapProblems(ctx, taskDir, numbers));
    if (hasVersions) {
      // A file the reads above found misnumbered is already reported, with what happens to it.
      const misnumbered = await misnumberedFiles(reader, taskDir, files, checkpoint?.version ?? 0);
      problems.push(...misnumbered.filter((m) => !problems.some((p) => p.file === m.file && p.reason === m.reason)));
    }
    const log = await eventLogProblem(ctx.fs, taskDir, relPath(ctx, eventsPath(taskDir)), ctx.maxEventLogBytes);
    if (log) problems.push(log);
  }
  if (checkpoint && checkpoint.task_id !== taskId) {
    problems.push(
      problem(
        relPath(ctx, path.join(taskDir, HOT_FILE)),
        'invariant',
        `the folder is ${taskId} but the checkpoint says task_id ${JSON.stringify(checkpoint.task_id)}`,
      ),
    );
  }
  return {
    task_id: taskId,
    location: relPath(ctx, taskDir),
    format: 'waystation',
    checkpoint,
    read_only: readOnly,
    problems: dedupe(problems),
  };
}

/**
 * The error on a version file newer than the version an entry shows: the
 * task reads, from an older version, but no save can follow its newest file.
 */
export function unreadableNewerVersion(entry: TaskEntry): Problem | undefined {
  const shown = entry.checkpoint?.version;
  if (entry.format !== 'waystation' || shown === undefined) return undefined;
  const prefix = entry.location === '.' ? `${VERSIONS_DIR}/` : `${entry.location}/${VERSIONS_DIR}/`;
  return entry.problems.find((p) => {
    if (p.severity !== 'error' || !p.file.startsWith(prefix)) return false;
    const n = parseVersionFileName(p.file.slice(prefix.length));
    // A record of a segment is named in the message: "version 7: ..." in the file of version 2.
    const record = /^version (\d+): /.exec(p.message);
    return n !== null && Math.max(n, record ? Number(record[1]) : 0) > shown;
  });
}

export interface LegacyRead {
  entry: TaskEntry;
  messages: HistoryMessage[];
}

/**
 * Turn a parsed legacy file into a read-only entry, converted in memory.
 *
 * `importTo` names the folder an import would create, for the warning.
 */
export function legacyEntry(
  ctx: ReadContext,
  taskId: string,
  abs: string,
  read: FileRead<unknown>,
  fallbackFormat: LegacyFormat,
  importTo: string,
): LegacyRead {
  const location = relPath(ctx, abs);
  if (!read.ok) {
    return {
      entry: { task_id: taskId, location, format: fallbackFormat, checkpoint: null, read_only: true, problems: [read.problem] },
      messages: [],
    };
  }
  const converted = convertLegacy(read.value, { taskId, location, fallbackTime: new Date(read.mtimeMs).toISOString() });
  if (!converted.ok) {
    return {
      entry: {
        task_id: taskId,
        location,
        format: fallbackFormat,
        checkpoint: null,
        read_only: true,
        problems: [problem(location, 'schema', converted.message)],
      },
      messages: [],
    };
  }
  const warning = problem(
    location,
    'legacy-format',
    converted.format === 'article-task-json'
      ? `the first article's <task_id>.json format: shown read-only; resuming it with an agent that recognises it (the article's four-step task is checkpoint-demo's) imports it as a Waystation task in ${importTo}/ and leaves this file untouched`
      : `the second article's checkpoint.json format: shown read-only; no built-in agent resumes it (one of yours that recognises it, with adoptLegacy, would import it as a Waystation task in ${importTo}/ and leave this file untouched)`,
  );
  const parsed = safeParseReporting(CheckpointSchema, converted.checkpoint);
  if (!parsed.success) {
    return {
      entry: {
        task_id: taskId,
        location,
        format: converted.format,
        checkpoint: null,
        read_only: true,
        problems: [warning, problem(location, 'schema', formatIssues(parsed.error.issues, converted.checkpoint))],
      },
      messages: [],
    };
  }
  return {
    entry: { task_id: taskId, location, format: converted.format, checkpoint: parsed.data, read_only: true, problems: [warning] },
    messages: converted.messages,
  };
}

/** True when parsed JSON is in one of the article formats. */
export function isLegacyDoc(doc: unknown): boolean {
  return detectLegacyFormat(doc) !== null;
}

/** Read the hot snapshot of a folder; with `keep`, through the store's kept snapshots (a legacy file is never kept). */
export function readHot(ctx: ReadContext, taskDir: string, keep = false): Promise<FileRead<unknown>> {
  const abs = childPath(taskDir, HOT_FILE);
  return keep ? readKeptJsonFile(ctx, abs, (doc) => !isLegacyDoc(doc)) : readJsonFile(ctx, abs);
}

/** The checkpoint of a check that found nothing wrong and nothing to migrate; null otherwise. */
function cleanCheckpoint<C extends CheckpointHead>(checked: Checked<C> | undefined): C | null {
  return checked?.checkpoint && checked.problems.length === 0 && !checked.readOnly ? checked.checkpoint : null;
}

function dedupe(problems: Problem[]): Problem[] {
  // Most tasks have no problem at all: no set for them.
  if (problems.length < 2) return problems;
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.file}\u0000${p.reason}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The context of one read of a task: the files it has identified so far, and, when it listed versions/, that listing
 * answering which versions have a file of their own.
 */
function oneRead(ctx: ReadContext, taskDir: string, listed: readonly number[] | null): ReadContext {
  return { ...ctx, identified: new Set(), ...(listed ? { versionNames: VersionNames.listed(taskDir, listed) } : {}) };
}
