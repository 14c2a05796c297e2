/**
 * The task lease as a row of `waystation_leases`: the holder's entry (the
 * same fields as a lease file) and a generation that every takeover and
 * every release raises. Takeover follows the same rule as the directory
 * store's (`leaseIsLive`); a save is fenced in its committing transaction by
 * comparing the row's generation with its lease's (pg-writes.ts), under a
 * share lock, so a takeover waits for a commit already under way and every
 * later save of the old holder is refused. A stop request is a column of
 * the row, bound to its generation: a release or a takeover clears it, so a
 * later run never sees a stop meant for an earlier one.
 */
import type pg from 'pg';
import {
  startHeartbeatTimer,
  leaseIsLive,
  leaseTtlMs,
  LeaseHeldError,
  LeaseLostError,
  newLeaseEntry,
  UNKNOWN_HOLDER,
  type LeaseEntry,
  type LeaseOptions,
} from '../lease-rules.js';
import { nextStopRequest, parseStopRequest, type StopRequest } from '../stop-request.js';
import type { StopAsked, TaskLease } from '../store-types.js';
import type { Connection } from './pg-connection.js';
import { pgCode } from './pg-errors.js';

/** A lease row as read: its generation, its entry, and the stop asked of that generation. */
export interface LeaseRow {
  generation: number;
  entry: LeaseEntry | null;
  stop: StopRequest | null;
}

/** The current lease row of a task, or null when none was ever taken. */
export async function readLeaseRow(client: pg.ClientBase, taskId: string, lock = ''): Promise<LeaseRow | null> {
  const { rows } = await client.query<{ generation: number; entry: string; stop_request: string | null }>(
    `SELECT generation, entry, stop_request FROM waystation_leases WHERE task_id = $1 ${lock}`,
    [taskId],
  );
  if (rows.length === 0) return null;
  return { generation: rows[0].generation, entry: parseLeaseEntry(rows[0].entry), stop: parseStopRequest(rows[0].stop_request) };
}

/** A lease row's entry column; null when there is none or it does not parse (no live holder, as an unreadable lease file). */
export function parseLeaseEntry(text: string | null): LeaseEntry | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as LeaseEntry;
  } catch {
    return null;
  }
}

/** Ask the live holder of a task's lease to stop (in one transaction with the row locked); null when nobody live holds it. */
export async function requestPgStop(conn: Connection, taskId: string, req: { by: string; reason?: string }): Promise<StopAsked | null> {
  try {
    return await conn.transaction(async (c) => {
      const row = await readLeaseRow(c, taskId, 'FOR UPDATE');
      if (!row?.entry || !leaseIsLive(row.entry)) return null;
      const request = nextStopRequest(row.stop, req);
      await c.query(`UPDATE waystation_leases SET stop_request = $3 WHERE task_id = $1 AND generation = $2`, [
        taskId,
        row.generation,
        JSON.stringify(request),
      ]);
      return { request, generation: row.generation, holder: row.entry };
    });
  } catch (err) {
    throw conn.mapError(err);
  }
}

/** A lease held through a database row. */
export class PgLease implements TaskLease {
  private timer: NodeJS.Timeout | null = null;
  private lostError: LeaseLostError | null = null;
  private releasing = false;

  constructor(
    private readonly conn: Connection,
    readonly taskId: string,
    readonly generation: number,
    private entry: LeaseEntry,
    private readonly opts: LeaseOptions,
  ) {}

  get lost(): LeaseLostError | null {
    return this.lostError;
  }

  get held(): boolean {
    return this.lostError === null && !this.releasing;
  }

  assertHeld(): void {
    if (this.lostError) throw this.lostError;
  }

  /** The stop asked of this generation, read from the lease row: one query at each safe boundary. */
  async stopRequest(): Promise<StopRequest | null> {
    try {
      const { rows } = await this.conn.withClient((c) =>
        c.query<{ stop_request: string | null }>(`SELECT stop_request FROM waystation_leases WHERE task_id = $1 AND generation = $2`, [
          this.taskId,
          this.generation,
        ]),
      );
      return parseStopRequest(rows[0]?.stop_request ?? null);
    } catch {
      // A check that cannot reach the server is no stop: the save that follows reports the fault, and nothing is lost.
      return null;
    }
  }

  startHeartbeat(): void {
    this.timer = startHeartbeatTimer(this.opts, () => this.heartbeat());
  }

  async heartbeat(): Promise<void> {
    if (this.lostError || this.releasing) return;
    const next = { ...this.entry, heartbeat_at: new Date().toISOString() };
    const updated = await this.conn.withClient((c) =>
      c.query(`UPDATE waystation_leases SET entry = $3 WHERE task_id = $1 AND generation = $2`, [
        this.taskId,
        this.generation,
        JSON.stringify(next),
      ]),
    );
    if (updated.rowCount === 0) {
      this.lostError = new LeaseLostError(this.taskId);
      this.stop();
      this.opts.onLost?.(this.lostError);
      return;
    }
    this.entry = next;
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async release(): Promise<void> {
    this.stop();
    if (this.lostError || this.releasing) return;
    this.releasing = true;
    const released = { ...this.entry, heartbeat_at: new Date().toISOString(), released: true };
    await this.conn.withClient((c) =>
      c.query(
        `UPDATE waystation_leases SET generation = generation + 1, entry = $3, stop_request = NULL WHERE task_id = $1 AND generation = $2`,
        [this.taskId, this.generation, JSON.stringify(released)],
      ),
    );
  }
}

/** Take the lease of a task, or fail with LeaseHeldError naming the live holder. */
export async function acquirePgLease(conn: Connection, taskId: string, opts: LeaseOptions): Promise<PgLease> {
  const ttl = opts.ttlMs ?? leaseTtlMs();
  for (let attempt = 0; attempt < 3; attempt++) {
    const entry = newLeaseEntry(opts.owner);
    try {
      const generation = await conn.transaction(async (c) => {
        const current = await readLeaseRow(c, taskId, 'FOR UPDATE');
        if (current?.entry && leaseIsLive(current.entry, ttl)) throw new LeaseHeldError(taskId, current.entry);
        const next = (current?.generation ?? 0) + 1;
        if (current)
          await c.query(`UPDATE waystation_leases SET generation = $2, entry = $3, stop_request = NULL WHERE task_id = $1`, [
            taskId,
            next,
            JSON.stringify(entry),
          ]);
        else
          await c.query(`INSERT INTO waystation_leases (task_id, generation, entry) VALUES ($1, $2, $3)`, [
            taskId,
            next,
            JSON.stringify(entry),
          ]);
        return next;
      });
      const lease = new PgLease(conn, taskId, generation, entry, opts);
      lease.startHeartbeat();
      return lease;
    } catch (err) {
      // Two first-ever acquisitions both found no row: one insert wins, the other looks again.
      if (pgCode(err) === '23505') continue;
      if (err instanceof LeaseHeldError) throw err;
      throw conn.mapError(err);
    }
  }
  const current = await conn.read((c) => readLeaseRow(c, taskId));
  throw new LeaseHeldError(taskId, current?.entry ?? UNKNOWN_HOLDER);
}
