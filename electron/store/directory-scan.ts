/**
 * Finding the tasks in a checkpoint directory root and reading each once.
 *
 * A folder is a native task when its `checkpoint.json` is a Waystation
 * checkpoint (or it has `versions/`), a legacy task when that file is in the
 * second article's format; a root `<id>.json` in the first article's format and
 * a root `checkpoint.json` in the second's are legacy tasks too. Everything
 * else (temp files, the config, unrelated JSON) is not a task.
 */
import path from 'node:path';
import type { Dirent } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { problem } from '../../shared/checkpoint/problem.js';
import type { KeepListed, ListedTask, TaskEntry } from './store-types.js';
import { isTempName } from './atomic-file.js';
import { exists, readJsonFile, relPath, resolveLink, type FileRead, type ReadContext } from './file-reader.js';
import { HOT_FILE, isLegacyDoc, legacyEntry, LISTING, readHot, readNativeTask, type LegacyRead, type ReadDepth } from './task-reader.js';
import { VERSIONS_DIR } from './version-file.js';
import { LEASE_DIR } from './file-lease.js';
import { errorCode, settledReads, syncReadsOf } from './store-fs.js';
import { childPath } from './child-path.js';

export const CONFIG_FILE = 'waystation.config.json';
export const ROOT_LEGACY_FILE = 'checkpoint.json';
/** A legacy task in folder F is imported into folder `F-imported`: F itself holds the untouched original. */
export const IMPORT_SUFFIX = '-imported';

/** A task as found: its entry, plus the messages of a legacy task (its history lives inline). */
export interface FoundTask<C extends CheckpointHead> {
  entry: TaskEntry<C> & Pick<ListedTask, 'has_lease'>;
  legacy: LegacyRead | null;
  /** Where an import of this task would go (legacy tasks only). */
  importId: string | null;
}

/** A legacy task's entry (validated whole when converted) at the depth asked for. */
function legacyFound<C extends CheckpointHead>(legacy: LegacyRead, importId: string, depth: ReadDepth<C>): FoundTask<C> {
  const { checkpoint, ...rest } = legacy.entry;
  return { entry: { ...rest, checkpoint: checkpoint && depth.whole(checkpoint) }, legacy, importId };
}

/** The names in a task folder, from one readdir; null when the folder cannot be listed. */
async function folderNames(ctx: ReadContext, dir: string): Promise<Set<string> | null> {
  try {
    return new Set(await ctx.fs.readdirNames(dir));
  } catch {
    // Unlistable (EACCES, gone): the reads below meet the same trouble and report it on the task.
    return null;
  }
}

/** True for a name that can be a task folder: one path segment, not a temp name. */
export function isSafeTaskId(id: string): boolean {
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    id.length <= 200 &&
    id !== '.' &&
    id !== '..' &&
    !/[/\\\0]/.test(id) &&
    !isTempName(id) &&
    !id.endsWith('.json')
  );
}

/**
 * How a folder's contents are found out. `list`: one readdir of the folder
 * says what is there, so nothing is looked up that is not; across 10,000
 * tasks, failed lookups through the thread pool and the error objects they
 * throw cost more than the reads themselves. `probe`, for synchronous reads
 * (see scanRoot): the hot snapshot is opened outright and `lease/` and
 * `versions/` are stat-ed only where needed, which answers "not there" with no
 * error and costs a fraction of a readdir.
 */
export type FolderLookup = 'list' | 'probe';

/**
 * Read a folder as a task; null when it is not one.
 *
 * What is in the folder is found out as `lookup` says; both ways read the
 * same files and report the same problems.
 */
export async function readFolder<C extends CheckpointHead>(
  ctx: ReadContext,
  name: string,
  depth: ReadDepth<C>,
  lookup: FolderLookup = 'list',
): Promise<FoundTask<C> | null> {
  const dir = childPath(ctx.root, name);
  if (lookup === 'probe') return probeFolder(ctx, name, dir, depth);
  const names = await folderNames(ctx, dir);
  const hot: FileRead<unknown> =
    names && !names.has(HOT_FILE)
      ? { ok: false, missing: true, problem: problem(relPath(ctx, path.join(dir, HOT_FILE)), 'unreadable', 'the file does not exist') }
      : await readHot(ctx, dir, depth.keep);
  if (hot.ok && isLegacyDoc(hot.value)) {
    const importId = `${name}${IMPORT_SUFFIX}`;
    return legacyFound(legacyEntry(ctx, name, path.join(dir, HOT_FILE), hot, 'article-checkpoint-json', importId), importId, depth);
  }
  const hasVersions = names ? names.has(VERSIONS_DIR) : await exists(ctx, path.join(dir, VERSIONS_DIR));
  if (!hot.ok && hot.missing && !hasVersions) return null;
  const entry = await readNativeTask(ctx, name, dir, hot, depth, hasVersions);
  return { entry: depth.noteLease && names ? { ...entry, has_lease: names.has(LEASE_DIR) } : entry, legacy: null, importId: null };
}

/** readFolder by probing (see FolderLookup): the hot snapshot first, `versions/` only when it is missing. */
async function probeFolder<C extends CheckpointHead>(
  ctx: ReadContext,
  name: string,
  dir: string,
  depth: ReadDepth<C>,
): Promise<FoundTask<C> | null> {
  const hot = await readHot(ctx, dir, depth.keep);
  if (hot.ok && isLegacyDoc(hot.value)) {
    const importId = `${name}${IMPORT_SUFFIX}`;
    return legacyFound(legacyEntry(ctx, name, path.join(dir, HOT_FILE), hot, 'article-checkpoint-json', importId), importId, depth);
  }
  // With a hot snapshot there, a missing versions/ shows up as an empty listing of it or a probe that finds nothing.
  const hasVersions = hot.ok || !hot.missing || (await exists(ctx, path.join(dir, VERSIONS_DIR)));
  if (!hot.ok && hot.missing && !hasVersions) return null;
  const entry = await readNativeTask(ctx, name, dir, hot, depth, hasVersions);
  return {
    entry: depth.noteLease ? { ...entry, has_lease: await exists(ctx, childPath(dir, LEASE_DIR)) } : entry,
    legacy: null,
    importId: null,
  };
}

/** Read a root-level JSON file as a legacy task; null when it is not one. */
export async function readRootFile<C extends CheckpointHead>(
  ctx: ReadContext,
  name: string,
  depth: ReadDepth<C>,
): Promise<FoundTask<C> | null> {
  const abs = path.join(ctx.root, name);
  const read = await readJsonFile(ctx, abs);
  if (read.ok && !isLegacyDoc(read.value)) return null;
  if (!read.ok && read.missing) return null;
  let id: string;
  if (name === ROOT_LEGACY_FILE) {
    const declared = read.ok ? (read.value as { task_id?: unknown }).task_id : undefined;
    id = typeof declared === 'string' && isSafeTaskId(declared) ? declared : 'checkpoint';
  } else {
    id = name.slice(0, -'.json'.length);
  }
  return legacyFound(
    legacyEntry(ctx, id, abs, read, name === ROOT_LEGACY_FILE ? 'article-checkpoint-json' : 'article-task-json', id),
    id,
    depth,
  );
}

/** A root entry that is a symlink: followed only when it stays inside the root. */
async function readLinked<C extends CheckpointHead>(
  ctx: ReadContext,
  dirent: Dirent,
  depth: ReadDepth<C>,
  lookup: FolderLookup,
): Promise<FoundTask<C> | null> {
  const abs = path.join(ctx.root, dirent.name);
  const link = await resolveLink(ctx, abs);
  if (!link.ok) {
    if (!dirent.name.endsWith('.json') && !isSafeTaskId(dirent.name)) return null;
    const id = dirent.name.endsWith('.json') ? dirent.name.slice(0, -5) : dirent.name;
    return {
      entry: {
        task_id: id,
        location: relPath(ctx, abs),
        format: 'waystation',
        checkpoint: null,
        read_only: true,
        problems: [link.problem],
      },
      legacy: null,
      importId: null,
    };
  }
  try {
    const stat = await ctx.fs.stat(link.real);
    if (stat.isDirectory()) return isSafeTaskId(dirent.name) ? readFolder(ctx, dirent.name, depth, lookup) : null;
    if (stat.isFile() && dirent.name.endsWith('.json') && dirent.name !== CONFIG_FILE) return readRootFile(ctx, dirent.name, depth);
  } catch {
    // Gone between the readdir and the stat: not a task any more.
  }
  return null;
}

/** Read one root entry as a task, or null; a folder's contents are found out as `lookup` says. */
export function readRootEntry<C extends CheckpointHead>(
  ctx: ReadContext,
  dirent: Dirent,
  depth: ReadDepth<C>,
  lookup: FolderLookup = 'list',
): Promise<FoundTask<C> | null> {
  const name = dirent.name;
  if (isTempName(name) || name === CONFIG_FILE) return Promise.resolve(null);
  if (dirent.isSymbolicLink()) return readLinked(ctx, dirent, depth, lookup);
  if (dirent.isDirectory()) return isSafeTaskId(name) ? readFolder(ctx, name, depth, lookup) : Promise.resolve(null);
  if (dirent.isFile() && name.endsWith('.json')) return readRootFile(ctx, name, depth);
  return Promise.resolve(null);
}

/** How many root entries a listing reads synchronously before it lets the event loop run. */
export const SYNC_SLICE = 200;

/** A kept value with what the listing needs to choose which of several tasks of one id to show. */
interface Kept<T> {
  task_id: string;
  location: string;
  format: TaskEntry['format'];
  importId: string | null;
  value: T;
}

/**
 * Every task under the root, each read once at the listing's depth (see
 * LISTING) and passed through `keep`.
 *
 * On a file system with synchronous reads (`syncReadsOf`), entries are read
 * in slices of SYNC_SLICE with synchronous calls, yielding to the event loop
 * between slices: a listing makes five or six calls per task, and through
 * the thread pool each costs as much main-thread time as the read itself
 * (most of a listing's time, across 10,000 tasks). A slice takes a few
 * milliseconds, so the host keeps serving while it lists. Any other StoreFs
 * (one that injects faults) is read through its own calls, `concurrency` at a
 * time.
 *
 * A legacy task is hidden once the task it imports into exists, and a root
 * file is hidden behind a folder of the same id: the listing shows each id
 * once, in task id order.
 */
export async function scanRoot<T>(ctx: ReadContext, concurrency: number, keep: KeepListed<T>): Promise<T[]> {
  let dirents: Dirent[];
  try {
    dirents = await ctx.fs.readdir(ctx.root);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return [];
    throw err;
  }
  const sync = syncReadsOf(ctx.fs);
  const found = sync
    ? await readInSlices({ ...ctx, fs: settledReads(ctx.fs, sync) }, dirents, keep)
    : await keptFrom(await mapLimit(dirents, concurrency, (d) => readRootEntry(ctx, d, LISTING)), keep);
  const natives = new Set(found.filter((t) => t.format === 'waystation').map((t) => t.task_id));
  const seen = new Set<string>();
  // Precedence for a shared id: the native folder, then a legacy folder, then <id>.json, then the root checkpoint.json.
  const rank = (t: Kept<T>) =>
    t.format === 'waystation' ? 0 : t.location.endsWith('.json') ? (t.location === ROOT_LEGACY_FILE ? 3 : 2) : 1;
  const visible: Kept<T>[] = [];
  for (const t of found.sort((a, b) => rank(a) - rank(b))) {
    if (t.importId && natives.has(t.importId)) continue;
    if (seen.has(t.task_id)) continue;
    seen.add(t.task_id);
    visible.push(t);
  }
  return visible.sort((a, b) => (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0)).map((t) => t.value);
}

/** The tasks found, each with what `keep` made of its entry. */
async function keptFrom<T>(read: readonly (FoundTask<CheckpointHead> | null)[], keep: KeepListed<T>): Promise<Kept<T>[]> {
  const found = read.filter((t): t is FoundTask<CheckpointHead> => t !== null);
  const values = await keep(found.map((t) => t.entry));
  if (values.length !== found.length) throw new Error(`a listing kept ${values.length} values for ${found.length} tasks`);
  return found.map((t, i) => ({
    task_id: t.entry.task_id,
    location: t.entry.location,
    format: t.entry.format,
    importId: t.importId,
    value: values[i],
  }));
}

/**
 * Read root entries through settled (synchronous) reads, SYNC_SLICE at a
 * time, each slice handed to `keep` as soon as it is read: every read of a
 * slice settles within one turn of the event loop, and the next slice waits
 * for the turn after.
 */
async function readInSlices<T>(ctx: ReadContext, dirents: readonly Dirent[], keep: KeepListed<T>): Promise<Kept<T>[]> {
  const out: Kept<T>[] = [];
  for (let start = 0; start < dirents.length; start += SYNC_SLICE) {
    if (start > 0) await nextTurn();
    const slice = await Promise.all(dirents.slice(start, start + SYNC_SLICE).map((d) => readRootEntry(ctx, d, LISTING, 'probe')));
    out.push(...(await keptFrom(slice, keep)));
  }
  return out;
}

/** Map with at most `limit` calls in flight, results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
