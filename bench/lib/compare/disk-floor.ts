/**
 * What the disk alone charges for one step on each side, measured in the same
 * run and in the same folder as the comparison: the file operations of a step
 * with a few KiB of bytes, and none of the code around them.
 *
 * - Waystation's commit protocol (docs/FORMAT.md, "Writing"): a new temp file
 *   written and fsynced, linked to its version name, the temp name removed,
 *   the folder fsynced. (The hot snapshot and the event line, written without
 *   fsync, are left out.)
 * - SQLite in WAL mode with synchronous=FULL, as LangGraph uses it: two commits
 *   a step (putWrites, then put), each an append to the one log file followed
 *   by fsync (better-sqlite3's SQLite syncs its log with fsync: two a step).
 *
 * The gap between the two is what a Waystation save pays for its version being
 * a file of its own before any of its code runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { msSince, nowNs } from '../timing.js';

export interface DiskFloor {
  /** Steps timed on each side. */
  iterations: number;
  /** Bytes of each file (Waystation) and of each append (SQLite). */
  bytes: number;
  /** Milliseconds per step, in order. */
  waystationMs: number[];
  sqliteMs: number[];
}

/** Time `iterations` steps of each protocol, alternating in rounds so both meet the same disk weather. */
export function measureDiskFloor(dir: string, opts: { iterations?: number; bytes?: number } = {}): DiskFloor {
  const iterations = opts.iterations ?? 200;
  const bytes = opts.bytes ?? 4096;
  const data = Buffer.alloc(bytes, 0x61);
  const versions = path.join(dir, 'versions');
  fs.mkdirSync(versions, { recursive: true });
  const log = fs.openSync(path.join(dir, 'wal'), 'a');
  const waystationMs: number[] = [];
  const sqliteMs: number[] = [];
  try {
    const rounds = 10;
    const perRound = Math.max(1, Math.ceil(iterations / rounds));
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < perRound; i++) {
        const n = waystationMs.length;
        const start = nowNs();
        const temp = path.join(versions, `.${n}.tmp`);
        const fd = fs.openSync(temp, 'wx');
        fs.writeSync(fd, data);
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        fs.linkSync(temp, path.join(versions, `${n}.json`));
        fs.unlinkSync(temp);
        const dirFd = fs.openSync(versions, 'r');
        fs.fsyncSync(dirFd);
        fs.closeSync(dirFd);
        waystationMs.push(msSince(start));
      }
      for (let i = 0; i < perRound; i++) {
        const start = nowNs();
        for (let commit = 0; commit < 2; commit++) {
          fs.writeSync(log, data);
          fs.fsyncSync(log);
        }
        sqliteMs.push(msSince(start));
      }
    }
  } finally {
    fs.closeSync(log);
  }
  return { iterations: waystationMs.length, bytes, waystationMs, sqliteMs };
}
