/**
 * An in-memory WaystationApi for component and store tests: real checkpoints
 * (parsed by the real schema), real summaries, real diffs, and events the test
 * pushes by hand. Every call is recorded so tests can assert what was (not) sent.
 */
import { ApiError } from '../../shared/api/api-error.js';
import type {
  ApiInput,
  ApiMethod,
  DirectoryInfo,
  HostEvent,
  HostEventInput,
  HostEventListener,
  TaskAgentStatus,
  TaskDetail,
  StreamStatus,
  TaskEventEntry,
  WaystationApi,
} from '../../shared/api/contract.js';
import { Checkpoint, CURRENT_SCHEMA_VERSION, type CheckpointInput, type HistoryMessage } from '../../shared/checkpoint/schema.js';
import { toTaskSummary } from '../../shared/checkpoint/task-summary.js';
import { newestFirst } from '../../shared/checkpoint/task-order.js';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import { validateAgainstSchema } from '../../shared/checkpoint/output-schema.js';

/** A checkpoint with a failed second step whose output has a schema. */
export function makeCheckpoint(taskId: string, overrides: Partial<CheckpointInput> = {}): Checkpoint {
  return Checkpoint.parse({
    schema_version: CURRENT_SCHEMA_VERSION,
    task_id: taskId,
    task_name: `Task ${taskId}`,
    version: 1,
    status: 'failed',
    phase: 'summarizing',
    goal: 'Summarize the notes',
    plan: [
      { id: 'read', name: 'read notes', status: 'done', attempts: 1, tokens_in: 10, tokens_out: 5, elapsed_ms: 200 },
      {
        id: 'summarize',
        name: 'summarize',
        status: 'failed',
        attempts: 2,
        error: { message: 'model returned invalid JSON', kind: 'schema' },
        output_schema: { type: 'object', required: ['summary'], properties: { summary: { type: 'string', minLength: 1 } } },
      },
    ],
    current_step: 1,
    total_steps: 2,
    resume_hint: 'rerun summarize',
    recovery: { mode: 'manual' },
    run: { created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:01:00Z' },
    source: { kind: 'runtime' },
    ...overrides,
  });
}

type Call = { method: ApiMethod | 'subscribe'; input: unknown };

export class FakeApi {
  readonly calls: Call[] = [];
  /** task id -> versions, oldest first. */
  readonly tasks = new Map<string, Checkpoint[]>();
  private listeners = new Set<HostEventListener>();
  private statusListeners = new Set<(s: StreamStatus) => void>();
  /** Whether showNotification reports a desktop notification shown (the desktop app) or not (browser mode). */
  desktopNotifications = false;
  /** Tasks read from another format than Waystation's (an article's file), by id. */
  readonly formats = new Map<string, 'article-task-json' | 'article-checkpoint-json'>();
  /** Tasks whose artifacts no longer match the disk: listed as drifted. */
  readonly drifted = new Set<string>();
  /** Tasks a live runner holds the lease of: a running one is listed running, not interrupted. */
  readonly driven = new Set<string>();
  private nextEventId = 1;
  /** Per-method artificial gates: a test resolves them to control ordering. */
  readonly gates = new Map<string, Promise<void>>();
  /** What getDirectory answers; openDirectory and chooseDirectory change it. */
  directory: DirectoryInfo = { root: '/tmp/fake', recent: [], host: 'web', read_only: false, recent_read_only: [] };
  /** A folder opened, as the desktop host records it: first among the recent ones, in the mode it was opened in. */
  private opened(root: string, readOnly: boolean): void {
    const d = this.directory;
    this.directory = {
      ...d,
      root,
      read_only: readOnly,
      recent: [root, ...d.recent.filter((r) => r !== root)],
      recent_read_only: [...(readOnly ? [root] : []), ...d.recent_read_only.filter((r) => r !== root)],
    };
  }

  /** What the folder picker returns: a path, or null for a cancelled picker. */
  chosen: string | null = null;
  /** task id -> its messages (the same at every version). */
  readonly messages = new Map<string, HistoryMessage[]>();
  /** task id -> its event log, oldest first. */
  readonly events = new Map<string, TaskEventEntry[]>();
  /** Tasks whose history a test replaced: getMessages answers them whole, from 0. */
  readonly rewrittenHistories = new Set<string>();
  /** `taskId:stepId` -> the step's stored result; other steps answer `{ summary: 'old' }`. */
  readonly results = new Map<string, unknown>();
  /** task id -> what getTask reports of its agent; by default a built-in that is found, or none when the task records no agent. */
  readonly agentStatus = new Map<string, TaskAgentStatus>();

  add(cp: Checkpoint): this {
    this.tasks.set(cp.task_id, [...(this.tasks.get(cp.task_id) ?? []), cp]);
    return this;
  }

  emit(event: HostEventInput): void {
    const full = { ...event, id: this.nextEventId++ } as HostEvent;
    for (const l of this.listeners) l(full);
  }

  /**
   * Hold the answers of one kind of listing until the function returned is
   * called, as a host still reading a large directory holds the whole list:
   * `held` says which kind; a first screen answers `firstScreen` rows.
   */
  holdListing(held: 'whole list' | 'first screen', firstScreen: number): () => void {
    const listTasks = this.api.listTasks;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    this.api.listTasks = async (input) => {
      const rows = await listTasks(input);
      if ((input.limit === undefined) === (held === 'whole list')) await released;
      return input.limit === undefined ? rows : rows.slice(0, firstScreen);
    };
    return release;
  }

  count(method: ApiMethod): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  private latest(taskId: string): Checkpoint {
    const versions = this.tasks.get(taskId);
    if (!versions) throw new ApiError('not-found', `no task ${taskId}`);
    return versions[versions.length - 1];
  }

  /** The row listTasks reports for a task's latest version: what the host sends with task-changed. */
  summaryOf(taskId: string) {
    return this.summary(this.latest(taskId));
  }

  private summary(cp: Checkpoint) {
    return toTaskSummary(
      {
        task_id: cp.task_id,
        location: this.formats.has(cp.task_id) ? `${cp.task_id}.json` : cp.task_id,
        format: this.formats.get(cp.task_id) ?? 'waystation',
        checkpoint: cp,
        read_only: false,
        problems: [],
      },
      { drift: this.drifted.has(cp.task_id), leaseHeld: this.driven.has(cp.task_id) },
    );
  }

  /** Report the event stream's status to every subscriber that asked for it, as the HTTP client does. */
  streamStatus(status: StreamStatus): void {
    for (const l of this.statusListeners) l(status);
  }

  private async gate(key: string) {
    const g = this.gates.get(key);
    if (g) await g;
  }

  readonly api: WaystationApi = (() => {
    const record = <M extends ApiMethod>(method: M, input: ApiInput<M>) => this.calls.push({ method, input });
    return {
      getDirectory: async (i) => {
        record('getDirectory', i);
        return { ...this.directory };
      },
      openDirectory: async (i) => {
        record('openDirectory', i);
        this.opened(i.path, i.readOnly ?? this.directory.recent_read_only.includes(i.path));
        return { ...this.directory };
      },
      chooseDirectory: async (i) => {
        record('chooseDirectory', i);
        if (this.chosen === null) return null;
        this.opened(this.chosen, i.readOnly ?? false);
        return { ...this.directory };
      },
      getDirectoryTrust: async (i) => {
        record('getDirectoryTrust', i);
        const untrusted = this.directory.untrusted === true;
        return {
          root: this.directory.root,
          trusted: !untrusted,
          can_trust: true,
          changed: false,
          agents: [],
          config_problem: null,
          resumes: [],
          message: untrusted ? `${this.directory.root} is not trusted` : `${this.directory.root} is trusted`,
        };
      },
      trustDirectory: async (i) => {
        record('trustDirectory', i);
        this.directory = { ...this.directory, untrusted: false, read_only: false };
        return { ...this.directory };
      },
      listTasks: async (i) => {
        record('listTasks', i);
        const rows = [...this.tasks.keys()].map((id) => this.summary(this.latest(id)));
        // As the host: a first screen is the most recently updated rows.
        return i.limit === undefined ? rows : rows.sort(newestFirst).slice(0, i.limit);
      },
      getTask: async (i): Promise<TaskDetail> => {
        record('getTask', i);
        await this.gate(`getTask:${i.taskId}`);
        const latest = this.latest(i.taskId);
        const cp = i.version === undefined ? latest : this.tasks.get(i.taskId)!.find((v) => v.version === i.version);
        if (!cp) throw new ApiError('not-found', `task ${i.taskId} has no version ${i.version}`);
        const agent_status: TaskAgentStatus = this.agentStatus.get(i.taskId) ?? {
          name: latest.agent?.name ?? null,
          origin: latest.agent ? 'builtin' : 'none',
          available: Boolean(latest.agent),
        };
        return {
          summary: this.summary(latest),
          checkpoint: cp,
          version: cp.version,
          latest_version: latest.version,
          read_only: false,
          problems: [],
          lease: { held: this.driven.has(i.taskId) },
          agent_status,
        };
      },
      getHistory: async (i) => {
        record('getHistory', i);
        const all = (this.tasks.get(i.taskId) ?? []).map((cp) => ({
          version: cp.version,
          source: cp.source,
          updated_at: cp.run.updated_at,
          bytes: 100,
        }));
        // Like the host: the versions after the caller's last entry when that entry is still the task's, else all.
        const held = i.after && all.find((v) => v.version === i.after!.version);
        const continues = held && held.updated_at === i.after!.updated_at && held.bytes === i.after!.bytes;
        return continues
          ? { after: i.after!.version, versions: all.filter((v) => v.version > i.after!.version) }
          : { after: 0, versions: all };
      },
      getStepResult: async (i) => {
        record('getStepResult', i);
        const key = `${i.taskId}:${i.stepId}`;
        return { value: this.results.has(key) ? this.results.get(key) : { summary: 'old' }, found: true };
      },
      getMessages: async (i) => {
        record('getMessages', i);
        await this.gate(`getMessages:${i.taskId}`);
        const all = this.messages.get(i.taskId) ?? [];
        // Like the host: the messages after the caller's count when the history continues it (in the fake it
        // only grows, unless a test rewrote it), else all of them.
        const from = i.after && !this.rewrittenHistories.has(i.taskId) && i.after.count <= all.length ? i.after.count : 0;
        return { from, messages: all.slice(from) };
      },
      getEvents: async (i) => {
        record('getEvents', i);
        const all = this.events.get(i.taskId) ?? [];
        return { events: all.filter((e) => e.id > (i.after ?? 0)), skipped: 0 };
      },
      diffVersions: async (i) => {
        record('diffVersions', i);
        const versions = this.tasks.get(i.taskId) ?? [];
        const a = versions.find((v) => v.version === i.a)!;
        const b = versions.find((v) => v.version === i.b)!;
        return { a: i.a, b: i.b, summary: summarizeChange(a, b), entries: structuredDiff(a, b) };
      },
      verifyTask: async (i) => {
        record('verifyTask', i);
        const cp = this.latest(i.taskId);
        return {
          task_id: cp.task_id,
          version: cp.version,
          base_dir: '/tmp/fake',
          ok: true,
          drift: false,
          artifacts: [],
          uncertain_effects: [],
          invariant_problems: [],
        };
      },
      listAgents: async (i) => {
        record('listAgents', i);
        return [
          {
            name: 'md-summarizer',
            description: 'Summarizes markdown',
            options_schema: { type: 'object', properties: {} },
            origin: 'builtin',
          },
        ];
      },
      getOverview: async (i) => {
        record('getOverview', i);
        const latest = [...this.tasks.keys()].map((id) => this.latest(id));
        const steps = latest.flatMap((cp) =>
          cp.plan
            .filter((s) => (s.elapsed_ms ?? 0) > 0)
            .map((s) => ({ task_id: cp.task_id, step_id: s.id, step_name: s.name || s.id, elapsed_ms: s.elapsed_ms!, status: s.status })),
        );
        return {
          tasks_read: latest.length,
          tasks_total: latest.length,
          tokens_in: latest.reduce((n, cp) => n + cp.run.tokens_in, 0),
          tokens_out: latest.reduce((n, cp) => n + cp.run.tokens_out, 0),
          cost_usd: latest.reduce((n, cp) => n + cp.run.cost_usd, 0),
          slowest_steps: steps.sort((a, b) => b.elapsed_ms - a.elapsed_ms).slice(0, 5),
        };
      },
      showNotification: async (i) => {
        record('showNotification', i);
        return { shown: this.desktopNotifications };
      },
      startTask: async (i) => {
        record('startTask', i);
        return { taskId: i.taskId ?? 'new-task', version: 1, message: 'started' };
      },
      resumeTask: async (i) => {
        record('resumeTask', i);
        return { taskId: i.taskId, version: null, message: 'resumed' };
      },
      approveResume: async (i) => {
        record('approveResume', i);
        return { taskId: i.taskId, version: null, message: 'approved' };
      },
      rejectResume: async (i) => {
        record('rejectResume', i);
        return { taskId: i.taskId, version: null, message: 'rejected' };
      },
      editStepResult: async (i) => {
        record('editStepResult', i);
        const cp = this.latest(i.taskId);
        if (i.expectedVersion !== undefined && i.expectedVersion !== cp.version) {
          throw new ApiError(
            'conflict',
            `task ${i.taskId} moved on to version ${cp.version} since version ${i.expectedVersion} was opened for editing`,
          );
        }
        const step = cp.plan.find((s) => s.id === i.stepId)!;
        const errors = validateAgainstSchema(step.output_schema, i.value);
        if (errors.length) throw new ApiError('invalid-input', 'invalid value', errors);
        const next = Checkpoint.parse({
          ...cp,
          version: cp.version + 1,
          status: 'halted',
          plan: cp.plan.map((s) => (s.id === i.stepId ? { ...s, status: 'done', error: null } : s)),
          source: { kind: 'human-edit', edit: { step_id: i.stepId, before: null, after: i.value } },
        });
        this.add(next);
        return { taskId: i.taskId, version: next.version, message: `saved version ${next.version}` };
      },
      stopTask: async (i) => {
        record('stopTask', i);
        return { taskId: i.taskId, version: null, message: 'asked to stop' };
      },
      forkTask: async (i) => {
        record('forkTask', i);
        return { taskId: i.newTaskId ?? `${i.taskId}-fork`, version: 1, message: 'forked' };
      },
      previewRewind: async (i) => {
        record('previewRewind', i);
        const cp = this.latest(i.taskId);
        const from = cp.plan.findIndex((s) => s.id === i.stepId);
        const rerun = cp.plan.slice(from);
        const ids = new Set(rerun.map((s) => s.id));
        return {
          task_id: cp.task_id,
          version: cp.version,
          step_id: i.stepId,
          rerun: rerun.map((s) => ({ id: s.id, name: s.name, status: s.status })),
          artifacts: cp.artifacts.filter((a) => a.step_id && ids.has(a.step_id)).map((a) => a.path),
          effects: cp.side_effects
            .filter((e) => e.step_id && ids.has(e.step_id))
            .map((e) => ({
              id: e.id,
              type: e.type,
              idempotency_key: e.idempotency_key,
              step_id: e.step_id!,
              status: e.status,
              choice: (i.redo ?? []).includes(e.id) ? ('redo' as const) : ('keep' as const),
            })),
        };
      },
      rewindTask: async (i) => {
        record('rewindTask', i);
        return { taskId: i.taskId, version: null, message: 'rewound' };
      },
      // The fake holds Waystation tasks only: as the host answers for a directory that is no LangGraph checkpointer.
      previewThreadEdit: async (i) => {
        record('previewThreadEdit', i);
        throw new ApiError('invalid-input', 'editing state is for LangGraph threads; nothing was written');
      },
      editThreadState: async (i) => {
        record('editThreadState', i);
        throw new ApiError('invalid-input', 'editing state is for LangGraph threads; nothing was written');
      },
      subscribe: (listener, lastEventId, onStatus) => {
        this.calls.push({ method: 'subscribe', input: { lastEventId } });
        this.listeners.add(listener);
        if (onStatus) this.statusListeners.add(onStatus);
        return () => {
          this.listeners.delete(listener);
          if (onStatus) this.statusListeners.delete(onStatus);
        };
      },
    } satisfies WaystationApi;
  })();
}
