/**
 * The event log of a PostgreSQL store, and the subscription to it.
 *
 * A task's event ids come from its row's counter, advanced in the same
 * transaction that inserts the event, so they increase by one with no gap
 * and commit in id order. Once a transaction that added events has
 * committed, its writer sends NOTIFY on CHANGES_CHANNEL with the task id, in
 * a transaction of its own on another pooled connection, without the save
 * waiting (Connection.announce, pg-connection.ts: sent from the saves' own
 * transactions it serialised their commits). A subscriber LISTENs
 * on a connection of its own and reads the events after the last id it
 * delivered for that task. When that connection drops it reconnects and
 * catches up from the table, so nothing is skipped or delivered twice; and
 * since a writer can die between its commit and its notification, it also
 * catches up every CATCH_UP_MS, the one way such a change still arrives.
 */
import type pg from 'pg';
import { problem } from '../../../shared/checkpoint/problem.js';
import { TaskReadError, type StoreChange, type StoreSubscription, type TaskEvent } from '../store-types.js';
import type { Connection } from './pg-connection.js';
import { CHANGES_CHANNEL } from './pg-schema.js';
import { readEvents } from './pg-reads.js';

export type NewEvent = Omit<TaskEvent, 'id' | 'task_id' | 'at'> & { at?: string };

/**
 * Append one event inside the caller's transaction; returns it with its id.
 * The caller announces it once that transaction has committed
 * (Connection.transaction's `notify`).
 */
export async function insertEvent(client: pg.ClientBase, taskId: string, event: NewEvent): Promise<TaskEvent> {
  const { rows } = await client.query<{ id: string }>(
    `UPDATE waystation_tasks SET last_event_id = last_event_id + 1 WHERE task_id = $1 RETURNING last_event_id AS id`,
    [taskId],
  );
  if (rows.length === 0)
    throw new TaskReadError(taskId, [
      problem(taskId, 'unreadable', `there is no Waystation task ${JSON.stringify(taskId)} to log events for`),
    ]);
  return writeEvent(client, taskId, Number(rows[0].id), event);
}

/** Write the event whose id the caller's transaction has just taken from the task row's counter. */
export async function writeEvent(client: pg.ClientBase, taskId: string, id: number, event: NewEvent): Promise<TaskEvent> {
  const { at, ...rest } = event;
  const full: TaskEvent = { id, task_id: taskId, ...rest, at: at ?? new Date().toISOString() };
  await client.query(`INSERT INTO waystation_events (task_id, id, body) VALUES ($1, $2, $3)`, [taskId, full.id, JSON.stringify(full)]);
  return full;
}

/**
 * How often a subscriber compares every task's event counter with what it
 * delivered: a change whose notification was never sent (its writer died
 * just after committing) arrives within this, every other one at once.
 */
export const CATCH_UP_MS = 5_000;

/** How long to wait before reconnecting a dropped LISTEN connection, at most. */
const MAX_RECONNECT_MS = 5_000;

/**
 * LISTEN for changes and deliver each task's new events once, in order.
 *
 * `ready`: what the caller checks of the store before the feed may read its
 * tables (the schema). The feed's connection logs in meanwhile, and its first
 * catch-up waits for the check; a check that fails ends the feed with the
 * check's error, whatever happened to the connection.
 */
export async function subscribePg(
  conn: Connection,
  onChange: (change: StoreChange) => void,
  onError?: (err: Error) => void,
  opts: { catchUpMs?: number; ready?: Promise<unknown> } = {},
): Promise<StoreSubscription> {
  const delivered = new Map<string, number>();
  let closed = false;
  let client: pg.Client | null = null;
  let queue = Promise.resolve();
  let backoff = 100;

  const deliver = async (taskId: string) => {
    const after = delivered.get(taskId) ?? 0;
    const events = await conn.read((c) => readEvents(c, taskId, after));
    if (events.length === 0 || closed) return;
    delivered.set(taskId, events[events.length - 1].id);
    onChange({ task_id: taskId, events });
  };
  // One delivery at a time: two notifications of one task never read the same events twice.
  const enqueue = (fn: () => Promise<void>) => {
    queue = queue.then(fn).catch((err: unknown) => onError?.(err instanceof Error ? err : new Error(String(err))));
    return queue;
  };

  /** Tasks whose counter is past what was delivered: after a reconnect, what was missed. */
  const catchUp = async (first: boolean) => {
    const { rows } = await conn.read((c) =>
      c.query<{ task_id: string; last: string }>(`SELECT task_id, last_event_id AS last FROM waystation_tasks`),
    );
    for (const r of rows) {
      const last = Number(r.last);
      if (first) delivered.set(r.task_id, last);
      else if (last > (delivered.get(r.task_id) ?? 0)) await deliver(r.task_id);
    }
  };

  const connect = async (first: boolean): Promise<void> => {
    const c = conn.newClient();
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => undefined);
      if (first) await opts.ready;
      throw conn.mapError(err);
    }
    if (first) {
      try {
        await opts.ready;
      } catch (err) {
        await c.end().catch(() => undefined);
        throw err;
      }
    }
    client = c;
    c.on('notification', (msg) => {
      if (msg.payload) void enqueue(() => deliver(msg.payload!));
    });
    c.on('end', () => {
      if (closed || client !== c) return;
      client = null;
      onError?.(new Error(`the change feed of ${conn.shown} lost its connection; reconnecting`));
      scheduleReconnect();
    });
    // Listening before the baseline is read: a commit in between is delivered, not lost.
    await enqueue(() => catchUp(first));
    backoff = 100;
  };

  const scheduleReconnect = () => {
    if (closed) return;
    const t = setTimeout(() => {
      connect(false).catch((err: unknown) => {
        onError?.(err instanceof Error ? err : new Error(String(err)));
        backoff = Math.min(backoff * 2, MAX_RECONNECT_MS);
        scheduleReconnect();
      });
    }, backoff);
    t.unref();
  };

  await connect(true);
  const sweep = setInterval(() => {
    if (client) void enqueue(() => catchUp(false));
  }, opts.catchUpMs ?? CATCH_UP_MS);
  sweep.unref();
  return {
    async close() {
      closed = true;
      clearInterval(sweep);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
      await queue;
    },
  };
}
