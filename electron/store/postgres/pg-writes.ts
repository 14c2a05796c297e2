/**
 * Writing the versions of one task to a PostgreSQL store.
 *
 * A version is committed by one statement, a call of the schema's
 * `waystation_commit_version` (pg-schema.ts): its blobs (content-addressed,
 * inserted once), its row in `waystation_versions` keyed by (task,
 * version), the task row brought up to it and its `version` event, in one
 * trip to the server; a NOTIFY follows once it has committed (pg-events.ts).
 * The key is the commit point: of two writers racing for a version the
 * second insert fails, its statement rolls back whole, and it gets
 * ConflictError with nothing left behind. A save under a lease first takes a
 * share lock on the lease row and compares generations: the fence (a release
 * or a takeover raises the generation).
 *
 * Each version is stored as a delta against the one before (the shared
 * json-diff), with a full snapshot whenever the deltas since the last one
 * would outweigh two snapshots: the keyframe rule of the directory store.
 *
 * The task row's `head` (the checkpoint a listing shows) is not rewritten by
 * every save: a long task's checkpoint is megabytes, and rewriting it each
 * time made late saves a hundred times slower than early ones. It is brought
 * up to date at a full snapshot, after HEAD_EVERY versions and deltas of a
 * quarter of its size (HEAD_DELTA_RATIO), and when the lease is let go
 * (`settle`); `head_version` says which version it holds and readers apply
 * the deltas after it (pg-reads.ts), as a directory's checkpoint.json lags
 * behind its open segment. The listing reads neither: the row's `summary`
 * is written by every save (pg-summary.ts).
 *
 * When the connection drops while a save is under way the outcome is
 * unknown to the driver; the writer reconnects and reads the (task, version)
 * row back, telling by the writer token it wrote whether the save committed.
 * A dropped connection does not end the server's side of it at once (a
 * network fault can leave it waiting, its COMMIT still on the way), so
 * before it reads, the writer ends that server process
 * (`pg_terminate_backend`, then waiting for it to exit): from then on the
 * outcome can no longer change, and "no row" means it never will be.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { problem, type Problem } from '../../../shared/checkpoint/problem.js';
import { CURRENT_SCHEMA_VERSION, type Checkpoint } from '../../../shared/checkpoint/schema.js';
import { EncodeArena, encodeJson } from '../frozen-json.js';
import { redactSaveRequest } from '../redact.js';
import { checkFileSize, checkValueDepth } from '../write-limits.js';
import { LeaseLostError } from '../lease-rules.js';
import { buildVersion, KEYFRAME_DELTA_RATIO } from '../version-build.js';
import { ConflictError, ReadOnlyError, StoreWriteError, TaskReadError, type SaveRequest, type SaveResult } from '../store-types.js';
import type { Connection } from './pg-connection.js';
import { CommitUnknownError, isConnectionLost, NotCommittedError, pgCode } from './pg-errors.js';
import { summaryOf } from './pg-summary.js';
import { rebuildDoc } from './pg-reads.js';

type Json = Record<string, unknown>;

interface WriterState {
  lastVersion: number;
  /** The version the task row's head holds. */
  headVersion: number;
  /** Bytes of the deltas after the head's version: what a reader applies to it. */
  deltaSinceHead: number;
  base: Json | null;
  fullBytes: number;
  deltaSince: number;
  trusted: boolean;
  readOnly: string | null;
}

/**
 * The task row's head is rewritten at every full snapshot, and otherwise
 * once it lags by HEAD_EVERY versions and by deltas of at least 1 /
 * HEAD_DELTA_RATIO of the checkpoint's size: a small task's head is then
 * rewritten every HEAD_EVERY versions, and a long task's (megabytes, each
 * rewrite compressed and logged in the write-ahead log) only after deltas of
 * a quarter of its size, so that what a save writes does not grow with the
 * task, and a reader applies deltas of at most that size to the head.
 */
export const HEAD_EVERY = 16;
export const HEAD_DELTA_RATIO = 4;

/** The refusals of waystation_commit_version (pg-schema.ts): the lease was taken over or let go; the task row is not at the version before. */
const COMMIT_LEASE_LOST = 'WSL01';
const COMMIT_CONFLICT = 'WSC01';

/** How often, and how far apart, the outcome of a save cut off by a dropped connection is asked for. */
const OUTCOME_ATTEMPTS = 8;
const OUTCOME_DELAY_MS = 250;

/** Writes the versions of one task. Callers serialise calls per task. */
export class PgTaskWriter {
  private state: WriterState | null = null;
  /** The buffers this task's documents are encoded into, in turn (see EncodeArena). */
  private readonly arena = new EncodeArena();

  constructor(
    private readonly conn: Connection,
    readonly taskId: string,
    /** The largest version a directory's reader loads: a row over it could not be copied to one (write-limits.ts). */
    private readonly maxFileBytes: number,
  ) {}

  invalidate(): void {
    this.state = null;
  }

  /** The newest version and its document, from the task row and the rows since the last full snapshot. */
  private async deriveState(): Promise<WriterState> {
    return this.conn.read(async (c) => {
      const { rows } = await c.query<{ last_version: number; head_version: number; since_head: string }>(
        `SELECT t.last_version, t.head_version,
                (SELECT COALESCE(sum(v.bytes), 0) FROM waystation_versions v WHERE v.task_id = t.task_id AND v.version > t.head_version) AS since_head
           FROM waystation_tasks t WHERE t.task_id = $1`,
        [this.taskId],
      );
      if (rows.length === 0)
        throw new TaskReadError(this.taskId, [
          problem(this.taskId, 'unreadable', `there is no task ${JSON.stringify(this.taskId)} in ${this.conn.shown}`),
        ]);
      const last = rows[0].last_version;
      const built = await rebuildDoc(c, this.taskId, last);
      if (!built.ok)
        throw new TaskReadError(this.taskId, [
          { ...built.problem, message: `${built.problem.message}; a save must follow version ${last}, so nothing was written` },
        ]);
      const schema = (built.doc as Json | null)?.schema_version;
      return {
        lastVersion: last,
        headVersion: rows[0].head_version,
        deltaSinceHead: Number(rows[0].since_head),
        base: built.doc as Json,
        fullBytes: built.fullBytes,
        deltaSince: built.deltaBytes,
        trusted: false,
        readOnly:
          typeof schema === 'number' && schema > CURRENT_SCHEMA_VERSION
            ? `version ${last} was written by a newer Waystation (schema ${schema})`
            : null,
      };
    });
  }

  async create(request: Omit<SaveRequest, 'expectedVersion'>): Promise<SaveResult> {
    this.state = {
      lastVersion: 0,
      headVersion: 0,
      deltaSinceHead: 0,
      base: null,
      fullBytes: 0,
      deltaSince: 0,
      trusted: false,
      readOnly: null,
    };
    return this.write({ ...request, expectedVersion: 0 });
  }

  async save(request: SaveRequest): Promise<SaveResult> {
    this.state ??= await this.deriveState();
    if (request.expectedVersion !== this.state.lastVersion) this.state = await this.deriveState();
    const state = this.state;
    if (state.readOnly) throw new ReadOnlyError(this.taskId, `${state.readOnly}; Waystation never writes over a newer schema`);
    if (request.expectedVersion < state.lastVersion) throw new ConflictError(this.taskId, request.expectedVersion + 1);
    if (request.expectedVersion > state.lastVersion)
      throw new StoreWriteError(this.taskId, [
        problem(
          this.taskId,
          'conflict',
          `the task is at version ${state.lastVersion}, so there is no version ${request.expectedVersion} to save after; nothing was written`,
        ),
      ]);
    return this.write(request);
  }

  private async write(raw: SaveRequest): Promise<SaveResult> {
    // No secret is written, whoever wrote the request (redact.ts), as in a directory.
    const request = redactSaveRequest(raw);
    const state = this.state!;
    const next = state.lastVersion + 1;
    const versionName = `${this.taskId} version ${next}`;
    // What a reader would refuse is never written (write-limits.ts): the same limits as a directory's, so any task can be copied to one.
    // A base this writer built passed the same check, so what the request shares with it is not walked again.
    checkValueDepth(
      this.taskId,
      versionName,
      { checkpoint: request.checkpoint, results: request.results, messages: request.appendHistory },
      state.trusted ? state.base : undefined,
    );
    const { normalized, blobs, ops } = buildVersion(request, next, {
      taskId: this.taskId,
      base: state.base,
      trusted: state.trusted,
      file: versionName,
    });
    // Encoded into the writer's arena, mostly from the remembered encodings of what did not change; turned into
    // text only when it is written (a full snapshot, or the task row's head): for a long task that is megabytes.
    const docBytes = encodeJson(normalized, this.arena);
    const fullBytes = docBytes.length;
    let kind: 'full' | 'delta' = 'full';
    let delta: string | null = null;
    if (ops !== null) {
      const text = JSON.stringify(ops);
      if (state.deltaSince + Buffer.byteLength(text) < KEYFRAME_DELTA_RATIO * fullBytes) {
        kind = 'delta';
        delta = text;
      }
    }
    const bytes = delta !== null ? Buffer.byteLength(delta) : fullBytes;
    const writeHead =
      next === 1 ||
      kind === 'full' ||
      (next - state.headVersion >= HEAD_EVERY && (state.deltaSinceHead + bytes) * HEAD_DELTA_RATIO >= fullBytes);
    const doc = kind === 'full' || writeHead ? docBytes.toString('utf8') : null;
    const body = delta ?? doc!;
    checkFileSize(this.taskId, versionName, bytes + blobs.reduce((n, b) => n + b.bytes.length, 0), this.maxFileBytes);
    checkFileSize(this.taskId, `${this.taskId} (the task's latest checkpoint)`, fullBytes, this.maxFileBytes);
    const token = randomBytes(8).toString('hex');
    const cp = normalized as unknown as Checkpoint;

    // The server process the transaction runs in: what must be gone before a lost commit's outcome is asked for.
    let backend: number | null = null;
    const commit = (c: pg.ClientBase) => {
      backend = backendPid(c);
      return this.commit(c, request, next, kind, body, bytes, writeHead ? doc : null, token, cp, blobs);
    };
    try {
      await this.conn.statement(commit, [this.taskId]);
    } catch (err) {
      this.state = null;
      const code = pgCode(err);
      if (code === '23505' || code === COMMIT_CONFLICT) throw new ConflictError(this.taskId, next);
      if (code === COMMIT_LEASE_LOST) throw new LeaseLostError(this.taskId);
      if (err instanceof TaskReadError) throw err;
      if (isConnectionLost(err)) {
        if (!(await this.committed(next, token, backend))) throw this.notCommitted(next, err);
      } else throw this.conn.mapError(err);
    }
    this.state = {
      lastVersion: next,
      headVersion: writeHead ? next : state.headVersion,
      deltaSinceHead: writeHead ? 0 : state.deltaSinceHead + bytes,
      base: normalized,
      fullBytes: kind === 'full' ? fullBytes : state.fullBytes,
      deltaSince: kind === 'full' ? 0 : state.deltaSince + bytes,
      trusted: true,
      readOnly: null,
    };
    return { checkpoint: cp, bytesWritten: bytes + blobs.reduce((n, b) => n + b.bytes.length, 0) };
  }

  /** The version's commit: one call of waystation_commit_version (pg-schema.ts, schema 5), one statement. */
  private async commit(
    c: pg.ClientBase,
    request: SaveRequest,
    next: number,
    kind: 'full' | 'delta',
    body: string,
    bytes: number,
    /** The checkpoint for the task row's head, or null to leave the head where it is. */
    doc: string | null,
    token: string,
    cp: Checkpoint,
    blobs: { hex: string; bytes: Buffer }[],
  ): Promise<void> {
    const lease = request.lease;
    await c.query(`SELECT waystation_commit_version($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, [
      this.taskId,
      next,
      kind,
      body,
      bytes,
      JSON.stringify(cp.source),
      cp.run.updated_at,
      token,
      summaryOf(cp),
      doc,
      blobs.map((b) => b.hex),
      blobs.map((b) => b.bytes),
      lease && lease.taskId === this.taskId ? lease.generation : null,
      request.eventAt ?? new Date().toISOString(),
    ]);
  }

  /**
   * Bring the task row's head up to the newest version this writer saved,
   * when it lags (before the lease is let go): a finished task is then
   * listed from its head alone. Returns what could not be done, as warnings.
   */
  async settle(): Promise<Problem[]> {
    const state = this.state;
    if (!state || !state.trusted || state.headVersion >= state.lastVersion || state.base === null) return [];
    try {
      const doc = encodeJson(state.base).toString('utf8');
      await this.conn.withClient((c) =>
        c.query(`UPDATE waystation_tasks SET head = $2, head_version = $3 WHERE task_id = $1 AND last_version = $3`, [
          this.taskId,
          doc,
          state.lastVersion,
        ]),
      );
      state.headVersion = state.lastVersion;
      state.deltaSinceHead = 0;
      return [];
    } catch (err) {
      return [
        problem(
          this.taskId,
          'io',
          `the listing's copy of version ${state.lastVersion} could not be written (${this.conn.mapError(err).message}); the version is saved, and readers apply it from its delta`,
        ),
      ];
    }
  }

  /**
   * After a dropped connection: whether this writer's version `next` is in
   * the database (by its token), asked once the server process `backend` that
   * ran the transaction is gone, so the answer is final.
   */
  private async committed(next: number, token: string, backend: number | null): Promise<boolean> {
    let last: unknown;
    for (let attempt = 0; attempt < OUTCOME_ATTEMPTS; attempt++) {
      try {
        const { rows } = await this.conn.withClient(async (c) => {
          if (backend !== null && !(await backendGone(c, backend))) throw new Error(`server process ${backend} has not exited yet`);
          return c.query<{ writer: string }>(`SELECT writer FROM waystation_versions WHERE task_id = $1 AND version = $2`, [
            this.taskId,
            next,
          ]);
        });
        if (rows.length === 0) return false;
        if (rows[0].writer === token) return true;
        throw new ConflictError(this.taskId, next);
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        last = err;
        await new Promise((r) => setTimeout(r, OUTCOME_DELAY_MS * (attempt + 1)));
      }
    }
    throw new CommitUnknownError(
      `the connection to ${this.conn.shown} was lost while version ${next} of task ${this.taskId} was being committed, and the server could not be asked since (${this.conn.mapError(last).message}); whether version ${next} was saved is unknown until it can be read. Stop here: resuming later continues from the last committed version.`,
    );
  }

  /**
   * A save the dropped connection cut off before it committed: a fault of the database, as one that could not be
   * reached is, so whoever drives the task stops at the version before, which is intact, and resumes from it.
   */
  private notCommitted(next: number, err: unknown): NotCommittedError {
    // mapError says "the connection to <URL> was lost (<why>)."
    const lost = this.conn.mapError(err).message.replace(/\.$/, '');
    const kept = next > 1 ? `nothing was written and version ${next - 1} is intact` : 'nothing was written';
    return new NotCommittedError(`${lost} before version ${next} of task ${this.taskId} was committed; ${kept}.`);
  }
}

/** The server process id of a connection (from the start-up handshake), or null when the driver does not say. */
function backendPid(client: pg.ClientBase): number | null {
  const pid = (client as unknown as { processID?: unknown }).processID;
  return typeof pid === 'number' && pid > 0 ? pid : null;
}

/**
 * End the server process of a connection that dropped, if it is still there:
 * a transaction it still holds open is rolled back, and a COMMIT it is
 * carrying out completes first. True once it is gone (the caller asks again
 * until it is). Only a process of this store's own (its application name)
 * and role is ended; one of another role cannot be, and is waited for.
 * `pg_terminate_backend(pid)` without a timeout works on every supported
 * server version.
 */
async function backendGone(client: pg.ClientBase, pid: number): Promise<boolean> {
  const { rows } = await client.query<{ signalled: boolean | null }>(
    `SELECT CASE WHEN usename = current_user THEN pg_terminate_backend(pid) END AS signalled
       FROM pg_stat_activity WHERE pid = $1 AND application_name = 'waystation'`,
    [pid],
  );
  if (rows.length === 0) return true;
  // Signalled, it exits within moments; look again before the caller waits.
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 25));
    const still = await client.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [pid]);
    if (still.rowCount === 0) return true;
  }
  return false;
}
