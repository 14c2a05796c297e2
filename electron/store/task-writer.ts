/**
 * The save protocol of one task (docs/FORMAT.md, "The write protocol"), and
 * the writer state that keeps a save's cost independent of the task's length.
 *
 * The state (last version, its checkpoint, the size of the last full snapshot
 * and the delta bytes since) is derived from disk once, by rebuilding the
 * newest version, and then kept in memory; history and results are never
 * re-read or re-serialised.
 *
 * The checkpoint is kept deeply frozen (frozen-json.ts), and each save builds
 * the next one by replacing only the units that changed, so unchanged parts
 * stay the same objects: the diff skips them by identity, validation parses
 * only the changed units, and the encoder reuses their remembered JSON. A save
 * costs what changed, plus pointer comparisons and one copy of the bytes of
 * the containers that hold a change (the plan array, the document).
 *
 * A save made under the task's lease (SaveRequest.lease) may append its
 * version to the file the writer's last commit created, instead of creating
 * a file: one write and one fdatasync, where a file costs two fsyncs that
 * each commit a new inode and directory entry. The file then holds up to
 * SEGMENT_VERSIONS versions, and checkpoint.json is written when it is full
 * or the lease is let go (`settle`), so it names the last version of a
 * segment, and the next version is always a file of its own: a reader that
 * finds no file after the hot snapshot's version knows it is current.
 */
import { describeFolderError } from './disk-errors.js';
import { constants } from 'node:fs';
import path from 'node:path';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { EncodeArena, encodeJson } from './frozen-json.js';
import { buildVersion, KEYFRAME_DELTA_RATIO, type BuiltVersion } from './version-build.js';
import { ConflictError, ReadOnlyError, StoreWriteError, TaskReadError, type SaveRequest, type SaveResult } from './store-types.js';
import { commitCreate, commitReplace, removeQuietly, syncDir, writeTemp } from './atomic-file.js';
import { checkFileSize, checkValueDepth } from './write-limits.js';
import { compressSegment, isCompressed } from './segment-compression.js';
import { redactSaveRequest, secretsOf } from './redact.js';
import { exists, insideRoot, relPath, type ReadContext } from './file-reader.js';
import { heldPast, HOT_FILE, listVersionNumbers, loadVersion, newestVersion, readHot } from './task-reader.js';
import {
  encodeDelta,
  encodeFull,
  fullEnvelopeBytes,
  locateRecord,
  VERSIONS_DIR,
  versionPath,
  type EncodedVersion,
} from './version-file.js';
import { SEGMENT_VERSIONS } from './version-records.js';
import { errorCode, READ_FLAGS, syncReadsOf, type StoreFileHandle } from './store-fs.js';
import { LEASE_DIR, leaseEntryName } from './file-lease.js';
import { LeaseLostError } from './lease-rules.js';
import { setAsideMisnumbered } from './set-aside.js';
import { HistoryIndexWriter, type ChunkPlace } from './history-index.js';
import { parseBlobRef, type EncodedBlob } from './blob-store.js';

type Json = Record<string, unknown>;

/** The file this writer appends versions to, open. */
interface OpenSegment {
  /** The version the file is named for. */
  first: number;
  handle: StoreFileHandle;
  /** Bytes of the file, all of them this writer's sealed records. */
  size: number;
  /** Versions it holds. */
  count: number;
}

interface WriterState {
  lastVersion: number;
  /**
   * The last version's checkpoint, equal to what is on disk. When trusted, it is
   * the sealed (deeply frozen) checkpoint this writer saved, also handed to the
   * caller as SaveResult.checkpoint; otherwise the JSON as read from disk.
   */
  base: Json | null;
  /** Bytes of the last full snapshot. */
  fullBytes: number;
  /** Bytes of the deltas written since it. */
  deltaSince: number;
  /** Why the task must not be written (a future schema), or null. */
  readOnly: string | null;
  /**
   * The base is a checkpoint this writer validated (defaults filled), so the
   * next save need only validate what changed. False for a base read from disk.
   */
  trusted: boolean;
  /** Misnumbered files moved aside while the state was derived (set-aside.ts), told with the next save's result. */
  setAside?: Problem[];
  /** The secrets (redact.ts, `secretsOf`) the base was scrubbed of, when this writer built it. */
  scrubbedOf?: readonly string[];
}

/** Writes the versions of one task. Callers serialise calls per task. */
export class TaskWriter {
  private state: WriterState | null = null;
  private segment: OpenSegment | null = null;
  /** The buffers this task's documents are encoded into, in turn (see EncodeArena). */
  private readonly arena = new EncodeArena();
  /** Where the history chunks this writer committed lie, until they are written to the history index. */
  private readonly index = new HistoryIndexWriter();
  /** The full segments being compressed, in turn (segment-compression.ts); settled before the lease is let go. */
  private packing: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: ReadContext,
    readonly taskId: string,
    readonly taskDir: string,
  ) {}

  /** Forget the cached state: the next save re-derives it from disk, and starts a new file. */
  async invalidate(): Promise<void> {
    this.state = null;
    await this.closeSegment();
    await this.index.flush(this.ctx.fs, this.taskDir);
  }

  /** Stop appending: the next save starts a new file. */
  private async closeSegment(): Promise<void> {
    const segment = this.segment;
    this.segment = null;
    await segment?.handle.close().catch(() => undefined);
  }

  /**
   * End the segment being appended to, if any: checkpoint.json is brought up
   * to the last version and the next save starts a new file. Called when the
   * lease is let go; returns what could not be done, as warnings.
   */
  async settle(): Promise<Problem[]> {
    await this.packing;
    await this.index.flush(this.ctx.fs, this.taskDir);
    if (!this.segment) return [];
    await this.closeSegment();
    const state = this.state;
    return state?.base ? this.writeHot(encodeJson(state.base, this.arena), state.lastVersion) : [];
  }

  /** The version the writer believes is newest (deriving it if needed). */
  async lastVersion(): Promise<number> {
    return (await this.ensureState()).lastVersion;
  }

  /**
   * Refuse to write through a task folder that is a symlink out of the root:
   * readers never follow one, and a writer must not either, or a task id
   * could plant files anywhere the process may write.
   */
  private async assertInsideRoot(): Promise<void> {
    let real: string;
    try {
      real = await this.ctx.fs.realpath(this.taskDir);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return; // a new task: mkdir creates a plain folder inside the root
      throw new StoreWriteError(this.taskId, [
        problem(
          relPath(this.ctx, this.taskDir),
          'io',
          `cannot resolve the task folder (${errorCode(err) ?? String(err)}); nothing was written`,
        ),
      ]);
    }
    if (!insideRoot(this.ctx, real)) {
      throw new StoreWriteError(this.taskId, [
        problem(
          relPath(this.ctx, this.taskDir),
          'outside-root',
          `the task folder is a symlink to ${real}, outside the checkpoint directory; nothing was written`,
        ),
      ]);
    }
  }

  /**
   * Derive the state from disk: the hot snapshot names a version, a stat per
   * newer version file (and the last seal of each segment found) finds the
   * newest, and rebuilding that version gives the base and the keyframe
   * counters (at most about two snapshots of reading).
   */
  private async deriveState(): Promise<WriterState> {
    await this.assertInsideRoot();
    const setAside: Problem[] = [];
    for (;;) {
      const newest = await this.newestOnDisk();
      if (newest === 0)
        throw new TaskReadError(this.taskId, [
          problem(relPath(this.ctx, this.taskDir), 'missing-version', 'the task has no versions to save after'),
        ]);
      const loaded = await loadVersion(this.ctx, this.taskDir, newest);
      if (!loaded.ok) {
        // A file named for the newest version that holds another (copied or renamed there) is not a version: it
        // is moved out of the way, as a torn record is passed over, and the task stands at the version before it.
        const moved = await setAsideMisnumbered(this.ctx, this.taskId, this.taskDir, newest);
        if (moved !== null) {
          setAside.push(
            problem(
              relPath(this.ctx, versionPath(this.taskDir, newest)),
              'invariant',
              `the file was named for version ${newest} but held another version: it was moved to ${moved}, and this save follows version ${newest - 1}`,
            ),
          );
          continue;
        }
        // The next version is built on the newest one; when it does not read, nothing can follow it.
        throw new TaskReadError(
          this.taskId,
          loaded.problems.map((p) => ({ ...p, message: `${p.message}; a save must follow version ${newest}, so nothing was written` })),
        );
      }
      const readOnly = loaded.readOnly
        ? (loaded.problems.find((p) => p.reason === 'future-schema')?.message ?? 'written by a newer Waystation')
        : null;
      return {
        lastVersion: newest,
        base: loaded.doc as Json,
        fullBytes: loaded.fullBytes,
        deltaSince: loaded.deltaBytes,
        readOnly,
        trusted: false,
        setAside,
      };
    }
  }

  /**
   * The newest version on disk: the hot snapshot names a version, and a stat
   * per newer version file (and the last seal of each segment found) finds
   * the newest; without a usable hot snapshot, the listing of `versions/`.
   */
  private async newestOnDisk(): Promise<number> {
    const hot = await readHot(this.ctx, this.taskDir);
    let newest = 0;
    if (hot.ok && typeof (hot.value as Json)?.version === 'number' && Number.isInteger((hot.value as Json).version)) {
      newest = (hot.value as Json).version as number;
      // A hot snapshot ahead of the versions folder would be a foreign writer's bug; the folder decides.
      if (newest > 0 && !(await locateRecord(this.ctx, this.taskDir, newest)).ok) newest = 0;
    }
    if (newest === 0) {
      const numbers = await listVersionNumbers(this.ctx, this.taskDir);
      return numbers.length ? numbers[numbers.length - 1] : 0;
    }
    return (await newestVersion(this.ctx, this.taskDir, newest)).newest;
  }

  private async ensureState(): Promise<WriterState> {
    this.state ??= await this.deriveState();
    return this.state;
  }

  /** Write version 1 of a new task. */
  async create(request: Omit<SaveRequest, 'expectedVersion'>): Promise<SaveResult> {
    const fs = this.ctx.fs;
    await this.assertInsideRoot();
    try {
      await fs.mkdir(path.join(this.taskDir, VERSIONS_DIR));
      // A new folder's name is durable only once its parent is fsynced: without these a power cut could lose
      // the whole task, or keep version 1 without the versions/ folder every later save writes into.
      await syncDir(fs, this.taskDir);
      await syncDir(fs, path.dirname(this.taskDir));
    } catch (err) {
      const why =
        describeFolderError(err, path.join(this.taskDir, VERSIONS_DIR), 'the task folder', 'nothing was written') ??
        `cannot create the task folder (${errorCode(err) ?? String(err)}); nothing was written`;
      throw new StoreWriteError(this.taskId, [problem(relPath(this.ctx, this.taskDir), 'io', why)]);
    }
    if (await exists(this.ctx, versionPath(this.taskDir, 1))) throw new ConflictError(this.taskId, 1);
    this.state = { lastVersion: 0, base: null, fullBytes: 0, deltaSince: 0, readOnly: null, trusted: false };
    return this.write({ ...request, expectedVersion: 0 });
  }

  /** Write the version after `request.expectedVersion`. */
  async save(request: SaveRequest): Promise<SaveResult> {
    let state = await this.ensureState();
    if (request.expectedVersion !== state.lastVersion) {
      // Another process may have written since the state was derived.
      await this.invalidate();
      state = await this.ensureState();
    }
    if (state.readOnly) throw new ReadOnlyError(this.taskId, `${state.readOnly}; Waystation never writes over a newer schema`);
    if (request.expectedVersion < state.lastVersion) throw new ConflictError(this.taskId, request.expectedVersion + 1);
    if (request.expectedVersion > state.lastVersion) {
      throw new StoreWriteError(this.taskId, [
        problem(
          relPath(this.ctx, this.taskDir),
          'conflict',
          `the task is at version ${state.lastVersion}, so there is no version ${request.expectedVersion} to save after; nothing was written`,
        ),
      ]);
    }
    return this.write(request);
  }

  private async write(raw: SaveRequest): Promise<SaveResult> {
    const state = this.state!;
    // No secret is written, whoever wrote the request (redact.ts). What the request shares with the checkpoint
    // this writer built from the last save, scrubbed of the same secrets, is not walked again.
    const secrets = secretsOf();
    const request = redactSaveRequest(raw, secrets, state.scrubbedOf === secrets ? state.base : undefined);
    const next = state.lastVersion + 1;
    // Named only for a refusal's message: an accepted save does not build the name.
    const versionName = () => relPath(this.ctx, versionPath(this.taskDir, next));
    // What a reader would refuse is never written (write-limits.ts): checked before anything else, deep values first.
    // A base this writer built passed the same check, so what the request shares with it is not walked again.
    checkValueDepth(
      this.taskId,
      versionName,
      { checkpoint: request.checkpoint, results: request.results, messages: request.appendHistory },
      state.trusted ? state.base : undefined,
    );
    const { normalized, blobs, ops } = this.build(request, next, state);
    // Only the lease holder appends: no other writer may be adding to the task (docs/FORMAT.md, "Segments").
    const appendable = request.lease?.held === true && request.lease.taskId === this.taskId;
    const open = this.segment;
    let segment = appendable && open !== null && open.first + open.count === next ? open : null;

    // The document is encoded once, mostly from remembered fragments; the hot snapshot and a full snapshot share
    // the bytes, which live in the writer's arena and so are only valid until the save after next.
    const docBytes = encodeJson(normalized, this.arena);
    const fullBytes = fullEnvelopeBytes(next, docBytes.length);
    let encoded: EncodedVersion | null = null;
    if (ops !== null) {
      const delta = encodeDelta(next, ops, blobs, appendable);
      // Keyframe rule: once the deltas since the last snapshot would outweigh two snapshots, write one. A rebuild
      // then parses at most about three snapshots' worth, and snapshots take a third of the history's envelopes.
      // Carried blobs do not count: a rebuild parses envelopes only.
      if (state.deltaSince + delta.envelopeBytes < KEYFRAME_DELTA_RATIO * fullBytes) encoded = delta;
    }
    const isFull = encoded === null;
    encoded ??= encodeFull(next, docBytes, blobs, appendable);
    checkFileSize(this.taskId, versionName, encoded.bytes.length, this.ctx.maxFileBytes);
    checkFileSize(this.taskId, () => relPath(this.ctx, path.join(this.taskDir, HOT_FILE)), docBytes.length, this.ctx.maxFileBytes);
    // A segment stays within the size a reader loads: a version that would take it over starts a file of its own.
    if (segment && segment.size + encoded.bytes.length > this.ctx.maxFileBytes) segment = null;
    if (!segment) await this.closeSegment();

    if (request.lease) await this.fence(request.lease);
    const chunk = chunkPlace(normalized, state.base, next, blobs, encoded, segment ? [segment.first, segment.size] : [next, 0]);
    const warnings = segment ? await this.append(segment, next, encoded, docBytes) : await this.commit(next, encoded, docBytes, appendable);
    if (state.setAside) warnings.unshift(...state.setAside.map((p) => ({ ...p, severity: 'warning' as const })));
    // Committed: the history index may point readers at the chunk. Its lines are written when the segment closes
    // (a writer without the lease closes none: a segment's worth of chunks at a time).
    if (chunk) this.index.note(chunk.ref, chunk.prev, chunk.place);
    if ((appendable && this.segment === null) || this.index.pending >= SEGMENT_VERSIONS) await this.index.flush(this.ctx.fs, this.taskDir);

    this.state = {
      lastVersion: next,
      base: normalized,
      fullBytes: isFull ? fullBytes : state.fullBytes,
      deltaSince: isFull ? 0 : state.deltaSince + encoded.envelopeBytes,
      readOnly: null,
      trusted: true,
      scrubbedOf: secrets,
    };
    return {
      checkpoint: normalized as unknown as Checkpoint,
      bytesWritten: encoded.bytes.length,
      ...(warnings.length ? { warnings } : {}),
    };
  }

  /**
   * Refuse a save under a lease that was taken over: a takeover (or a
   * release) writes the entry after the holder's, so its presence means the
   * holder's generation is over. One stat, just before the commit point.
   */
  private async fence(lease: NonNullable<SaveRequest['lease']>): Promise<void> {
    if (lease.taskId !== this.taskId) return;
    const next = path.join(this.taskDir, LEASE_DIR, leaseEntryName(lease.generation + 1));
    // A lookup that fails says nothing about a takeover: the save goes on, and its own commit reports the fault.
    const sync = syncReadsOf(this.ctx.fs);
    const superseded = await Promise.resolve()
      .then(() => (sync ? sync.exists(next) : this.ctx.fs.exists(next)))
      .catch(() => false);
    if (superseded) {
      await this.closeSegment();
      throw new LeaseLostError(this.taskId);
    }
  }

  /**
   * Version `next` as a file of its own (docs/FORMAT.md, "The write
   * protocol"). With `appendable`, the file is kept open for the versions
   * after it and checkpoint.json is left behind, at the version before it;
   * otherwise checkpoint.json is brought up to this version.
   */
  private async commit(next: number, encoded: EncodedVersion, docBytes: Uint8Array, appendable: boolean): Promise<Problem[]> {
    const fs = this.ctx.fs;
    const versionFile = versionPath(this.taskDir, next);
    const hotFile = path.join(this.taskDir, HOT_FILE);

    // 1. In parallel: the version's temp file (envelope and the blobs it carries) fsynced, and the hot snapshot's
    //    temp file written without fsync. checkpoint.json is a view derived from the versions: fsyncing it would
    //    cost a write of the whole document to the disk on every save, and a reader that finds it torn or behind
    //    after a power cut reads the newest version instead (docs/FORMAT.md).
    const [versionTemp, hotTemp] = await Promise.allSettled([
      writeTemp(fs, versionFile, encoded.bytes),
      appendable ? Promise.resolve(null) : writeTemp(fs, hotFile, docBytes, { sync: false }),
    ]);
    const removeHotTemp = () =>
      hotTemp.status === 'fulfilled' && hotTemp.value !== null ? removeQuietly(fs, hotTemp.value) : Promise.resolve();
    if (versionTemp.status === 'rejected' || hotTemp.status === 'rejected') {
      await Promise.all([versionTemp.status === 'fulfilled' ? removeQuietly(fs, versionTemp.value) : undefined, removeHotTemp()]);
      const [file, reason] =
        versionTemp.status === 'rejected' ? [versionFile, versionTemp.reason] : [hotFile, (hotTemp as PromiseRejectedResult).reason];
      throw this.ioError(file, reason, next);
    }

    // 2. The commit point: link fails if another writer already created this version. A record of it appended to
    //    the file of the version before (by a lease holder that has not noticed a takeover yet) would lose to
    //    this file, so that counts as another writer having got there first too.
    let won: boolean;
    // The temp name is removed while versions/ is fsynced, not before.
    const removals: Promise<void>[] = [];
    try {
      won = !(next > 1 && (await heldPast(this.ctx, this.taskDir, next - 1)));
      if (won) won = await commitCreate(fs, versionTemp.value, versionFile, removals);
      else await removeQuietly(fs, versionTemp.value);
    } catch (err) {
      await removeHotTemp();
      throw this.ioError(versionFile, err, next);
    }
    if (!won) {
      // The losing save wrote only temp files, and they are gone: its blobs were never anywhere else.
      await Promise.all([removeHotTemp(), ...removals]);
      await this.invalidate();
      throw new ConflictError(this.taskId, next);
    }

    // The version is saved; what follows only makes it durable and brings the hot snapshot up to date.
    const warnings: Problem[] = [];
    try {
      // 3. The version is durable once versions/ is. Only then is checkpoint.json renamed: had that rename
      //    reached the disk before the version's link, a power cut could leave the hot snapshot naming a
      //    version the folder lost.
      const [synced] = await Promise.allSettled([syncDir(fs, path.dirname(versionFile)), ...removals]);
      if (synced.status === 'rejected') throw synced.reason;
      if (hotTemp.value !== null) warnings.push(...(await this.replaceHot(hotTemp.value, next)));
      else await this.openSegment(versionFile, next, encoded.bytes.length, warnings, docBytes);
    } catch (err) {
      await removeHotTemp();
      warnings.push(
        problem(
          relPath(this.ctx, versionFile),
          'io',
          `version ${next} is written but versions/ could not be fsynced (${errorCode(err) ?? String(err)}), so a power cut may still lose it; checkpoint.json was left at version ${next - 1}`,
        ),
      );
    }
    return warnings;
  }

  /** Keep the file just committed open for the versions after it; when it cannot be, bring the hot snapshot up instead. */
  private async openSegment(file: string, first: number, size: number, warnings: Problem[], docBytes: Uint8Array): Promise<void> {
    try {
      this.segment = { first, handle: await this.ctx.fs.open(file, 'r+'), size, count: 1 };
    } catch {
      warnings.push(...(await this.writeHot(docBytes, first)));
    }
  }

  /**
   * Version `next` appended to the open segment and made durable with one
   * fdatasync: its commit point. A save that fails takes its bytes back off
   * the file, so nothing of it is read.
   */
  private async append(segment: OpenSegment, next: number, encoded: EncodedVersion, docBytes: Uint8Array): Promise<Problem[]> {
    const file = versionPath(this.taskDir, segment.first);
    // A version's own file supersedes its record in a segment: one made by a writer without the lease wins.
    if (await exists(this.ctx, versionPath(this.taskDir, next))) {
      await this.invalidate();
      throw new ConflictError(this.taskId, next);
    }
    try {
      await segment.handle.write(encoded.bytes, segment.size);
      await segment.handle.datasync();
    } catch (err) {
      const undone = await segment.handle.truncate(segment.size).then(
        () => true,
        () => false,
      );
      await this.closeSegment();
      if (undone) throw this.ioError(file, err, next);
      const code = errorCode(err) ?? String(err);
      throw new StoreWriteError(this.taskId, [
        problem(
          relPath(this.ctx, file),
          'io',
          `could not save version ${next} (${code}), and its bytes could not be taken back off the file: readers may show version ${next} until the next save, which writes it as a file of its own`,
        ),
      ]);
    }
    segment.size += encoded.bytes.length;
    segment.count++;
    if (segment.count < SEGMENT_VERSIONS) return [];
    await this.closeSegment();
    this.pack(file, segment.size);
    return this.writeHot(docBytes, next);
  }

  /**
   * Compress the full segment at `abs`, `size` bytes of this writer's records,
   * beside the saves that follow (segment-compression.ts). A file that is not
   * what this writer left (another size, gone) is left alone, and a failure
   * leaves the segment as it was: it reads the same either way.
   */
  private pack(abs: string, size: number): void {
    this.packing = this.packing.then(async () => {
      // Not through a link: the segment this writer filled is a file (O_NOFOLLOW), and the same one is renamed over.
      const handle = await this.ctx.fs.open(abs, READ_FLAGS | constants.O_NOFOLLOW).catch(() => null);
      if (!handle) return;
      try {
        const st = await handle.stat();
        if (!st.isFile() || st.size !== size) return;
        const bytes = await handle.readFile();
        if (bytes.length !== size || isCompressed(bytes)) return;
        await compressSegment(this.ctx.fs, abs, bytes, st);
      } catch {
        // Compression saves space, and the segment reads the same without it.
      } finally {
        await handle.close().catch(() => undefined);
      }
    });
  }

  /** checkpoint.json brought up to `version`, not fsynced (see commit); a failure is a warning, never an error. */
  private async writeHot(docBytes: Uint8Array, version: number): Promise<Problem[]> {
    let temp: string;
    try {
      temp = await writeTemp(this.ctx.fs, path.join(this.taskDir, HOT_FILE), docBytes, { sync: false });
    } catch (err) {
      return [this.hotWarning(version, err)];
    }
    return this.replaceHot(temp, version);
  }

  /**
   * Not fsynced (neither the file nor the task folder): losing this rename leaves the hot snapshot behind. The old
   * file is removed first: renamed over, ext4 writes the new one's data out before the rename returns
   * (auto_da_alloc), a millisecond per megabyte on every save. A reader that looks in between finds no
   * checkpoint.json and reads the newest version, as after a power cut.
   */
  private async replaceHot(temp: string, version: number): Promise<Problem[]> {
    const hotFile = path.join(this.taskDir, HOT_FILE);
    try {
      await removeQuietly(this.ctx.fs, hotFile);
      await commitReplace(this.ctx.fs, temp, hotFile);
      return [];
    } catch (err) {
      await removeQuietly(this.ctx.fs, temp);
      return [this.hotWarning(version, err)];
    }
  }

  private hotWarning(version: number, err: unknown): Problem {
    const hotFile = path.join(this.taskDir, HOT_FILE);
    return problem(
      relPath(this.ctx, hotFile),
      'io',
      `version ${version} is saved but checkpoint.json could not be updated (${errorCode(err) ?? String(err)}); readers use the version files and the next save rewrites it`,
    );
  }

  /** Assemble and validate the next checkpoint (version-build.ts); a writer bug throws here, before anything touches the disk. */
  private build(request: SaveRequest, next: number, state: WriterState): BuiltVersion {
    return buildVersion(request, next, {
      taskId: this.taskId,
      base: state.base,
      trusted: state.trusted,
      file: relPath(this.ctx, versionPath(this.taskDir, next)),
    });
  }

  private ioError(file: string, err: unknown, next: number): StoreWriteError {
    const code = errorCode(err) ?? (err instanceof Error ? err.message : String(err));
    return new StoreWriteError(this.taskId, [
      problem(
        relPath(this.ctx, file),
        'io',
        `could not save version ${next} (${code}); nothing was written and version ${next - 1} is intact`,
      ),
    ]);
  }
}

/**
 * Where the history chunk version `next` introduced lies in its file, for the
 * history index: the version's record starts at byte `at[1]` of the file
 * named for version `at[0]`. Null when the version added no chunk.
 */
function chunkPlace(
  normalized: Json,
  base: Json | null,
  next: number,
  blobs: readonly EncodedBlob[],
  encoded: EncodedVersion,
  at: readonly [number, number],
): { ref: string; prev: string | null; place: ChunkPlace } | null {
  const head = (normalized.history as { head?: unknown } | undefined)?.head;
  const ref = typeof head === 'string' ? parseBlobRef(head) : null;
  if (!ref || ref.version !== next) return null;
  const i = blobs.findIndex((b) => b.hex === ref.hex);
  const span = encoded.blobSpans[i];
  if (!span) return null;
  const prev = (base?.history as { head?: unknown } | undefined)?.head;
  return { ref: head as string, prev: typeof prev === 'string' ? prev : null, place: [at[0], at[1] + span[0], at[1] + span[1]] };
}
