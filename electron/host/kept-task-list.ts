/**
 * The task list the host keeps in memory for one open directory.
 *
 * Built once per open directory (started right after opening, so it overlaps
 * with the renderer loading), then updated per changed task by the same
 * watcher batches that publish events. Listing 10,000 tasks from disk reads
 * and checks 10,000 files (a second or more on a small machine); answering
 * from the kept list costs the serialisation alone.
 */
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { mayNeedRecovery, type TaskListing, type TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { newestFirst } from '../../shared/checkpoint/task-order.js';
import type { Problem } from '../../shared/checkpoint/problem.js';
import { IMPORT_SUFFIX, SYNC_SLICE } from '../store/directory-scan.js';
import type { CheckpointSource, ListedFiles, ListedTask } from '../store/store-types.js';
import { rowReadWhole, summarizeEntry, summarizeListing, withFileProblems } from '../verify/summarize-entry.js';
import { artifactBaseDir } from '../verify/verify-task.js';
import type { SerialQueue } from './serial-queue.js';
import { taskFigures, type TaskFigures } from './directory-overview.js';
import { jsonArrayPieces } from './json-pieces.js';
import type { VerifiedDrift } from './verified-drift.js';

/**
 * One task of the kept list. `recheck` holds the entry of a task whose
 * summary can change with no file of its folder changing: a lease that
 * lapses, artifacts (outside the folder) that drift. Those few are
 * summarized again at every listing; the rest are served as kept.
 */
export interface KeptSummary {
  summary: TaskSummary;
  recheck: ListedTask | null;
  /**
   * The plan's steps, for the listing `waystation ls --json` prints (GET
   * /api/tasks), flat: id, name and status of each step in one array of the
   * strings the parse made. One object per task instead of one per step kept
   * from the first build on: with an object per step, that build took about
   * 15% longer at 10,000 tasks.
   */
  steps: string[];
  /**
   * The task's share of the directory overview, from the checkpoint the
   * listing read; null when that does not hold it (a database's summary, no
   * readable checkpoint), and the overview reads the task whole.
   */
  figures: TaskFigures | null;
}

/** A task's row of the kept list, from the entry the store listed and its summary. */
export function keep(entry: ListedTask, summary: TaskSummary): KeptSummary {
  const volatile = summary.display_status === 'running' || (entry.checkpoint?.artifacts?.length ?? 0) > 0;
  const steps: string[] = [];
  for (const s of entry.checkpoint?.plan ?? []) steps.push(s.id, s.name, s.status);
  // Kept without the lease the listing read: a recheck reads it afresh (it may have been let go or taken since).
  const { lease: _read, ...recheck } = entry;
  const figures = entry.checkpoint ? taskFigures(entry.checkpoint) : null;
  return { summary, recheck: volatile ? recheck : null, steps, figures };
}

/** A kept row with the problems its files were found to have; the entry a recheck summarizes again keeps them too. */
function withFound(k: KeptSummary, found: readonly Problem[]): KeptSummary {
  const summary = withFileProblems(k.summary, found);
  const added = summary.problems.slice(k.summary.problems.length);
  return { ...k, summary, recheck: k.recheck && { ...k.recheck, problems: [...k.recheck.problems, ...added] } };
}

/** The steps a listing shows, back from their flat form. */
export function stepsOf(flat: readonly string[]): TaskListing['plan'] {
  const plan: TaskListing['plan'] = [];
  for (let i = 0; i < flat.length; i += 3)
    plan.push({ id: flat[i], name: flat[i + 1], status: flat[i + 2] as TaskListing['plan'][number]['status'] });
  return plan;
}

/** A kept row as a listing shows it: its summary with its plan's steps. */
function listingOf(k: KeptSummary): TaskListing {
  return { ...k.summary, plan: stepsOf(k.steps) };
}

/**
 * The JSON text of listingOf(k), made without the copy of the summary: the
 * summary's text with the plan's spliced in before its closing brace. Copied
 * by an object spread for each row, about 4 MiB of every `ls --json` answer
 * at 10,000 tasks lived on into V8's old generation (its scavenges' promoted
 * bytes), which grew the host's heap at each answer; spliced, about 0.2 MiB.
 */
function listingJson(k: KeptSummary): string {
  const summary = JSON.stringify(k.summary);
  return `${summary.slice(0, -1)},"plan":${JSON.stringify(stepsOf(k.steps))}}`;
}

/** What the check of the files after a build needs of the open directory. */
export interface FileCheckHooks {
  /** Whether the directory is still open: the check stops when it is not. */
  isOpen(): boolean;
  /** A row gained problems of its files: publish it as changed. */
  onRowChanged(summary: TaskSummary): void;
  /**
   * A row shown running, summarized again, no longer shows running, with no change the watcher reported (its
   * runner died, or let its lease go after a save not reported yet): publish it, whoever asked it again (a listing,
   * an overview, the pass over running rows).
   */
  onRunEnded?(summary: TaskSummary): void;
}

/** What fileProblems needs of a kept row. */
function filesOf(s: TaskSummary): ListedFiles {
  return {
    task_id: s.task_id,
    location: s.location,
    format: s.format,
    problems: s.problems,
    checkpoint: s.version === null ? null : { version: s.version },
  };
}

/** No full verify found anything: each row's drift is what its listing's stat saw. */
const NO_VERIFIED_DRIFT: Pick<VerifiedDrift, 'holds'> = { holds: () => false };

/** The kept list of one open directory; see the module comment. */
export class KeptTaskList {
  /** Task location (folder or root file) -> task id, as last seen. */
  readonly locations = new Map<string, string>();
  /**
   * The task list, by location, once built; null until the first build. A
   * task appearing or going away is patched in (see apply), never rebuilt
   * from the whole directory.
   */
  private summaries: Map<string, KeptSummary> | null = null;
  /** Tasks were added to `summaries` since it was last put in task id order (the store's listing order). */
  private unordered = false;
  /** The build in progress, shared by concurrent listings. */
  private building: Promise<Map<string, KeptSummary>> | null = null;
  /** The rows the build in progress has read so far, slice by slice: what a first screen is chosen from. */
  private readSoFar: TaskSummary[] = [];
  /** First screens waiting for more rows of the build: woken at each slice and when it ends. */
  private waitingForRows: (() => void)[] = [];

  constructor(
    private readonly root: string,
    private readonly store: CheckpointSource,
    private readonly queue: SerialQueue,
    private readonly files: FileCheckHooks = { isOpen: () => true, onRowChanged: () => {} },
    /**
     * What full verifies found drifted (shared with the task reads): a row is summarized with it, so the list says
     * drifted where the task view does, a same-size rewrite included, without reading any artifact itself.
     */
    private readonly verified: Pick<VerifiedDrift, 'holds'> = NO_VERIFIED_DRIFT,
  ) {}

  /** Summarize one task as its row shows it: the listing's stat of its artifacts, or what a full verify found. */
  private summarize(entry: ListedTask): Promise<TaskSummary> {
    return summarizeEntry(this.store, entry, this.verified.holds(entry.task_id, entry.checkpoint) ? { drift: true } : {});
  }

  /**
   * Summarize the row at `location` again from the entry it keeps, with no read of its files: what a full verify
   * found changed how it is shown. Its new summary, or undefined when there is no such row (none kept, or a row
   * with no artifacts, whose verify finds nothing to drift).
   */
  async resummarize(location: string): Promise<TaskSummary | undefined> {
    const summaries = this.summaries;
    const k = summaries?.get(location);
    if (!summaries || !k?.recheck) return k?.summary;
    const again = keep(k.recheck, await this.summarize(k.recheck));
    // A watcher batch may have replaced the row meanwhile: its answer stands.
    if (summaries.get(location) !== k) return summaries.get(location)?.summary;
    this.replace(summaries, location, k, again);
    return again.summary;
  }

  /**
   * The rows shown running, summarized again: a runner that died (killed, its machine gone) changes no file, so
   * nothing the watcher sees says its task stopped; its lease, read again, does (a dead process, a heartbeat gone
   * stale). The rows that no longer show running, as they now show (how the run ended, when the lease was let go
   * after a save the watcher has not reported yet). Nothing before the first build; a row a watcher batch replaced
   * meanwhile keeps its answer.
   */
  async recheckRunning(): Promise<void> {
    const summaries = this.summaries;
    if (!summaries) return;
    // The running rows picked first (a few of thousands, every two seconds): a watcher batch may change the map while
    // a row is summarized.
    const running: [string, KeptSummary, ListedTask][] = [];
    for (const [location, k] of summaries) if (k.summary.display_status === 'running' && k.recheck) running.push([location, k, k.recheck]);
    for (const [location, k, entry] of running) {
      const again = await this.recheck(location, k, entry);
      if (summaries.get(location) === k) this.replace(summaries, location, k, again);
    }
  }

  /** Put `again` in place of the kept row `k` at `location`, and say so when a run it showed ended (onRunEnded). */
  private replace(summaries: Map<string, KeptSummary>, location: string, k: KeptSummary, again: KeptSummary): void {
    summaries.set(location, again);
    const ended = k.summary.display_status === 'running' && again.summary.display_status !== 'running';
    if (ended && this.files.isOpen()) this.files.onRunEnded?.(again.summary);
  }

  /** Whether the built list has a row at `location` (false before the first build). */
  has(location: string): boolean {
    return this.summaries?.has(location) === true;
  }

  /** The kept row at `location`, as last summarized. */
  summaryAt(location: string): TaskSummary | undefined {
    return this.summaries?.get(location)?.summary;
  }

  /**
   * The absolute paths of the artifacts the task kept at `location` recorded; none for a task that recorded none,
   * or no row there. A row with artifacts keeps its entry (KeptSummary.recheck), so this reads nothing.
   */
  artifactPaths(location: string): string[] {
    const cp = this.summaries?.get(location)?.recheck?.checkpoint;
    if (!cp?.artifacts?.length) return [];
    const base = artifactBaseDir(this.root, cp);
    return cp.artifacts.map((a) => path.resolve(base, a.path));
  }

  /** The locations of the kept rows, for a pass over every task (none before the first build). */
  rowLocations(): Iterable<string> {
    return this.summaries?.keys() ?? [];
  }

  /** Every task's summary, in the store's order: what listTasks answers. */
  async list(): Promise<TaskSummary[]> {
    return (await this.rows()).map((k) => k.summary);
  }

  /**
   * At most `limit` rows, the most recently updated first: from the whole
   * list once it is built, else from the rows read so far, as soon as there
   * are `limit` of them or the build ends. A first screen for a directory of
   * thousands of tasks, which the whole list keeps waiting for a second; a
   * row the whole list later leaves out (a legacy task the listing finds was
   * imported) can be in it.
   */
  async firstRows(limit: number): Promise<TaskSummary[]> {
    const building = this.built();
    while (!this.summaries && this.readSoFar.length < limit) {
      await Promise.race([building, new Promise<void>((wake) => this.waitingForRows.push(wake))]);
    }
    // A store's listing that reconnected and started over hands some rows twice: each task is shown once.
    const rows = this.summaries ? await this.list() : [...new Map(this.readSoFar.map((r) => [r.task_id, r])).values()];
    return rows.sort(newestFirst).slice(0, limit);
  }

  /** Every task's summary, with its share of the directory overview where its row holds it. */
  async withFigures(): Promise<{ summary: TaskSummary; figures: TaskFigures | null }[]> {
    return (await this.rows()).map((k) => ({ summary: k.summary, figures: k.figures }));
  }

  /** Every task's summary with its plan's steps: what `waystation ls --json` prints. */
  async listings(): Promise<TaskListing[]> {
    return (await this.rows()).map(listingOf);
  }

  /**
   * The same listing as JSON text, in pieces (json-pieces.ts): the text of
   * `JSON.stringify(await listings())`, without every task's listing and the
   * whole text (9.6 MiB at 10,000 tasks) alive at once. Built that way, one
   * answer made some 100 MiB of short-lived objects, and a few in a row grew
   * the host's memory by more than the whole kept list weighs.
   */
  async listingsJson(): Promise<Iterable<string>> {
    return jsonArrayPieces(await this.rows(), listingJson);
  }

  /** The tasks of the kept list a start-up recovery should look at; undefined when the list could not be built. */
  async recoveryCandidates(): Promise<string[] | undefined> {
    const kept = await this.built().catch(() => null);
    return kept ? [...kept.values()].filter((k) => mayNeedRecovery(k.summary)).map((k) => k.summary.task_id) : undefined;
  }

  /** The kept list, built from the store when there is none. */
  built(): Promise<Map<string, KeptSummary>> {
    if (this.summaries) return Promise.resolve(this.summaries);
    if (!this.building) {
      // Queued with the watcher batches, so a change seen during the build is applied after it, never overwritten by it.
      this.building = this.queue.run(async () => {
        try {
          const map = await this.build();
          this.summaries = map;
          void this.checkFiles(map).catch(() => {});
          return map;
        } finally {
          this.building = null;
          this.readSoFar = [];
          this.wakeFirstScreens();
        }
      });
    }
    return this.building;
  }

  private async build(): Promise<Map<string, KeptSummary>> {
    // Each slice is summarized as it is read, so the parsed checkpoints die young (see KeepListed). The files are
    // checked after (checkFiles): the first rows do not wait for a stat of every version file.
    const kept = await this.store.listTasks(async (entries) => {
      const rows = await summarizeListing(this.store, entries);
      for (const { summary } of rows) this.readSoFar.push(summary);
      this.wakeFirstScreens();
      // A turn of the event loop between slices: a store that hands over many rows at once (a database's page of
      // them) would otherwise hold every request, and its own subscription's set-up, until the page is kept.
      await nextTurn();
      return rows.map(({ entry, summary }) => keep(entry, summary));
    });
    for (const k of kept) this.locations.set(k.summary.location, k.summary.task_id);
    return new Map(kept.map((k) => [k.summary.location, k]));
  }

  private wakeFirstScreens(): void {
    const waiting = this.waitingForRows;
    this.waitingForRows = [];
    for (const wake of waiting) wake();
  }

  /**
   * What a listing does not read for (CheckpointSource.fileProblems, what
   * `ls` asks as it lists), asked once the list is built: a slice of rows at
   * a time, each queued with the watcher's batches so changes keep flowing,
   * and a row that gains problems is published as changed. A row a batch
   * replaced meanwhile was read whole (getTask checks its files) and is left
   * as it is.
   */
  private async checkFiles(map: Map<string, KeptSummary>): Promise<void> {
    const rows = [...map];
    for (let start = 0; start < rows.length && this.files.isOpen(); start += SYNC_SLICE) {
      // A turn of the event loop between slices: checked on this thread, a slice is read with synchronous calls
      // and its promise settles at once, so without it the slices would follow one another as microtasks and
      // hold every request and reply (a listing being sent waited for all 10,000 tasks' checks).
      if (start > 0) await nextTurn();
      const slice = rows.slice(start, start + SYNC_SLICE);
      await this.queue.run(async () => {
        const current = slice.filter(([location, k]) => map.get(location) === k);
        const found = await this.store.fileProblems(current.map(([, k]) => filesOf(k.summary)));
        for (const [i, [location, k]] of current.entries()) {
          if (found[i].length === 0 || map.get(location) !== k) continue;
          // An error there: the row shows what opening the task shows (rowReadWhole), not checkpoint.json's word.
          const whole = await rowReadWhole(this.store, k.summary, found[i]);
          // A watcher batch may have replaced the row while it was read whole: its answer stands.
          if (map.get(location) !== k) continue;
          const row = whole ? keep(whole.entry, whole.summary) : withFound(k, found[i]);
          map.set(location, row);
          if (this.files.isOpen()) this.files.onRowChanged(row.summary);
        }
      });
    }
  }

  /** The kept list in the store's order, the few volatile tasks summarized again. */
  private async rows(): Promise<KeptSummary[]> {
    const kept = await this.built();
    if (this.unordered && this.summaries === kept) {
      // Sorted in place, in one turn: a watcher batch or a listing under way holds this very map.
      const sorted = [...kept].sort(([, a], [, b]) =>
        a.summary.task_id < b.summary.task_id ? -1 : a.summary.task_id > b.summary.task_id ? 1 : 0,
      );
      kept.clear();
      for (const [location, k] of sorted) kept.set(location, k);
      this.unordered = false;
    }
    const out: KeptSummary[] = [];
    // Rows are read from a copy: another listing may sort the map in place while this one waits on a recheck.
    for (const [location, k] of [...kept]) {
      if (!k.recheck) {
        out.push(k);
        continue;
      }
      const again = await this.recheck(location, k, k.recheck);
      // A watcher batch may have replaced or removed this row while it was summarized: its answer stands.
      const now = kept.get(location);
      if (now === k) this.replace(kept, location, k, again);
      if (now !== undefined) out.push(now === k ? again : now);
    }
    return out;
  }

  /**
   * Summarize a volatile row again. A row shown running whose lease is now
   * released was read before its runner's last save: the task is read again,
   * after the release, so it shows how the run ended (done, failed, waiting)
   * rather than "interrupted" until the watcher's batch arrives.
   */
  private async recheck(location: string, k: KeptSummary, entry: ListedTask): Promise<KeptSummary> {
    const again = keep(entry, await this.summarize(entry));
    if (k.summary.display_status !== 'running' || again.summary.display_status === 'running') return again;
    const fresh = await this.store.getTask(k.summary.task_id).catch(() => null);
    return fresh?.location === location ? keep(fresh, await this.summarize(fresh)) : again;
  }

  /** Bring the kept list up to date with one change the watcher reported (`entry` null: no task there now). */
  async apply(location: string, entry: ListedTask | null): Promise<void> {
    const summaries = this.summaries;
    if (!summaries) return;
    if (entry && entry.location === location && summaries.has(location)) {
      summaries.set(location, keep(entry, await this.summarize(entry)));
      return;
    }
    // A task appeared or went away, or its id now resolves elsewhere. That can hide or uncover
    // another task of its id (a root file behind a folder) or the legacy folder it was imported
    // from: those ids alone are looked up again, not the whole directory.
    const gone = summaries.get(location)?.summary.task_id;
    summaries.delete(location);
    const ids = new Set<string>();
    for (const id of [gone, entry?.task_id]) {
      if (!id) continue;
      ids.add(id);
      if (id.endsWith(IMPORT_SUFFIX)) ids.add(id.slice(0, -IMPORT_SUFFIX.length));
    }
    for (const id of ids) await this.keepTask(summaries, id, entry?.task_id === id ? entry : undefined);
  }

  /** Put one task id in the kept list as a listing would show it now (`known`: already read). */
  private async keepTask(summaries: Map<string, KeptSummary>, taskId: string, known?: ListedTask): Promise<void> {
    for (const [location, k] of summaries) if (k.summary.task_id === taskId) summaries.delete(location);
    const found = known ?? (await this.store.getTask(taskId).catch(() => null));
    if (!found) return;
    const imported = `${taskId}${IMPORT_SUFFIX}`;
    // A legacy task is listed only until the task it was imported into exists.
    if (
      found.format !== 'waystation' &&
      [...summaries.values()].some((k) => k.summary.task_id === imported && k.summary.format === 'waystation')
    )
      return;
    summaries.set(found.location, keep(found, await this.summarize(found)));
    this.locations.set(found.location, found.task_id);
    this.unordered = true;
  }
}
