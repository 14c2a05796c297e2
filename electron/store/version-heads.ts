/**
 * Which version a version file's envelope holds, from its first bytes, and
 * the problem when that is not the version the file is named for (a file
 * copied or renamed into `versions/`); with it, once read, what its last
 * bytes say of the versions a segment holds (task-reader.ts, fileEnds).
 *
 * Waystation never changes what a version file holds once its name exists
 * (a segment only grows, and its head never changes; a full one compressed
 * holds the same bytes), so what a file's head and ends say is
 * kept per store, keyed by the file's path and identity (device, inode, size,
 * modification and change times): a file seen before costs one lstat, a new
 * or changed one (copied over, grown) is read again.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { relPath, type ReadContext } from './file-reader.js';
import { errorCode, nodeFs, READ_FLAGS, syncReadsOf, type StoreFileHandle } from './store-fs.js';
import { VERSIONS_DIR, versionFileName } from './version-file.js';
import { FIRST_HEAD_READ, headFromSync, readHeadOf } from './segment-compression.js';

/** How a version file begins (version-records.ts, recordHead): the number its envelope holds. */
const ENVELOPE_HEAD = /^\{"format":"waystation-version","version":(\d+),/;

/** The version an envelope beginning with `head` holds, or null when `head` is not the beginning of an envelope. */
export function envelopeVersionOf(head: Uint8Array): number | null {
  const m = ENVELOPE_HEAD.exec(Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1'));
  return m ? Number(m[1]) : null;
}

/**
 * What a file's head says: `missing` when there is no file, else the version
 * its envelope holds, or null when its head is not an envelope's (left to the
 * reads that parse it, which say what is wrong) or it could not be read.
 */
export type HeadVersion = 'missing' | number | null;

interface Known {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  held: number | null;
  /** What the file's first and last bytes say of the versions it holds (task-reader.ts, fileEnds), once read. */
  ends?: FileEnds;
}

/** A version file holds one version, or is a segment whose last seal names the number given. */
export type FileEnds = 'one-version' | number;

const sameFile = (k: Known, st: Stats) =>
  k.dev === st.dev && k.ino === st.ino && k.size === st.size && k.mtimeMs === st.mtimeMs && k.ctimeMs === st.ctimeMs;

/**
 * How many files' heads a store keeps, the most recently asked: an entry
 * costs some 300 bytes, and a host that opened every task of a directory of
 * 10,000 tasks of ten versions (the overview reads them all) kept 100,000,
 * about 30 MiB, for as long as the directory stayed open. A file forgotten
 * is read again when next asked.
 */
export const KEPT_HEADS = 32_768;

/** The heads of the version files a store has read, by path and identity (see the module comment). */
export class VersionHeads {
  private readonly known = new Map<string, Known>();

  constructor(private readonly capacity = KEPT_HEADS) {}

  /** How many files' heads are kept. */
  get size(): number {
    return this.known.size;
  }

  /** Keep `known` for `abs` as the most recently asked, forgetting the least recently asked beyond the capacity. */
  private keep(abs: string, known: Known): void {
    this.known.delete(abs);
    this.known.set(abs, known);
    if (this.known.size > this.capacity) this.known.delete(this.known.keys().next().value as string);
  }

  /**
   * Keep what a read of the file's first bytes elsewhere found (`held`, of the file `st` describes), as versionAt
   * would, and with `ends` what its last bytes say.
   */
  note(abs: string, st: Stats, held: number | null, ends?: FileEnds): void {
    this.keep(abs, { ...identity(st), held, ends });
  }

  /**
   * The ends noted of the file at `abs`, while it is the file they were noted of (one lstat); otherwise undefined.
   * Undefined at once, with no promise, when none were noted: a listing's file checks ask for every task's files.
   */
  endsOf(ctx: ReadContext, abs: string): Promise<FileEnds | undefined> | undefined {
    const known = this.known.get(abs);
    if (known?.ends === undefined) return undefined;
    const ends = known.ends;
    if (ctx.identified?.has(abs)) return Promise.resolve(ends);
    return lstatOrNull(ctx, abs).then((st) => {
      if (st === null || st === 'missing' || !sameFile(known, st)) return undefined;
      this.keep(abs, known);
      ctx.identified?.add(abs);
      return ends;
    });
  }

  /** The version the file at `abs` holds (see HeadVersion). */
  versionAt(ctx: ReadContext, abs: string): Promise<HeadVersion> {
    const known = ctx.identified?.has(abs) ? this.known.get(abs) : undefined;
    if (known) return Promise.resolve(known.held);
    return onNodeFs(ctx) ? Promise.resolve(this.versionAtNow(abs, ctx.identified)) : this.versionAtThrough(ctx, abs);
  }

  /** versionAt with node:fs's synchronous calls: a task opened reads the head of each of its files this way. */
  private versionAtNow(abs: string, identified: Set<string> | undefined): HeadVersion {
    const known = this.known.get(abs);
    if (known) {
      let st: Stats | undefined;
      try {
        st = lstatSync(abs, { throwIfNoEntry: false });
      } catch {
        st = undefined;
      }
      if (st === undefined) this.known.delete(abs);
      else if (sameFile(known, st)) {
        this.keep(abs, known);
        identified?.add(abs);
        return known.held;
      }
    }
    let fd: number;
    try {
      fd = openSync(abs, READ_FLAGS | constants.O_NOFOLLOW);
    } catch (err) {
      this.known.delete(abs);
      const code = errorCode(err);
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : null;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return null;
      const n = readSync(fd, HEAD, 0, Math.min(HEAD.length, st.size), 0);
      // A compressed segment's envelope head is what its first bytes inflate to (segment-compression.ts).
      const held = envelopeVersionOf(headFromSync(HEAD.subarray(0, n), st.size, (into) => readSync(fd, into, 0, into.length, 0)));
      this.keep(abs, { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, held });
      return held;
    } catch {
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /** versionAt through the context's own calls (a file system that injects faults, or models a disk). */
  private async versionAtThrough(ctx: ReadContext, abs: string): Promise<HeadVersion> {
    const known = this.known.get(abs);
    if (known) {
      const st = await lstatOrNull(ctx, abs);
      if (st === 'missing') {
        this.known.delete(abs);
        return 'missing';
      }
      if (st && sameFile(known, st)) {
        this.keep(abs, known);
        ctx.identified?.add(abs);
        return known.held;
      }
    }
    const read = await readHead(ctx, abs);
    if (read === 'missing') this.known.delete(abs);
    else if (read.stat) this.keep(abs, { ...identity(read.stat), held: read.held });
    return read === 'missing' ? 'missing' : read.held;
  }
}

/**
 * The buffer the synchronous reads read heads into (nothing else runs between a read and its parse): a KiB, so
 * a compressed segment's head as Waystation's writers keep it comes with the one read.
 */
const HEAD = Buffer.alloc(FIRST_HEAD_READ);

/**
 * True when the context's calls are node:fs's own (nodeFs, or its reads answered synchronously): its heads are
 * then read with node:fs's synchronous calls directly, with no handle and no promise per call. A file system
 * with calls of its own (one that injects faults) is read through them.
 */
function onNodeFs(ctx: ReadContext): boolean {
  const fs = ctx.fs;
  return fs.open === nodeFs.open && (fs.settled === true || syncReadsOf(fs) !== null);
}

function identity(st: Stats): Omit<Known, 'held'> {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

async function lstatOrNull(ctx: ReadContext, abs: string): Promise<Stats | 'missing' | null> {
  try {
    const sync = syncReadsOf(ctx.fs);
    return sync ? sync.lstat(abs) : await ctx.fs.lstat(abs);
  } catch (err) {
    const code = errorCode(err);
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : null;
  }
}

/** The head of the file at `abs`: the version its envelope holds, and the identity of what was read (none when it could not be). */
async function readHead(ctx: ReadContext, abs: string): Promise<'missing' | { held: number | null; stat: Stats | null }> {
  let handle: StoreFileHandle;
  try {
    handle = await ctx.fs.open(abs, READ_FLAGS | constants.O_NOFOLLOW);
  } catch (err) {
    const code = errorCode(err);
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : { held: null, stat: null };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { held: null, stat: null };
    return { held: envelopeVersionOf(await readHeadOf(handle, stat.size)), stat };
  } catch {
    return { held: null, stat: null };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The version the file at `abs` holds, through the store's memory of heads when the context has one. */
export function headVersion(ctx: ReadContext, abs: string): Promise<HeadVersion> {
  return (ctx.heads ?? new VersionHeads()).versionAt(ctx, abs);
}

/**
 * The problem of version file `n` whose envelope holds version `held`.
 * `setAside`: the file is past every version that reads, so the next save
 * moves it out of the way (set-aside.ts) and writes version `n` itself; a
 * warning then, as a torn hot snapshot is. Otherwise the versions after it
 * read and nothing will move it: an error, with what a person can do.
 */
export function misnumberedProblem(ctx: ReadContext, abs: string, n: number, held: number, setAside: boolean): Problem {
  const file = relPath(ctx, abs);
  if (setAside) {
    return {
      ...problem(
        file,
        'invariant',
        `the file is named for version ${n} but holds version ${held}: it is not used, and the next save moves it aside (to ${versionFileName(n)}${ASIDE_MARK}<inode> in ${VERSIONS_DIR}/) and writes version ${n}`,
      ),
      severity: 'warning',
    };
  }
  return problem(
    file,
    'invariant',
    `the file is named for version ${n} but holds version ${held}: version ${n}, and the versions rebuilt from it, do not read; nothing moves it, since later versions follow it (put version ${n}'s own file back under this name to read them again)`,
  );
}

/** Between a version file's name and the inode number, in the name a misnumbered file is moved aside to. */
export const ASIDE_MARK = '.misnumbered-';

/** True for the name a misnumbered file was moved aside to (`00000005.json.misnumbered-<inode>`), which no reader reads. */
export function isAsideName(name: string): boolean {
  return /^\d{8}\.json\.misnumbered-\d+$/.test(name);
}
