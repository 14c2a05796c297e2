/**
 * A LangGraph checkpointer's tables as a Waystation source: every thread a
 * task, every checkpoint a version, read-only (see CheckpointSource).
 *
 * Reads go through CheckpointRows (SQLite or PostgreSQL). What was read is
 * kept only while the tables are unchanged: `changeMark` is asked first (one
 * cheap query), so a new checkpoint, or a write added to an old one (the
 * `__resume__` that answers an interrupt), is seen by the next read.
 */
import path from 'node:path';
import type { Checkpoint, HistoryMessage } from '../../../shared/checkpoint/schema.js';
import { problem, type Problem } from '../../../shared/checkpoint/problem.js';
import {
  TaskReadError,
  type CheckpointSource,
  type HistoryMark,
  type HistoryTail,
  type KeepListed,
  type LeaseRead,
  type ListedFiles,
  type ListedTask,
  type StoreChange,
  type StoreSubscription,
  type TaskEntry,
  type TaskEvent,
  type VersionInfo,
  type VersionMark,
  type VersionsAfter,
} from '../../store/store-types.js';
import { leaseInfoOf } from '../../store/lease-rules.js';
import { leaseTtlMs } from '../../store/lease-record.js';
import type { CheckpointRef, CheckpointRows, ThreadRow } from './checkpoint-rows.js';
import { watchLangGraph } from './langgraph-watcher.js';
import { timeOf, timeOfCheckpointId } from './checkpoint-time.js';
import { taskIdOf, threadOf } from './task-ids.js';
import { mapCheckpoint, metadataOf, problemFile, UndecodableCheckpoint, type MappedVersion, type ThreadContext } from './thread-mapping.js';

/** How many mapped versions are kept: a diff needs two, stepping through History reuses them. */
const KEPT_VERSIONS = 16;

type Mapped = { ok: true; value: MappedVersion } | { ok: false; problem: Problem };

/** A LangGraph source; see the module comment. */
export class LangGraphSource implements CheckpointSource {
  readonly root: string;
  /**
   * What relative artifact paths resolve against: a LangGraph state names no
   * Waystation artifacts, so this is only where a verify would look, the
   * file's folder (or, for a database, the working directory).
   */
  readonly artifactRoot: string;
  private mark: string | null = null;
  private threadRows: Map<string, ThreadRow> | null = null;
  private readonly linksKept = new Map<string, CheckpointRef[]>();
  private readonly versionsKept = new Map<string, Mapped>();

  constructor(readonly rows: CheckpointRows) {
    this.root = rows.locator;
    this.artifactRoot = rows.kind === 'sqlite' ? path.dirname(rows.locator) : process.cwd();
  }

  /** Forget what was read once the tables changed. */
  private async fresh(): Promise<void> {
    const mark = await this.rows.changeMark();
    if (mark === this.mark) return;
    this.mark = mark;
    this.threadRows = null;
    this.linksKept.clear();
    this.versionsKept.clear();
  }

  /** The threads as of now; `checked` when fresh() was just asked (a listing asks once, not once a thread). */
  private async threads(checked = false): Promise<Map<string, ThreadRow>> {
    if (!checked) await this.fresh();
    if (!this.threadRows) {
      const rows = await this.rows.threads();
      this.threadRows = new Map(rows.map((r) => [taskIdOf(r.thread_id, r.checkpoint_ns), r]));
    }
    return this.threadRows;
  }

  private async context(taskId: string, checked = false): Promise<ThreadContext | null> {
    const thread = (await this.threads(checked)).get(taskId);
    if (!thread) return null;
    let links = this.linksKept.get(taskId);
    if (!links) {
      links = await this.rows.refs(thread.thread_id, thread.checkpoint_ns);
      this.linksKept.set(taskId, links);
    }
    return { taskId, thread_id: thread.thread_id, checkpoint_ns: thread.checkpoint_ns, links };
  }

  private async mapped(ctx: ThreadContext, link: CheckpointRef): Promise<Mapped> {
    const key = `${ctx.taskId}\0${link.checkpoint_id}`;
    const kept = this.versionsKept.get(key);
    if (kept) {
      this.versionsKept.delete(key);
      this.versionsKept.set(key, kept);
      return kept;
    }
    const row = await this.rows.checkpoint(ctx.thread_id, ctx.checkpoint_ns, link.checkpoint_id);
    let result: Mapped;
    if (!row) {
      result = {
        ok: false,
        problem: problem(
          problemFile(ctx, link.checkpoint_id),
          'unreadable',
          `checkpoint ${link.checkpoint_id} went away while it was being read`,
        ),
      };
    } else {
      try {
        result = { ok: true, value: mapCheckpoint(ctx, row) };
      } catch (err) {
        if (!(err instanceof UndecodableCheckpoint)) throw err;
        result = { ok: false, problem: err.problem };
      }
    }
    this.versionsKept.set(key, result);
    if (this.versionsKept.size > KEPT_VERSIONS) this.versionsKept.delete(this.versionsKept.keys().next().value!);
    return result;
  }

  /**
   * A checkpoint for a listing: without its conversation (see
   * CheckpointRows.checkpoint), so its goal, message count and spend are not
   * filled in; what a list row shows is. Never kept: getTask reads it whole.
   */
  private async listed(ctx: ThreadContext, link: CheckpointRef): Promise<Mapped> {
    const kept = this.versionsKept.get(`${ctx.taskId}\0${link.checkpoint_id}`);
    if (kept) return kept;
    const row = await this.rows.checkpoint(ctx.thread_id, ctx.checkpoint_ns, link.checkpoint_id, { withoutMessages: true });
    if (!row) return this.mapped(ctx, link);
    try {
      return { ok: true, value: mapCheckpoint(ctx, row) };
    } catch (err) {
      if (!(err instanceof UndecodableCheckpoint)) throw err;
      return { ok: false, problem: err.problem };
    }
  }

  /** The entry of a thread: its newest checkpoint that can be read, with the problems of those after it. */
  private async entryOf(ctx: ThreadContext, forListing = false): Promise<TaskEntry> {
    const problems: Problem[] = [];
    let checkpoint: Checkpoint | null = null;
    for (let i = ctx.links.length - 1; i >= 0 && !checkpoint; i--) {
      const m = forListing ? await this.listed(ctx, ctx.links[i]) : await this.mapped(ctx, ctx.links[i]);
      if (m.ok) {
        checkpoint = m.value.checkpoint;
        problems.push(...m.value.problems);
      } else problems.push(m.problem);
    }
    return { task_id: ctx.taskId, location: ctx.taskId, format: 'langgraph', checkpoint, read_only: true, problems };
  }

  listTasks(): Promise<ListedTask[]>;
  listTasks<T>(keep: KeepListed<T>): Promise<T[]>;
  async listTasks<T>(keep?: KeepListed<T>): Promise<(ListedTask | T)[]> {
    const ids = [...(await this.threads()).keys()].sort();
    const entries: ListedTask[] = [];
    for (const id of ids) {
      const ctx = await this.context(id, true);
      if (ctx) entries.push(await this.entryOf(ctx, true));
    }
    return keep ? keep(entries) : entries;
  }

  async getTask(taskId: string): Promise<TaskEntry | null> {
    const ctx = await this.context(taskId);
    return ctx ? this.entryOf(ctx) : null;
  }

  private async versionOf(taskId: string, version: number): Promise<MappedVersion> {
    const ctx = await this.context(taskId);
    if (!ctx)
      throw new TaskReadError(taskId, [problem(taskId, 'unreadable', `there is no thread ${threadOf(taskId).thread_id} in ${this.root}`)]);
    const link = ctx.links[version - 1];
    if (!link) {
      throw new TaskReadError(taskId, [
        problem(taskId, 'missing-version', `thread ${ctx.thread_id} has versions 1 to ${ctx.links.length}, not ${version}`),
      ]);
    }
    const m = await this.mapped(ctx, link);
    if (!m.ok) throw new TaskReadError(taskId, [m.problem]);
    return m.value;
  }

  async readVersion(taskId: string, version: number): Promise<Checkpoint> {
    return (await this.versionOf(taskId, version)).checkpoint;
  }

  async readVersions(taskId: string, versions: readonly number[]): Promise<Checkpoint[]> {
    const out: Checkpoint[] = [];
    for (const v of versions) out.push(await this.readVersion(taskId, v));
    return out;
  }

  async history(taskId: string): Promise<VersionInfo[]> {
    const ctx = await this.context(taskId);
    if (!ctx) return [];
    const links = await this.rows.links(ctx.thread_id, ctx.checkpoint_ns);
    const index = new Map(links.map((l, i) => [l.checkpoint_id, i + 1]));
    return links.map((link, i) => {
      const meta = metadataOf(link);
      const lgSource = typeof meta.source === 'string' ? meta.source : 'unknown';
      const step = typeof meta.step === 'number' ? meta.step : null;
      const parent = link.parent_checkpoint_id ? (index.get(link.parent_checkpoint_id) ?? null) : null;
      // A version whose parent is not the one before it starts a branch: LangGraph forked the thread there.
      const branch = parent !== null && parent !== i ? `, from version ${parent}` : '';
      const encrypted = link.type?.includes('+') ? ', encrypted' : '';
      return {
        version: i + 1,
        source: {
          kind: lgSource === 'update' ? 'human-edit' : 'runtime',
          actor: 'langgraph',
          note: `${lgSource}${step === null ? '' : `, step ${step}`}${branch}${encrypted}`,
          langgraph: {
            checkpoint_id: link.checkpoint_id,
            parent_checkpoint_id: link.parent_checkpoint_id,
            parent_version: parent,
            source: lgSource,
            step,
          },
        },
        updated_at: timeOf(link.ts) ?? timeOfCheckpointId(link.checkpoint_id) ?? '',
        bytes: link.bytes,
      };
    });
  }

  async historyAfter(taskId: string, after?: VersionMark): Promise<VersionsAfter> {
    const all = await this.history(taskId);
    const held = after ? all[after.version - 1] : undefined;
    if (after && held && held.updated_at === after.updated_at && held.bytes === after.bytes) {
      return { after: after.version, versions: all.slice(after.version) };
    }
    return { after: 0, versions: all };
  }

  async readBlob(taskId: string, ref: string): Promise<unknown> {
    throw new TaskReadError(taskId, [
      problem(taskId, 'unreadable', `a LangGraph thread has no blob ${ref}: its values are in the checkpoint's channels`),
    ]);
  }

  async readHistory(taskId: string, version?: number): Promise<HistoryMessage[]> {
    const v = version ?? (await this.latestVersion(taskId));
    return v === null ? [] : (await this.versionOf(taskId, v)).messages;
  }

  async readHistoryAfter(taskId: string, version?: number, after?: HistoryMark): Promise<HistoryTail> {
    const messages = await this.readHistory(taskId, version);
    // LangGraph keeps the whole list in each checkpoint, and a fork or an edit may rewrite it: only a list that
    // starts with the held one continues it, and without content hashes that cannot be told, so all of it is sent.
    void after;
    return { from: 0, messages };
  }

  private async latestVersion(taskId: string): Promise<number | null> {
    const entry = await this.getTask(taskId);
    return entry?.checkpoint?.version ?? null;
  }

  async readEvents(_taskId: string, _afterId?: number): Promise<TaskEvent[]> {
    // LangGraph keeps no event log: what happened is its checkpoints, shown as History.
    return [];
  }

  /** Each thread's task id with a mark that changes when a checkpoint or a write is added to it (live updates). */
  async threadMarks(): Promise<Map<string, string>> {
    const marks = new Map<string, string>();
    for (const [id, t] of await this.threads()) marks.set(id, `${t.checkpoints}:${t.latest_id}:${t.writes}`);
    return marks;
  }

  /**
   * Whether a run is driving the thread, as far as its rows tell: LangGraph records no process, and a run between
   * steps, a breakpoint and a process that died leave the same rows. A checkpoint taken less than the lease's
   * time-to-live ago (30 s, WAYSTATION_LEASE_TTL_MS) is taken as a run's heartbeat: the thread shows running, and
   * interrupted once its newest checkpoint is older (the host asks again, running-rows.ts). A node that runs longer
   * than that shows interrupted until its checkpoint comes; a breakpoint shows running for that long.
   */
  async readLease(taskId: string, opts: { ttlMs?: number; now?: number } = {}): Promise<LeaseRead> {
    // The threads as last read, without asking whether the tables changed: a listing summarizes every thread just
    // after reading them (a query a thread, asked of thousands of stopped threads, would double a listing), and the
    // watcher reads them again whenever a checkpoint lands. What is asked here is how old the newest one is now.
    const thread = (this.threadRows ?? (await this.threads())).get(taskId);
    const at = thread ? timeOfCheckpointId(thread.latest_id) : null;
    const ttl = opts.ttlMs ?? leaseTtlMs();
    const age = at === null ? Number.POSITIVE_INFINITY : (opts.now ?? Date.now()) - Date.parse(at);
    if (age >= ttl) return { entry: null, info: leaseInfoOf(null, opts) };
    return { entry: null, info: { held: true, owner: 'a LangGraph run', since: at! } };
  }

  /** SQLite and PostgreSQL commit a checkpoint's rows whole: no interruption leaves anything of Waystation's kind behind. */
  async recoveryReport(): Promise<null> {
    return null;
  }

  /** A thread's checkpoints are rows, not files a listing could skip. */
  async fileProblems(entries: readonly ListedFiles[]): Promise<Problem[][]> {
    return entries.map(() => []);
  }

  /**
   * New checkpoints as they appear (see langgraph-watcher.ts: the SQLite file
   * is watched, a database polled); a thread gone is a change whose task no
   * longer reads. LangGraph keeps no event log, so changes carry no events.
   */
  async subscribe(onChange: (change: StoreChange) => void, onError?: (err: Error) => void): Promise<StoreSubscription> {
    const file = this.rows.kind === 'sqlite' ? this.rows.locator : null;
    const watcher = watchLangGraph(
      this,
      file,
      (changes) => {
        for (const c of changes) onChange({ task_id: c.location, events: [] });
      },
      { onError },
    );
    await watcher.ready;
    return { close: () => watcher.close() };
  }

  /** Let the connection or file go. */
  close(): Promise<void> {
    return this.rows.close();
  }
}
