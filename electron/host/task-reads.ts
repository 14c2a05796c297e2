/**
 * What the API reads of one task of the open directory: its detail at a
 * version, its history, a step's result, its messages, a diff of two
 * versions, a full verify.
 *
 * Every read goes through `entry`, which refuses a task that is a symbolic
 * link out of the root. Versions rebuilt for a diff or a look at the past are
 * kept in a small cache, and what a full verify found drifted is remembered
 * (verified-drift.ts), so the task view and the list show it even when a stat
 * cannot (a same-size rewrite).
 */
import { langGraphPartOf, summarizeLangGraphChange } from '../../shared/diff/langgraph-change.js';
import type { ApiOutputs, ApiParsedInput, TaskDetail } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { mayBeDriven } from '../../shared/checkpoint/task-summary.js';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import { hasRecoveryNews } from '../store/recovery-report.js';
import { TaskReadError, type CheckpointSource, type TaskEntry } from '../store/store-types.js';
import { summarizeEntry } from '../verify/summarize-entry.js';
import { verifyTask, withNumberingProblems } from '../verify/verify-task.js';
import type { LoadFailures } from './load-failures.js';
import { taskAgentStatus, type ModuleHashCache } from './task-agent-status.js';
import type { VerifiedDrift } from './verified-drift.js';
import { VersionCache } from './version-cache.js';

export interface TaskReadsOptions {
  root: string;
  store: CheckpointSource;
  /** What full verifies found drifted: shared with the kept list, whose rows show it too. */
  drift: VerifiedDrift;
  /**
   * A full verify changed what the task at `location` is shown as (drift found, or gone): its row is to be
   * summarized again and announced, so the list and every window show what the task view shows.
   */
  onDriftChanged: (taskId: string, location: string) => Promise<void>;
  /** Task location -> task id, as last seen: a task read is remembered there (see KeptTaskList.locations). */
  locations: Map<string, string>;
  hashes: ModuleHashCache;
  loadFailures: LoadFailures;
}

/** The reads of one open directory's tasks; see the module comment. */
export class TaskReads {
  /** The last few versions rebuilt for a diff or a look at a past version. */
  private readonly versions: VersionCache;

  constructor(private readonly options: TaskReadsOptions) {
    this.versions = new VersionCache(options.root);
  }

  /**
   * The task a request names. A task that is a symbolic link out of the root
   * is refused, for reads as for actions (a worker would write there): it is
   * listed, with the problem, but nothing behind it is read, and the refusal
   * names the link, never where it leads.
   */
  async entry(taskId: string): Promise<TaskEntry> {
    const { store } = this.options;
    const entry = await store.getTask(taskId);
    // Named by the store's root: a database's URL without its password.
    if (!entry) throw new ApiError('not-found', `there is no task "${taskId}" in ${store.root}`);
    if (entry.problems.some((p) => p.reason === 'outside-root')) {
      throw new ApiError(
        'forbidden',
        `task "${entry.task_id}" (${entry.location}) is a symbolic link leading outside the checkpoint directory ${store.root}; it is not read, and nothing was done`,
      );
    }
    this.options.locations.set(entry.location, entry.task_id);
    return entry;
  }

  async getTask(input: ApiParsedInput<'getTask'>): Promise<TaskDetail> {
    const { root, hashes, loadFailures } = this.options;
    const entry = await this.entry(input.taskId);
    const checkpoint = input.version === undefined && !entry.checkpoint ? null : await this.checkpointAt(entry, input.version);
    const lease = mayBeDriven(entry.format) ? (await this.options.store.readLease(entry.task_id)).info : { held: false };
    // A full verify of this very version may know of drift a stat cannot see (a same-size rewrite).
    const knownDrift = this.options.drift.holds(entry.task_id, entry.checkpoint);
    // Of the latest version, whichever is shown: that is what a resume would run.
    const agent_status = entry.checkpoint
      ? await taskAgentStatus(root, entry.checkpoint, hashes, await loadFailures.of(entry.task_id), entry.format)
      : null;
    return {
      summary: await summarizeEntry(this.options.store, entry, knownDrift ? { drift: true } : {}),
      checkpoint,
      version: checkpoint?.version ?? null,
      latest_version: entry.checkpoint?.version ?? null,
      read_only: entry.read_only,
      problems: entry.problems,
      lease,
      agent_status,
    };
  }

  async getHistory(input: ApiParsedInput<'getHistory'>): Promise<ApiOutputs['getHistory']> {
    const entry = await this.entry(input.taskId);
    const { after, versions } = await this.options.store.historyAfter(entry.task_id, input.after);
    return { after, versions: versions.map((v) => ({ version: v.version, source: v.source, updated_at: v.updated_at, bytes: v.bytes })) };
  }

  async getStepResult(input: ApiParsedInput<'getStepResult'>): Promise<ApiOutputs['getStepResult']> {
    const entry = await this.entry(input.taskId);
    const cp = await this.checkpointAt(entry, input.version);
    const step = cp.plan.find((s) => s.id === input.stepId);
    if (!step) throw new ApiError('not-found', `task ${entry.task_id} has no step "${input.stepId}" at version ${cp.version}`);
    if (step.result_ref) return { value: await this.options.store.readBlob(entry.task_id, step.result_ref), found: true };
    if (step.result !== undefined) return { value: step.result, found: true };
    return { value: null, found: false };
  }

  async getMessages(input: ApiParsedInput<'getMessages'>): Promise<ApiOutputs['getMessages']> {
    const entry = await this.entry(input.taskId);
    if (entry.format === 'article-task-json' || entry.format === 'article-checkpoint-json') {
      // Legacy files keep their history inline; the store converted it when it read them.
      const cp = await this.checkpointAt(entry, input.version);
      const inline = (cp as Record<string, unknown>).messages;
      return { from: 0, messages: Array.isArray(inline) ? (inline as ApiOutputs['getMessages']['messages']) : [] };
    }
    return this.options.store.readHistoryAfter(entry.task_id, input.version, input.after);
  }

  async diffVersions(input: ApiParsedInput<'diffVersions'>): Promise<ApiOutputs['diffVersions']> {
    const [a, b] = await this.versionsOf(input.taskId, [input.a, input.b]);
    const result: ApiOutputs['diffVersions'] = { a: input.a, b: input.b, summary: summarizeChange(a, b), entries: structuredDiff(a, b) };
    // Two checkpoints of a LangGraph thread are told in its own words too, which need both conversations.
    const [lgA, lgB] = [langGraphPartOf(a), langGraphPartOf(b)];
    if (lgA && lgB) {
      const store = this.options.store;
      const [mA, mB] = [await store.readHistory(a.task_id, input.a), await store.readHistory(b.task_id, input.b)];
      result.langgraph = summarizeLangGraphChange(lgA, lgB, mA, mB);
    }
    return result;
  }

  async verifyTask(input: ApiParsedInput<'verifyTask'>): Promise<ApiOutputs['verifyTask']> {
    const entry = await this.entry(input.taskId);
    const cp = await this.checkpointAt(entry, undefined);
    const report = withNumberingProblems(
      await verifyTask(this.options.store.artifactRoot, cp, { location: entry.location, format: entry.format }),
      entry.problems,
    );
    // A new finding is announced once, not at every verify.
    if (this.options.drift.note(report, cp)) await this.options.onDriftChanged(entry.task_id, entry.location);
    // Only a native task folder has versions a power cut can tear; a legacy file is read as it is.
    const recovery = await this.options.store.recoveryReport(entry);
    return recovery && hasRecoveryNews(recovery) ? { ...report, recovery } : report;
  }

  private async checkpointAt(entry: TaskEntry, version: number | undefined): Promise<Checkpoint> {
    const latest = entry.checkpoint?.version ?? null;
    if (version === undefined || version === latest) {
      if (!entry.checkpoint)
        throw new ApiError(
          'failed',
          `task ${entry.task_id} cannot be read`,
          entry.problems.map((p) => `${p.file}: ${p.message}`),
        );
      return entry.checkpoint;
    }
    if (latest !== null && version > latest) {
      throw new ApiError('not-found', `task ${entry.task_id} has versions 1 to ${latest}; there is no version ${version}`);
    }
    const { store } = this.options;
    return this.versions.get(entry.task_id, version, () => store.readVersion(entry.task_id, version));
  }

  /**
   * A version of a task for a diff: kept, or rebuilt from its version files
   * alone, without reading the task's latest state. Anything that is not a
   * version file of a native task (a legacy task, a hot snapshot alone, a
   * version past the latest, no such task) is answered the long way, as
   * opening the task would answer it.
   */
  private async versionOf(taskId: string, version: number): Promise<Checkpoint> {
    const { store } = this.options;
    try {
      return await this.versions.get(taskId, version, () => store.readVersion(taskId, version));
    } catch (err) {
      if (!(err instanceof TaskReadError)) throw err;
      const entry = await this.entry(taskId);
      return this.checkpointAt(entry, version);
    }
  }

  /** Several versions of a task, rebuilt together (see CheckpointSource.readVersions), or one by one the long way. */
  private async versionsOf(taskId: string, versions: number[]): Promise<Checkpoint[]> {
    const { store } = this.options;
    try {
      return await this.versions.getMany(taskId, versions, (missing) => store.readVersions(taskId, missing));
    } catch (err) {
      if (!(err instanceof TaskReadError)) throw err;
      return Promise.all(versions.map((v) => this.versionOf(taskId, v)));
    }
  }
}
