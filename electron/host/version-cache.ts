/**
 * The last few versions the host rebuilt, kept by task and version number.
 *
 * Comparing versions of a long task means rebuilding two checkpoints of
 * megabytes each (a full snapshot, deltas, validation): far more than the
 * diff itself, and a user comparing versions asks for the same ones again
 * (another pair of the same range, the same pair after a refresh). A version
 * never changes once written, so a rebuilt one stays right for as long as its
 * version file is the same file: each entry remembers the identity of that
 * file (device, inode, size, modification time), and a task folder removed
 * and written anew, whose versions reuse the numbers, is rebuilt. A version
 * with no version file of its own (a legacy task, a hot snapshot alone, a
 * version appended to a segment, whose file grows while the segment fills)
 * is never kept.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { isSafeTaskId } from '../store/directory-scan.js';
import { versionPath } from '../store/version-file.js';

/** How many rebuilt versions are kept: a diff needs two, stepping through a history reuses one of them. */
export const VERSION_CACHE_SIZE = 4;

interface Kept {
  checkpoint: Checkpoint;
  file: string;
}

/** A small LRU of rebuilt versions of the tasks under one root; see the module comment. */
export class VersionCache {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly root: string,
    private readonly capacity = VERSION_CACHE_SIZE,
  ) {}

  /**
   * Version `version` of `taskId`: kept, or loaded with `load` and kept when
   * it has a version file. The checkpoint is shared between callers: read it,
   * never change it.
   */
  async get(taskId: string, version: number, load: () => Promise<Checkpoint>): Promise<Checkpoint> {
    const key = `${taskId}\u0000${version}`;
    // Taken before loading: should the file change during the load, the entry is kept under the old identity and never matches again.
    const file = await this.identity(taskId, version);
    const hit = this.kept.get(key);
    const checkpoint = hit && file !== null && hit.file === file ? hit.checkpoint : await load();
    this.keep(key, checkpoint, file);
    return checkpoint;
  }

  /**
   * Versions `versions` of `taskId`, in that order: those kept, and the others
   * loaded together with `loadMany` (in the order given to it) and kept as
   * `get` keeps them. The checkpoints are shared between callers.
   */
  async getMany(
    taskId: string,
    versions: readonly number[],
    loadMany: (missing: number[]) => Promise<Checkpoint[]>,
  ): Promise<Checkpoint[]> {
    const files = await Promise.all(versions.map((v) => this.identity(taskId, v)));
    const out = new Map<number, Checkpoint>();
    versions.forEach((v, i) => {
      const key = `${taskId}\u0000${v}`;
      const hit = this.kept.get(key);
      if (hit && files[i] !== null && hit.file === files[i]) out.set(v, hit.checkpoint);
    });
    const missing = [...new Set(versions.filter((v) => !out.has(v)))];
    const loaded = missing.length > 0 ? await loadMany(missing) : [];
    missing.forEach((v, i) => out.set(v, loaded[i]));
    versions.forEach((v, i) => this.keep(`${taskId}\u0000${v}`, out.get(v)!, files[i]));
    return versions.map((v) => out.get(v)!);
  }

  /** Keep `checkpoint` under `key` as the most recently used, when it has a version file. */
  private keep(key: string, checkpoint: Checkpoint, file: string | null): void {
    this.kept.delete(key);
    if (file === null) return;
    this.kept.set(key, { checkpoint, file });
    // Maps iterate in insertion order, and a hit is re-inserted: the first key is the least recently used.
    while (this.kept.size > this.capacity) this.kept.delete(this.kept.keys().next().value!);
  }

  /** The identity of the version's file, or null when it has none. */
  private async identity(taskId: string, version: number): Promise<string | null> {
    if (!isSafeTaskId(taskId)) return null;
    const st = await stat(versionPath(path.join(this.root, taskId), version), { bigint: true }).catch(() => null);
    return st?.isFile() ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}` : null;
  }
}
