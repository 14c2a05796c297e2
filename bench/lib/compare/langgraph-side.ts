/**
 * The LangGraph.js side of the comparison: the agent workload saved through
 * a LangGraph checkpointer exactly as LangGraph's Pregel loop calls it.
 *
 * Per step, LangGraph's loop (PregelLoop in @langchain/langgraph) does two
 * things with a checkpointer, and so does this file:
 *  1. When the step's task finishes, `putWrites(config, writes, taskId)` with
 *     the task's channel writes, keyed to the checkpoint the step started
 *     from. The loop calls it whenever durability is not "exit"; it is what
 *     lets a crashed step resume without re-running finished tasks, the
 *     same guarantee Waystation's per-step save gives, so it belongs in the
 *     cost of a save.
 *  2. After applying the writes, `put(config, checkpoint, metadata,
 *     newVersions)` with a checkpoint whose `channel_values` hold every
 *     channel's value: `messages` is the whole list the add_messages reducer
 *     produced, `result` the step's result.
 * Both are awaited before the next step, as with `durability: "sync"`, so a
 * save has reached the disk when its time is taken.
 *
 * Messages are plain `{role, content}` objects, byte for byte the ones
 * Waystation stores. Real LangGraph states hold BaseMessage instances, whose
 * serialized form wraps each message in a larger constructor envelope: the
 * plain form is the smaller of the two, so the comparison favours LangGraph.
 */
import path from 'node:path';
import {
  MemorySaver,
  uuid5,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { MESSAGE_BYTES, workloadMessage, workloadResult, workloadTimestamp } from '../agent-workload.js';
import { filesSize } from '../dir-size.js';
import { msSince, nowNs, timeRepeated } from '../timing.js';
import { middleStep, timedRanges, type ReadTiming, type SideResult, type StorageFigure } from './side-result.js';

export type LangGraphSaverKind = 'sqlite' | 'memory';

export interface LangGraphRunOptions {
  kind: LangGraphSaverKind;
  steps: number;
  seed: number;
  /** Folder for the SQLite database (created by the caller). Unused by the memory saver. */
  dir: string;
  /**
   * Run only the timed steps and the checkpoints the reads need (see
   * `sampledSchedule`), and project the storage. For N where every step
   * would write N/2 MiB on average.
   */
  sampled: boolean;
  /** Bytes on disk per serialized byte, measured by a full SQLite run (`calibration`); needed for sampled SQLite runs. */
  sqliteCalibration?: SqliteCalibration;
  readRuns: number;
}

/** How the SQLite database file grows with what is put into it, from a run of every step. */
export interface SqliteCalibration {
  steps: number;
  /** Main database file bytes ÷ serialized bytes put (checkpoints, metadata, writes). */
  dbBytesPerSerializedByte: number;
}

export interface LangGraphSideResult extends SideResult {
  /** Serialized bytes handed to the saver over the whole run (exact, computed for sampled runs). */
  serializedBytes: number;
  /** For SQLite: the journal mode and synchronous level read back from the database. */
  sqlite: { journalMode: string; synchronous: number; dbBytes: number; walBytes: number; shmBytes: number } | null;
  /** Set by full SQLite runs: what a sampled run of more steps projects its storage with. */
  calibration: SqliteCalibration | null;
}

const THREAD_ID = 'bench-compare';
const NODE = 'agent';
const TRIGGER = `branch:to:${NODE}`;

// better-sqlite3 ships no types here; this is the one call the benchmark makes on the raw handle.
interface PragmaDatabase {
  pragma(source: string, options?: { simple?: boolean }): unknown;
}

/**
 * Replay the workload through a LangGraph checkpointer and measure it.
 *
 * The returned figures have the same shape as the Waystation side's. For a
 * sampled run, `saves.allMs` is null and `storage.projected` is true.
 */
export async function runLangGraph(opts: LangGraphRunOptions): Promise<LangGraphSideResult> {
  const started = nowNs();
  const dbFile = path.join(opts.dir, 'langgraph.sqlite');
  const saver: BaseCheckpointSaver = opts.kind === 'sqlite' ? SqliteSaver.fromConnString(dbFile) : new MemorySaver();
  let sqliteMode: { journalMode: string; synchronous: number } | null = null;
  if (saver instanceof SqliteSaver) sqliteMode = configureDurability(saver);

  const { early, late } = timedRanges(opts.steps);
  const middle = middleStep(opts.steps);
  // A sampled run's serialized bytes are computed afterwards, so it skips the per-step count.
  const thread = new LangGraphThread(saver, opts.seed, !opts.sampled);
  await thread.putInput();

  const earlyMs: number[] = [];
  const lateMs: number[] = [];
  const allMs: number[] | null = opts.sampled ? null : [];
  let middleId = '';
  for (const step of opts.sampled ? sampledSchedule(opts.steps) : fullSchedule(opts.steps)) {
    const ms = await thread.step(step);
    if (step === middle) middleId = thread.latestId;
    if (!opts.sampled || (step >= early.from && step <= early.to) || step >= late.from) {
      if (step >= early.from && step <= early.to) earlyMs.push(ms);
      if (step >= late.from) lateMs.push(ms);
      allMs?.push(ms);
    }
  }

  const serializedBytes = opts.sampled ? await serializedRunBytes(opts.steps, opts.seed) : thread.serializedBytes;
  let storage: StorageFigure;
  let sqlite: LangGraphSideResult['sqlite'] = null;
  let calibration: SqliteCalibration | null = null;
  if (sqliteMode) {
    const db = await filesSize([dbFile]);
    const wal = await filesSize([`${dbFile}-wal`]);
    const shm = await filesSize([`${dbFile}-shm`]);
    const usage = await filesSize([dbFile, `${dbFile}-wal`, `${dbFile}-shm`]);
    sqlite = { ...sqliteMode, dbBytes: db.apparentBytes, walBytes: wal.apparentBytes, shmBytes: shm.apparentBytes };
    if (opts.sampled) {
      if (!opts.sqliteCalibration)
        throw new Error(`a sampled SQLite run of ${opts.steps} steps needs a calibration from a full run of fewer steps`);
      const dbBytes = Math.round(serializedBytes * opts.sqliteCalibration.dbBytesPerSerializedByte);
      storage = {
        bytes: dbBytes + wal.apparentBytes + shm.apparentBytes,
        allocatedBytes: null,
        projected: true,
        method:
          `projected: ${serializedBytes} serialized bytes put over ${opts.steps} steps (exact) × ` +
          `${opts.sqliteCalibration.dbBytesPerSerializedByte.toFixed(4)} db bytes per byte (measured on the ${opts.sqliteCalibration.steps}-step run) ` +
          `+ -wal and -shm as measured after the sampled run`,
        usage: null,
      };
    } else {
      storage = {
        bytes: usage.apparentBytes,
        allocatedBytes: usage.allocatedBytes,
        projected: false,
        method: 'measured: db + -wal + -shm file sizes',
        usage,
      };
      calibration = { steps: opts.steps, dbBytesPerSerializedByte: db.apparentBytes / serializedBytes };
    }
  } else {
    storage = {
      bytes: opts.sampled ? serializedBytes : thread.heldBytes(saver as MemorySaver),
      allocatedBytes: null,
      projected: opts.sampled,
      method: opts.sampled ? 'projected: serialized bytes of every step, computed exactly' : 'measured: serialized bytes held in memory',
      usage: null,
    };
  }

  const latest = await timeRead(opts.readRuns, 'getTuple (latest): checkpoint with the whole message list', () =>
    saver.getTuple({ configurable: { thread_id: THREAD_ID } }),
  );
  const middleRead = await timeRead(
    opts.readRuns,
    `getTuple (checkpoint_id of step ${middle}): checkpoint with the whole message list`,
    () => saver.getTuple({ configurable: { thread_id: THREAD_ID, checkpoint_ns: '', checkpoint_id: middleId } }),
  );
  if (saver instanceof SqliteSaver) (saver.db as unknown as { close(): void }).close();

  return {
    side: opts.kind === 'sqlite' ? 'LangGraph SqliteSaver' : 'LangGraph MemorySaver',
    steps: opts.steps,
    sampled: opts.sampled,
    sampling: opts.sampled
      ? `ran steps ${early.from}–${early.to}, ${middle}, ${late.from - 1} and ${late.from}–${late.to} only, each with its full state; storage projected`
      : null,
    durability: sqliteMode
      ? `journal_mode=${sqliteMode.journalMode}, synchronous=${sqliteMode.synchronous} (FULL): every commit fsyncs the WAL; put and putWrites commit separately`
      : 'none: in memory, for reference',
    saves: { early, late, earlyMs, lateMs, allMs },
    storage,
    reads: { latest, middle: middleRead },
    wallMs: msSince(started),
    serializedBytes,
    sqlite,
    calibration,
  };
}

/**
 * Ask SQLite for synchronous=FULL and read back what it runs with.
 *
 * SqliteSaver switches the database to WAL on first use; WAL's build default
 * here is synchronous=NORMAL, which skips the fsync at commit, so without
 * this a LangGraph save would not be durable against power loss while a
 * Waystation save is. The saver is set up first so the pragma applies to the
 * mode it really runs in.
 */
function configureDurability(saver: SqliteSaver): { journalMode: string; synchronous: number } {
  (saver as unknown as { setup(): void }).setup();
  const db = saver.db as unknown as PragmaDatabase;
  db.pragma('synchronous = FULL');
  return {
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: Number(db.pragma('synchronous', { simple: true })),
  };
}

export function* fullSchedule(steps: number): Generator<number> {
  for (let step = 1; step <= steps; step++) yield step;
}

/**
 * The steps a sampled run performs: the early ones, the middle one (read
 * later), the one before the late ones (so the first late save has its
 * parent) and the late ones. Every one is put with the state it would have
 * after all the steps before it.
 */
export function sampledSchedule(steps: number): number[] {
  const { early, late } = timedRanges(steps);
  const wanted = new Set<number>();
  for (let s = early.from; s <= early.to; s++) wanted.add(s);
  wanted.add(middleStep(steps));
  if (late.from > 1) wanted.add(late.from - 1);
  for (let s = late.from; s <= late.to; s++) wanted.add(s);
  return [...wanted].sort((a, b) => a - b);
}

/** One LangGraph thread being driven step by step, as the Pregel loop would. */
export class LangGraphThread {
  readonly messages: HistoryMessage[] = [];
  latestId = '';
  /** Serialized bytes handed to the saver so far (checkpoints, metadata, writes). */
  serializedBytes = 0;
  private readonly serde = new JsonPlusSerializer();

  constructor(
    private readonly saver: BaseCheckpointSaver,
    private readonly seed: number,
    private readonly countBytes: boolean,
    /** Several threads of one saver (the concurrent runners) each need an id of their own. */
    readonly threadId = THREAD_ID,
  ) {}

  /** The "input" checkpoint (step -1): the user's request, before any step. Not timed. */
  async putInput(): Promise<void> {
    this.messages.push(workloadMessage(this.seed, 0));
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(0),
      ts: workloadTimestamp(0),
      channel_values: { messages: this.messages, [TRIGGER]: null },
      channel_versions: { __start__: 1, messages: 1, [TRIGGER]: 1 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 } },
    };
    const metadata: CheckpointMetadata = { source: 'input', step: -1, parents: {} };
    await this.count(checkpoint, metadata, null);
    const config = await this.saver.put(
      { configurable: { thread_id: this.threadId, checkpoint_ns: '' } },
      checkpoint,
      metadata,
      checkpoint.channel_versions,
    );
    this.latestId = config.configurable!.checkpoint_id as string;
  }

  /**
   * Step `step`: putWrites of the task's writes, then put of the new checkpoint.
   *
   * Returns the milliseconds of the two calls together. Building the state
   * (the reducer's work) is not timed, on either side of the comparison.
   */
  async step(step: number): Promise<number> {
    // A sampled run jumps ahead: the state still holds every message up to this step.
    while (this.messages.length < step) this.messages.push(workloadMessage(this.seed, this.messages.length));
    const message = workloadMessage(this.seed, step);
    const result = workloadResult(this.seed, step);
    const parent = { configurable: { thread_id: this.threadId, checkpoint_ns: '', checkpoint_id: this.latestId } };
    const writes: PendingWrite[] = [
      ['messages', [message]],
      ['result', result],
      [TRIGGER, null],
    ];
    const taskId = uuid5(JSON.stringify([step, NODE, TRIGGER]), this.latestId);
    this.messages.push(message);
    const version = step + 1;
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(step & 0x3fff),
      ts: workloadTimestamp(step),
      channel_values: { messages: this.messages, result, [TRIGGER]: null },
      channel_versions: { __start__: 1, messages: version, result: version, [TRIGGER]: version },
      versions_seen: { __input__: {}, __start__: { __start__: 1 }, [NODE]: { [TRIGGER]: step } },
    };
    const metadata: CheckpointMetadata = { source: 'loop', step, parents: {} };
    const newVersions = { messages: version, result: version, [TRIGGER]: version };
    await this.count(checkpoint, metadata, writes);

    const start = nowNs();
    await this.saver.putWrites(parent, writes, taskId);
    const config = await this.saver.put(parent, checkpoint, metadata, newVersions);
    const ms = msSince(start);
    this.latestId = config.configurable!.checkpoint_id as string;
    return ms;
  }

  /** Serialized bytes the memory saver holds: checkpoints, metadata and writes. */
  heldBytes(saver: MemorySaver): number {
    let total = 0;
    for (const namespaces of Object.values(saver.storage)) {
      for (const checkpoints of Object.values(namespaces)) {
        for (const [checkpoint, metadata] of Object.values(checkpoints)) total += checkpoint.byteLength + metadata.byteLength;
      }
    }
    for (const writes of Object.values(saver.writes)) {
      for (const [, , value] of Object.values(writes)) total += value.byteLength;
    }
    return total;
  }

  // Counted outside the timed section; the saver serializes again itself.
  private async count(checkpoint: Checkpoint, metadata: CheckpointMetadata, writes: PendingWrite[] | null): Promise<void> {
    if (!this.countBytes) return;
    this.serializedBytes += await serializedSize(this.serde, checkpoint, metadata, writes);
  }
}

async function serializedSize(
  serde: JsonPlusSerializer,
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata,
  writes: PendingWrite[] | null,
): Promise<number> {
  let total = (await serde.dumpsTyped(checkpoint))[1].byteLength + (await serde.dumpsTyped(metadata))[1].byteLength;
  for (const [, value] of writes ?? []) total += (await serde.dumpsTyped(value))[1].byteLength;
  return total;
}

/**
 * Serialized bytes a full run of `steps` steps hands to the saver, computed
 * exactly without building the N message lists.
 *
 * Every message encodes to MESSAGE_BYTES bytes, so the message list of a
 * checkpoint with k messages encodes to 2 + k·MESSAGE_BYTES + (k − 1) bytes;
 * the rest of each checkpoint is serialized for real with an empty list.
 */
export async function serializedRunBytes(steps: number, seed: number): Promise<number> {
  const serde = new JsonPlusSerializer();
  const listBytes = (k: number) => 2 + k * MESSAGE_BYTES + Math.max(0, k - 1);
  const size = async (checkpoint: Checkpoint, metadata: CheckpointMetadata, writes: PendingWrite[] | null, messages: number) =>
    (await serializedSize(serde, checkpoint, metadata, writes)) - 2 + listBytes(messages);
  const sampleId = uuid6(0);
  let total = await size(
    {
      v: 4,
      id: sampleId,
      ts: workloadTimestamp(0),
      channel_values: { messages: [], [TRIGGER]: null },
      channel_versions: { __start__: 1, messages: 1, [TRIGGER]: 1 },
      versions_seen: { __input__: {}, __start__: { __start__: 1 } },
    },
    { source: 'input', step: -1, parents: {} },
    null,
    1,
  );
  for (let step = 1; step <= steps; step++) {
    const result = workloadResult(seed, step);
    const version = step + 1;
    total += await size(
      {
        v: 4,
        id: sampleId,
        ts: workloadTimestamp(step),
        channel_values: { messages: [], result, [TRIGGER]: null },
        channel_versions: { __start__: 1, messages: version, result: version, [TRIGGER]: version },
        versions_seen: { __input__: {}, __start__: { __start__: 1 }, [NODE]: { [TRIGGER]: step } },
      },
      { source: 'loop', step, parents: {} },
      [
        ['messages', [workloadMessage(seed, step)]],
        ['result', result],
        [TRIGGER, null],
      ],
      step + 1,
    );
  }
  return total;
}

/** Time a LangGraph read `runs` times; what it read is kept for the check that both sides read the same. */
export async function timeRead(
  runs: number,
  what: string,
  read: () => Promise<{ checkpoint: Checkpoint } | undefined>,
): Promise<ReadTiming> {
  const { result, ms } = await timeRepeated(runs, read);
  if (!result) throw new Error(`LangGraph read returned no checkpoint: ${what}`);
  const messages = result.checkpoint.channel_values.messages as HistoryMessage[];
  return { what, ms, messages: messages.length, lastMessage: messages[messages.length - 1]?.content ?? '' };
}
