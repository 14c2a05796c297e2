/**
 * How much a store occupies on disk.
 *
 * Two figures, because they answer different questions: the apparent size
 * (sum of file lengths) is what the data costs and compares across file
 * systems; the allocated size (blocks) is what the disk actually gives up,
 * and punishes many small files on a file system with 4 KiB blocks.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

export interface DiskUsage {
  /** Sum of the files' lengths in bytes. */
  apparentBytes: number;
  /** Sum of the blocks the files occupy (st_blocks * 512), in bytes. */
  allocatedBytes: number;
  files: number;
}

/**
 * Disk usage of every regular file under `dir`, recursively.
 *
 * Symlinks are not followed (a store never relies on them, and following one
 * could count a file twice). A missing `dir` is an error: measuring a path
 * that was never written would print a misleading 0.
 */
export async function directorySize(dir: string): Promise<DiskUsage> {
  const usage: DiskUsage = { apparentBytes: 0, allocatedBytes: 0, files: 0 };
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    for (const entry of await fs.readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile()) add(usage, await fs.lstat(full));
    }
  }
  return usage;
}

/**
 * Disk usage of the listed files; files that do not exist count as 0.
 *
 * Meant for stores made of a few known files whose companions come and go,
 * like SQLite's `db`, `db-wal` and `db-shm`.
 */
export async function filesSize(files: readonly string[]): Promise<DiskUsage> {
  const usage: DiskUsage = { apparentBytes: 0, allocatedBytes: 0, files: 0 };
  for (const file of files) {
    try {
      add(usage, await fs.lstat(file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return usage;
}

function add(usage: DiskUsage, stat: { size: number; blocks: number }): void {
  usage.apparentBytes += stat.size;
  usage.allocatedBytes += stat.blocks * 512;
  usage.files += 1;
}
