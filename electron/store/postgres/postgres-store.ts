/**
 * The PostgreSQL store: `openPostgresStore(url)` implements CheckpointStore
 * over a database laid out as docs/POSTGRES.md describes, so a team's
 * runners on many machines share one store and one inspector watches them
 * all live.
 *
 * Nothing connects until a method is called. The first call checks the
 * schema: missing, it is created on the first write when `autoInit` allows
 * (else a clear error names `waystation db init`); newer than this build,
 * the store opens read-only and every write says why. A LangGraph
 * checkpointer database (pg-schema.ts, databaseKind) is never given the
 * schema: reads and writes are refused, naming what it is.
 */
import path from 'node:path';
import type { Checkpoint, HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { problem, type Problem } from '../../../shared/checkpoint/problem.js';
import type { RecoveryReport } from '../../../shared/checkpoint/recovery-report.js';
import { leaseInfoOf, type LeaseOptions } from '../lease-rules.js';
import {
  ReadOnlyError,
  StoreWriteError,
  TaskReadError,
  type CheckpointStore,
  type HistoryMark,
  type HistoryTail,
  type KeepListed,
  type LeaseRead,
  type ListedFiles,
  type ListedTask,
  type SaveRequest,
  type SaveResult,
  type StopAsked,
  type StoreChange,
  type StoreSubscription,
  type TaskEntry,
  type TaskEvent,
  type TaskLease,
  type VersionInfo,
  type VersionMark,
  type VersionsAfter,
} from '../store-types.js';
import { isSafeTaskId } from '../directory-scan.js';
import { DEFAULT_MAX_FILE_BYTES } from '../directory-store.js';
import { holdsSecret, redactJson, secretsOf } from '../redact.js';
import { Connection, type ConnectionOptions } from './pg-connection.js';
import { PostgresStoreError } from './pg-errors.js';
import { insertEvent, subscribePg, type NewEvent } from './pg-events.js';
import { acquirePgLease, readLeaseRow, requestPgStop } from './pg-lease.js';
import type { StopRequest } from '../stop-request.js';
import * as reads from './pg-reads.js';
import {
  databaseKind,
  LangGraphDatabaseError,
  migrate,
  missingSchema,
  newerSchema,
  olderSchema,
  readDatabaseHolds,
  SCHEMA_VERSION,
} from './pg-schema.js';
import { PgTaskWriter } from './pg-writes.js';
import { KeyedSerial } from '../keyed-serial.js';

export { isPostgresUrl } from './redact-url.js';

export interface PostgresStoreOptions extends ConnectionOptions {
  /** Create the schema on the first write to a database that has none. Default true. */
  autoInit?: boolean;
  /** What relative artifact paths resolve against. Default: WAYSTATION_ARTIFACT_ROOT, else the working directory. */
  artifactRoot?: string;
  /** The largest version a save may write, as a directory's file limit (write-limits.ts). Default 64 MiB. */
  maxFileBytes?: number;
}

/** What the first call found of the schema. */
interface SchemaState {
  /** 0: none yet. */
  version: number;
  /** LangGraph's checkpointer tables found beside it (pg-schema.ts, databaseKind). */
  langgraph: string[];
  /** Why writes are refused (a newer schema), or null. */
  readOnly: PostgresStoreError | null;
}

/** Open the store over the database a `postgres://` URL names. Nothing connects until a method is called. */
export function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): PostgresStore {
  return new PostgresStore(url, opts);
}

export class PostgresStore implements CheckpointStore {
  readonly conn: Connection;
  /** The URL without its password. */
  readonly root: string;
  readonly artifactRoot: string;
  private schema: Promise<SchemaState> | null = null;
  private readonly writers = new Map<string, PgTaskWriter>();
  private readonly locks = new KeyedSerial();
  private readonly subscriptions = new Set<StoreSubscription>();

  constructor(
    url: string,
    private readonly opts: PostgresStoreOptions = {},
  ) {
    this.conn = new Connection(url, opts);
    this.root = this.conn.shown;
    this.artifactRoot = path.resolve(opts.artifactRoot ?? process.env.WAYSTATION_ARTIFACT_ROOT ?? process.cwd());
  }

  /**
   * The schema as found; kept once it is this build's or newer. A missing or
   * older one is looked at again next time (another process may run
   * `db init` meanwhile), and so is a look that failed.
   */
  private schemaState(): Promise<SchemaState> {
    this.schema ??= this.conn
      .read(async (c) => {
        const { version, langgraph } = await readDatabaseHolds(c);
        if (version < SCHEMA_VERSION) this.schema = null;
        if (version > SCHEMA_VERSION) return { version, langgraph, readOnly: newerSchema(this.root, version) };
        return { version, langgraph, readOnly: null };
      })
      .catch((err: unknown) => {
        this.schema = null;
        throw err;
      });
    return this.schema;
  }

  /** Why a database without the schema cannot be used: LangGraph's, or not initialised yet. */
  private noSchema(s: SchemaState, attempt: 'read' | 'write'): Error {
    return databaseKind(s) === 'langgraph' ? new LangGraphDatabaseError(this.root, s.langgraph, attempt) : missingSchema(this.root);
  }

  /** For reads: a schema must be there (an older one is read as it is only if this build can: refused for now). */
  private async readable(): Promise<SchemaState> {
    const s = await this.schemaState();
    if (s.version === 0) throw this.noSchema(s, 'read');
    if (s.version < SCHEMA_VERSION) throw olderSchema(this.root, s.version);
    return s;
  }

  /** For writes: the schema created when allowed, and no newer schema. */
  private async writable(taskId: string): Promise<void> {
    const s = await this.schemaState();
    if (s.readOnly) throw new ReadOnlyError(taskId, s.readOnly.message);
    if (s.version < SCHEMA_VERSION) {
      // A LangGraph database is refused here without a write connection; migrate refuses it too, under its lock.
      if (s.version === 0 && (this.opts.autoInit === false || databaseKind(s) === 'langgraph')) throw this.noSchema(s, 'write');
      if (this.opts.autoInit === false) throw olderSchema(this.root, s.version);
      await this.init();
    }
  }

  /** Create or migrate the schema to this build's version (`waystation db init`). */
  async init(): Promise<{ from: number; to: number }> {
    try {
      return await this.conn.withClient((c) => migrate(c, this.root));
    } catch (err) {
      throw err instanceof PostgresStoreError ? err : this.conn.mapError(err);
    } finally {
      this.schema = null;
    }
  }

  /** The schema version the database has (0: none), and the one this build writes. */
  async schemaVersion(): Promise<{ found: number; known: number }> {
    return { found: (await this.schemaState()).version, known: SCHEMA_VERSION };
  }

  private writer(taskId: string): PgTaskWriter {
    let w = this.writers.get(taskId);
    if (!w) {
      w = new PgTaskWriter(this.conn, taskId, this.opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
      this.writers.set(taskId, w);
    }
    return w;
  }

  listTasks(): Promise<ListedTask[]>;
  listTasks<T>(keep: KeepListed<T>): Promise<T[]>;
  async listTasks<T>(keep?: KeepListed<T>): Promise<(T | ListedTask)[]> {
    const s = await this.readable();
    return this.conn.read((c) => reads.listTasks<T | ListedTask>(c, s.readOnly !== null, keep ?? ((e) => e)));
  }

  async getTask(taskId: string): Promise<TaskEntry | null> {
    const s = await this.readable();
    return this.conn.read((c) => reads.getTask(c, taskId, s.readOnly !== null));
  }

  async readVersion(taskId: string, version: number): Promise<Checkpoint> {
    await this.readable();
    return this.conn.read((c) => reads.readVersion(c, taskId, version));
  }

  async readVersions(taskId: string, versions: readonly number[]): Promise<Checkpoint[]> {
    await this.readable();
    return this.conn.read(async (c) => {
      const out: Checkpoint[] = [];
      for (const v of versions) out.push(await reads.readVersion(c, taskId, v));
      return out;
    });
  }

  private async requireTask(taskId: string): Promise<void> {
    const found = await this.conn.read((c) => c.query(`SELECT 1 FROM waystation_tasks WHERE task_id = $1`, [taskId]));
    if (found.rowCount === 0)
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `there is no task ${JSON.stringify(taskId)} in ${this.root}`)]);
  }

  async history(taskId: string): Promise<VersionInfo[]> {
    return (await this.historyAfter(taskId)).versions;
  }

  async historyAfter(taskId: string, after?: VersionMark): Promise<VersionsAfter> {
    await this.readable();
    await this.requireTask(taskId);
    return this.conn.read(async (c) => {
      if (after) {
        const [held] = await reads.history(c, taskId, after.version - 1);
        if (held?.version === after.version && held.updated_at === after.updated_at && held.bytes === after.bytes)
          return { after: after.version, versions: await reads.history(c, taskId, after.version) };
      }
      return { after: 0, versions: await reads.history(c, taskId) };
    });
  }

  async readBlob(taskId: string, ref: string): Promise<unknown> {
    await this.readable();
    const read = await this.conn.read((c) => reads.readBlob(c, taskId, ref));
    if (!read.ok) throw new TaskReadError(taskId, [read.problem]);
    return read.value;
  }

  async readHistory(taskId: string, version?: number): Promise<HistoryMessage[]> {
    return (await this.readHistoryAfter(taskId, version)).messages;
  }

  async readHistoryAfter(taskId: string, version?: number, after?: HistoryMark): Promise<HistoryTail> {
    let cp: Pick<Checkpoint, 'history'> | null | undefined;
    if (version === undefined) {
      // The newest version's history field is all that is needed of it: read without validating the whole checkpoint.
      await this.readable();
      const latest = await this.conn.read((c) => reads.latestHistoryRef(c, taskId));
      cp = latest ? { history: latest } : (await this.getTask(taskId))?.checkpoint;
    } else cp = await this.readVersion(taskId, version);
    if (!cp)
      throw new TaskReadError(taskId, [
        problem(taskId, 'unreadable', `there is no readable task ${JSON.stringify(taskId)} in ${this.root}`),
      ]);
    const chain = await this.conn.read((c) => reads.readHistoryChain(c, taskId, cp.history.head, cp.history.count, after));
    if (!chain.ok) throw new TaskReadError(taskId, [chain.problem]);
    return { from: chain.from, messages: chain.messages as HistoryMessage[] };
  }

  async readEvents(taskId: string, afterId = 0): Promise<TaskEvent[]> {
    await this.readable();
    return this.conn.read((c) => reads.readEvents(c, taskId, afterId));
  }

  async readLease(taskId: string, opts: { ttlMs?: number; now?: number } = {}): Promise<LeaseRead> {
    await this.readable();
    const row = await this.conn.read((c) => readLeaseRow(c, taskId));
    const entry = row?.entry ?? null;
    return { entry, info: leaseInfoOf(entry, opts), ...(row ? { generation: row.generation } : {}) };
  }

  async requestStop(taskId: string, request: { by: string; reason?: string }): Promise<StopAsked | null> {
    await this.writable(taskId);
    return requestPgStop(this.conn, taskId, request);
  }

  async readStopRequest(taskId: string): Promise<StopRequest | null> {
    await this.readable();
    return (await this.conn.read((c) => readLeaseRow(c, taskId)))?.stop ?? null;
  }

  async subscribe(onChange: (change: StoreChange) => void, onError?: (err: Error) => void): Promise<StoreSubscription> {
    // The feed's own connection logs in while the pool's checks the schema: two logins at once, not one after the other.
    const ready = this.readable();
    ready.catch(() => {});
    const inner = await subscribePg(this.conn, onChange, onError, { ready });
    const sub: StoreSubscription = {
      close: async () => {
        this.subscriptions.delete(sub);
        await inner.close();
      },
    };
    this.subscriptions.add(sub);
    return sub;
  }

  /** A version is a row keyed by its number: none can hold another version than its key, and a listing reads it whole. */
  async fileProblems(entries: readonly ListedFiles[]): Promise<Problem[][]> {
    return entries.map(() => []);
  }

  /** A database commits whole transactions: an interrupted save leaves nothing to report but the last version. */
  async recoveryReport(entry: Pick<TaskEntry, 'task_id' | 'location' | 'format'>): Promise<RecoveryReport | null> {
    const h = await this.history(entry.task_id);
    const latest = h.length ? h[h.length - 1].version : 0;
    return {
      task_id: entry.task_id,
      latest_version: latest,
      hot_version: latest,
      interrupted_versions: [],
      leftover_temp_files: [],
      events_behind: 0,
      torn_event_bytes: 0,
      account: [
        latest > 0
          ? `the task stands at version ${latest}, its newest committed version; a database commits whole saves, so none is left half-written`
          : 'the task has no committed version',
      ],
    };
  }

  prepareForWrites(): Promise<void> {
    return this.writable('(any)');
  }

  async acquireLease(taskId: string, opts: LeaseOptions): Promise<TaskLease> {
    await this.writable(taskId);
    return acquirePgLease(this.conn, taskId, opts);
  }

  async create(
    checkpoint: Parameters<CheckpointStore['create']>[0],
    opts: Parameters<CheckpointStore['create']>[1] = {},
  ): Promise<SaveResult> {
    const taskId = (checkpoint as { task_id?: unknown }).task_id;
    if (typeof taskId === 'string' && holdsSecret(taskId, secretsOf()))
      throw new StoreWriteError('[redacted]', [
        problem(
          '[redacted]',
          'schema',
          'the task id holds a secret (an API key of the environment); choose another id; nothing was written',
        ),
      ]);
    if (typeof taskId !== 'string' || !isSafeTaskId(taskId))
      throw new StoreWriteError(String(taskId), [
        problem(
          String(taskId),
          'schema',
          `task_id ${JSON.stringify(taskId)} is not a task id (one path segment, not starting with "."); nothing was written`,
        ),
      ]);
    await this.writable(taskId);
    return this.locks.run(taskId, () => this.writer(taskId).create({ ...opts, checkpoint }));
  }

  async save(taskId: string, request: SaveRequest): Promise<SaveResult> {
    await this.writable(taskId);
    return this.locks.run(taskId, () => this.writer(taskId).save(request));
  }

  /** The task row's head brought up to the newest version (pg-writes.ts): what a directory's settle does for checkpoint.json. */
  async settle(taskId: string): Promise<Problem[]> {
    const writer = this.writers.get(taskId);
    return writer ? this.locks.run(taskId, () => writer.settle()) : [];
  }

  async importTask(taskId: string): Promise<SaveResult> {
    await this.readable();
    await this.requireTask(taskId);
    throw new StoreWriteError(taskId, [problem(taskId, 'conflict', `${taskId} is already a Waystation task; there is nothing to import`)]);
  }

  async appendEvent(taskId: string, event: NewEvent): Promise<TaskEvent> {
    await this.writable(taskId);
    return this.locks.run(taskId, async () => {
      try {
        return await this.conn.transaction((c) => insertEvent(c, taskId, redactJson(event, secretsOf())), [taskId]);
      } catch (err) {
        throw err instanceof TaskReadError ? err : this.conn.mapError(err);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.conn.close();
  }
}
