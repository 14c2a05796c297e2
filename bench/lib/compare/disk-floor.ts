/**
 * What the disk alone charges for one step under each storage design,
 * measured in the same run and in the same folder as the comparison: the file
 * operations of a step with a few KiB of bytes, and none of the code around
 * them.
 *
 * - `commit`: Waystation's commit protocol (docs/FORMAT.md, "The write
 *   protocol"): a new temp file written and fsynced, linked to its version
 *   name, the temp name removed, the folder fsynced.
 * - `save`: every file operation of a Waystation save of a file of its own
 *   (a save without the lease, and every save before segments): the commit
 *   protocol, then the hot snapshot replaced (a temp file written without
 *   fsync, the old one removed, the temp renamed in) and the event line
 *   appended.
 * - `append`: a design where the versions of a task are records appended to
 *   one open file (one write and one fdatasync a save), with the hot snapshot
 *   and the event line as in `save`.
 * - `append-rotated`: the same appends, but the hot snapshot is replaced only
 *   every 16th save, and that save starts a new file with the commit protocol:
 *   what a Waystation save under the task's lease does (docs/FORMAT.md,
 *   "Segments"), where a segment starts its file on one save and replaces the
 *   hot snapshot on its last, the same operations a sixteenth of the saves each.
 * - `sqlite`: SQLite in WAL mode with synchronous=FULL, as LangGraph uses it:
 *   two commits a step (putWrites, then put), each an append to the one log
 *   file followed by fsync (better-sqlite3's SQLite syncs its log with fsync).
 *
 * `commit` against `sqlite` is what a save pays for its version being a file
 * of its own; `append-rotated` against `sqlite` is what segments buy on this
 * disk before any code runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { msSince, nowNs } from '../timing.js';

export type FloorProtocol = 'commit' | 'save' | 'append' | 'append-rotated' | 'sqlite';

/** What each protocol does, for the report. */
export const FLOOR_PROTOCOLS: Readonly<Record<FloorProtocol, string>> = {
  commit: "Waystation's commit protocol: a new file written and fsynced, linked to its version name, the folder fsynced",
  save: "a Waystation save's file operations: the commit protocol, the hot snapshot replaced (no fsync), the event line appended",
  append: 'a version appended to an open file and fdatasynced; hot snapshot replaced and event line appended every save',
  'append-rotated': 'the same appends, the hot snapshot replaced every 16th save, that save starting a new file with the commit protocol',
  sqlite: "SQLite's WAL step: two commits, each an append and fsync",
};

/** Saves between two hot snapshots in the `append-rotated` design. */
const ROTATE_EVERY = 16;

export interface DiskFloor {
  /** Steps timed for each protocol. */
  iterations: number;
  /** Bytes of each version file or append. */
  bytes: number;
  /** Bytes of the hot snapshot written by the protocols that write one. */
  hotBytes: number;
  /** Milliseconds per step, in order, for each protocol. */
  ms: Record<FloorProtocol, number[]>;
}

/**
 * Time `iterations` steps of each protocol, alternating in rounds so that all
 * of them meet the same disk weather. Each protocol writes into a task folder
 * of its own, created before the first round.
 */
export function measureDiskFloor(dir: string, opts: { iterations?: number; bytes?: number; hotBytes?: number } = {}): DiskFloor {
  const iterations = opts.iterations ?? 200;
  const bytes = opts.bytes ?? 4096;
  const hotBytes = opts.hotBytes ?? 8192;
  const record = Buffer.alloc(bytes, 0x61);
  const hot = Buffer.alloc(hotBytes, 0x62);
  const event = Buffer.alloc(96, 0x63);
  const protocols = Object.keys(FLOOR_PROTOCOLS) as FloorProtocol[];
  const folders = new Map(protocols.map((p) => [p, path.join(dir, p)]));
  for (const folder of folders.values()) {
    fs.mkdirSync(path.join(folder, 'versions'), { recursive: true });
    fs.writeFileSync(path.join(folder, 'checkpoint.json'), hot);
  }
  const ms = Object.fromEntries(protocols.map((p) => [p, [] as number[]])) as Record<FloorProtocol, number[]>;
  // The files the append designs and SQLite append to, held open as they would be.
  const appendLog = fs.openSync(path.join(folders.get('append')!, 'versions', 'log'), 'a');
  const wal = fs.openSync(path.join(folders.get('sqlite')!, 'wal'), 'a');
  let rotatedFile: number | null = null;
  const appendSynced = (fd: number) => {
    fs.writeSync(fd, record);
    fs.fdatasyncSync(fd);
  };
  const appendEvent = (folder: string) => fs.appendFileSync(path.join(folder, 'events.jsonl'), event);
  const step: Record<FloorProtocol, (folder: string, n: number) => void> = {
    commit: (folder, n) => commitFile(folder, n, record),
    save: (folder, n) => {
      commitFile(folder, n, record);
      replaceHot(folder, n, hot);
      appendEvent(folder);
    },
    append: (folder, n) => {
      appendSynced(appendLog);
      replaceHot(folder, n, hot);
      appendEvent(folder);
    },
    'append-rotated': (folder, n) => {
      if (rotatedFile === null || n % ROTATE_EVERY === 0) {
        if (rotatedFile !== null) fs.closeSync(rotatedFile);
        commitFile(folder, n, record);
        rotatedFile = fs.openSync(path.join(folder, 'versions', `${n}.json`), 'a');
        replaceHot(folder, n, hot);
      } else {
        appendSynced(rotatedFile);
      }
      appendEvent(folder);
    },
    sqlite: () => {
      for (let commit = 0; commit < 2; commit++) {
        fs.writeSync(wal, record);
        fs.fsyncSync(wal);
      }
    },
  };
  try {
    const rounds = 10;
    const perRound = Math.max(1, Math.ceil(iterations / rounds));
    for (let round = 0; round < rounds; round++) {
      for (const p of protocols) {
        const folder = folders.get(p)!;
        for (let i = 0; i < perRound; i++) {
          const n = ms[p].length;
          const start = nowNs();
          step[p](folder, n);
          ms[p].push(msSince(start));
        }
      }
    }
  } finally {
    for (const fd of [appendLog, wal, rotatedFile]) if (fd !== null) fs.closeSync(fd);
  }
  return { iterations: ms.commit.length, bytes, hotBytes, ms };
}

/** The commit protocol: version `n` as a new file, durable with its name. */
function commitFile(folder: string, n: number, data: Buffer): void {
  const versions = path.join(folder, 'versions');
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
}

/** The hot snapshot replaced as a save replaces it: a temp file without fsync, the old file removed, the temp renamed in. */
function replaceHot(folder: string, n: number, data: Buffer): void {
  const target = path.join(folder, 'checkpoint.json');
  const temp = path.join(folder, `.checkpoint.json.${n}.tmp`);
  fs.writeFileSync(temp, data);
  fs.unlinkSync(target);
  fs.renameSync(temp, target);
}
