/**
 * The PostgreSQL section of `npm run bench:compare`: Waystation's PostgreSQL
 * store against LangGraph's PostgresSaver on the same server, in the same
 * run, with the workload of the directory comparison (the agent workload of
 * agent-workload.ts, saved as Waystation's runtime and LangGraph's Pregel
 * loop save a step).
 *
 * Measured:
 *  - per task length: save p50/p99 early and late, storage
 *    (`pg_total_relation_size` of each side's tables), latest and middle reads;
 *  - 8 runners saving at once, each in a process of its own with its own
 *    connections and task (8 machines), against one runner alone, on each side;
 *  - the inspector's task list at 10,000 tasks: the host opening the
 *    database and listing it, against the same on a checkpoint directory;
 *  - live updates: a save on one connection to the change reaching a host
 *    subscriber, against the same on a directory.
 *
 * The server is a throwaway cluster with PostgreSQL's durable defaults
 * (fsync, synchronous_commit, full_page_writes on), or one given by URL.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { HostService } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { openPostgresStore, type PostgresStore } from '../../../electron/store/postgres/postgres-store.js';
import type { CheckpointStore } from '../../../electron/store/store-types.js';
import type { Checkpoint } from '../../../shared/checkpoint/schema.js';
import type { HostEvent } from '../../../shared/api/contract.js';
import { clusterUrl, startCluster, stopClusterSync, withClient, type ClusterInfo } from '../../../test/support/postgres-cluster.js';
import { workloadMessage, workloadResult, workloadStepId } from '../agent-workload.js';
import { formatBytes, formatCount, formatMs, formatRatio } from '../format.js';
import { percentile } from '../percentile.js';
import { ensureScaleFixture } from '../scale-fixture.js';
import { LIST_VERSIONS, stampPgTasks } from './pg-list-fixture.js';
import { formatTable } from '../table.js';
import { startBenchChild } from '../host-client.js';
import { CHROMIUM, coldHostRows, firstRows } from '../inspector-scale.js';
import { msSince, nowNs, timeRepeated } from '../timing.js';
import { fullSchedule, LangGraphThread, sampledSchedule, serializedRunBytes, timeRead } from './langgraph-side.js';
import { middleStep, timedRanges, type ReadTiming, type SaveTimes } from './side-result.js';
import { initialState, nextState } from './waystation-side.js';

export interface PostgresComparisonOptions {
  steps: number[];
  seed: number;
  readRuns: number;
  /** Longer tasks run LangGraph's steps sampled (its storage projected), as the SQLite section does. */
  fullLangGraphUpTo: number;
  /** Saves each runner makes in the concurrency test. */
  concurrentSteps: number;
  runners: number;
  /** Tasks of the inspector listing. */
  listTasks: number;
  /** Saves timed for the live-update latency. */
  liveSamples: number;
  /** Hosts started cold after the first, for the cold-host first rows (default LATER_COLD_HOSTS). */
  laterColdHosts?: number;
  /** Steps of a throwaway task each side saves first, not reported (0: none), as the directory comparison does. */
  warmUpSteps: number;
  /** An existing server's URL (a database the benchmark may create databases beside); default: a throwaway cluster. */
  serverUrl?: string;
  /** Folder of the directory fixtures (the listing's baseline). */
  fixtureCacheDir?: string;
  log: (line: string) => void;
}

export interface PgSide {
  side: string;
  saves: SaveTimes;
  storageBytes: number;
  storageProjected: boolean;
  reads: { latest: ReadTiming; middle: ReadTiming };
}

export interface PgRun {
  steps: number;
  waystation: PgSide;
  langgraph: PgSide;
}

export interface ConcurrencyFigure {
  side: string;
  runners: number;
  saves: number;
  wallMs: number;
  savesPerSecond: number;
  /** Processor time of the runners' processes a save (user and system). */
  runnerCpuMsPerSave: number;
  /** Processor time of the server's processes a save, when the server is the run's own cluster; null otherwise. */
  serverCpuMsPerSave: number | null;
}

export interface PostgresComparisonResult {
  server: string;
  /** Steps of the throwaway task each side saved before the timed runs (0: none). */
  warmUpSteps: number;
  runs: PgRun[];
  concurrency: { waystation: ConcurrencyFigure[]; langgraph: ConcurrencyFigure[] };
  listing: { tasks: number; postgres: ListingFigure; directory: ListingFigure };
  /** Chromium's first task row at that many tasks; null when Chromium or the built renderer is missing. */
  firstRows: { postgres: FirstRowsFigure; directory: FirstRowsFigure } | null;
  live: { postgres: number[]; directory: number[] };
}

/** The inspector-at-scale benchmark's two first-rows figures (inspector-scale.ts), on one location. */
export interface FirstRowsFigure {
  /** A host whose list is built: navigation start to the first task row, first page load and the median of three more. */
  warmHost: { coldMs: number; warmMs: number };
  /** A host started for the page: its start to the first task row (first, and LATER_COLD_HOSTS more hosts unless told). */
  coldHost: { hostStartToRowMs: number; laterHostStartToRowMs: number[] };
  /** What the hosts ran: the compiled dist/, as `waystation serve` does when it is current, or the sources through tsx. */
  hostFrom: 'dist' | 'sources';
}

export interface ListingFigure {
  /** A fresh store's listTasks. */
  storeListMs: number;
  /** A host opening the location and answering listTasks (what the inspector's first screen waits for). */
  hostOpenAndListMs: number;
  rows: number;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Tables of each side, whose `pg_total_relation_size` (data, indexes, TOAST) is its storage. */
const WAYSTATION_TABLES = [
  'waystation_meta',
  'waystation_tasks',
  'waystation_versions',
  'waystation_blobs',
  'waystation_leases',
  'waystation_events',
];
const LANGGRAPH_TABLES = ['checkpoint_migrations', 'checkpoints', 'checkpoint_blobs', 'checkpoint_writes'];

/** The server the section runs against, and a way to make databases on it. */
interface Server {
  shown: string;
  database(name: string): Promise<string>;
  /** Processor time the server's processes have used so far (ms), when it is the run's own cluster; null otherwise. */
  cpuMs(): number | null;
  close(): void;
}

/** Clock ticks a second, the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * Processor time of a cluster's processes so far, in ms: the postmaster's
 * children (backends, writers) as they are, and what the postmaster reaped
 * of those that exited (its children's times), from /proc.
 */
function clusterCpuMs(cluster: ClusterInfo): number | null {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(path.join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fields: string[];
    try {
      // The fields after the command name, which may itself hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    } catch {
      continue;
    }
    const pid = Number(entry);
    const ppid = Number(fields[1]);
    // utime, stime (fields 14, 15 of stat); for the postmaster, cutime and cstime (16, 17) too.
    if (ppid === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    else if (pid === postmaster) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1000) / CLOCK_TICKS;
}

async function openServer(opts: PostgresComparisonOptions): Promise<Server> {
  let cluster: ClusterInfo | null = null;
  let adminUrl: string;
  if (opts.serverUrl) adminUrl = opts.serverUrl;
  else {
    opts.log('PostgreSQL: starting a throwaway cluster with the durable defaults');
    const started = await startCluster({ durable: true });
    cluster = started;
    // Stopped on every way out, an interrupted run's included: a throwaway cluster must not outlive it.
    process.once('exit', () => stopClusterSync(started));
    process.once('SIGINT', () => process.exit(130));
    adminUrl = clusterUrl(cluster, 'postgres');
  }
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const made: string[] = [];
  const admin = <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => withClient(adminUrl, fn);
  const settings = await admin((c) =>
    c.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'server_version') ORDER BY name`,
    ),
  );
  return {
    shown: `PostgreSQL ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(', ')}${cluster ? ' (a throwaway cluster on this machine)' : ''}`,
    database: async (name) => {
      const db = `bench_${name}_${suffix}`;
      await admin((c) => c.query(`CREATE DATABASE ${db}`));
      made.push(db);
      const u = new URL(adminUrl);
      u.pathname = `/${db}`;
      return u.toString();
    },
    cpuMs: () => (cluster ? clusterCpuMs(cluster) : null),
    close: () => {
      if (cluster) stopClusterSync(cluster);
      cluster = null;
    },
  };
}

async function relationBytes(url: string, tables: readonly string[]): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ bytes: string }>(
      `SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0)::bigint AS bytes FROM unnest($1::text[]) AS t`,
      [tables],
    );
    return Number(rows[0].bytes);
  } finally {
    await c.end();
  }
}

const TASK_ID = 'bench-compare';

/** Replay the workload through the PostgreSQL store, as waystation-side.ts does through a directory. */
async function runWaystationPg(url: string, steps: number, opts: PostgresComparisonOptions): Promise<PgSide> {
  const store = openPostgresStore(url);
  try {
    await store.prepareForWrites();
    const { early, late } = timedRanges(steps);
    const middle = middleStep(steps);
    const created = await store.create(initialState(steps), { appendHistory: [workloadMessage(opts.seed, 0)] });
    const lease = await store.acquireLease(TASK_ID, { owner: 'bench', heartbeatMs: 0 });
    let current = created.checkpoint;
    const allMs: number[] = [];
    for (let step = 1; step <= steps; step++) {
      const next = nextState(current, step, steps, opts.seed);
      const start = nowNs();
      const saved = await store.save(TASK_ID, {
        expectedVersion: current.version,
        checkpoint: next,
        results: { [workloadStepId(step)]: workloadResult(opts.seed, step) },
        appendHistory: [workloadMessage(opts.seed, step)],
        lease,
      });
      allMs.push(msSince(start));
      current = saved.checkpoint;
    }
    await lease.release();
    const storageBytes = await relationBytes(url, WAYSTATION_TABLES);
    const reader = openPostgresStore(url);
    try {
      const read = async (what: string, fn: () => Promise<{ checkpoint: Checkpoint; history: { content: string }[] }>) => {
        const { result, ms } = await timeRepeated(opts.readRuns, fn);
        return { what, ms, messages: result.history.length, lastMessage: result.history[result.history.length - 1]?.content ?? '' };
      };
      const latest = await read('getTask + readHistory: latest checkpoint and the whole message list', async () => {
        const entry = await reader.getTask(TASK_ID);
        if (!entry?.checkpoint) throw new Error(`getTask(${TASK_ID}) found no readable checkpoint in ${reader.root}`);
        return { checkpoint: entry.checkpoint, history: await reader.readHistory(TASK_ID) };
      });
      const middleRead = await read(`readVersion(${middle + 1}) + readHistory(${middle + 1}): the middle step's state`, async () => ({
        checkpoint: await reader.readVersion(TASK_ID, middle + 1),
        history: await reader.readHistory(TASK_ID, middle + 1),
      }));
      return {
        side: 'Waystation (PostgreSQL store)',
        saves: { early, late, earlyMs: allMs.slice(early.from - 1, early.to), lateMs: allMs.slice(late.from - 1, late.to), allMs },
        storageBytes,
        storageProjected: false,
        reads: { latest, middle: middleRead },
      };
    } finally {
      await reader.close();
    }
  } finally {
    await store.close();
  }
}

/** Replay the workload through PostgresSaver, as langgraph-side.ts does through SqliteSaver. */
async function runLangGraphPg(
  url: string,
  steps: number,
  sampled: boolean,
  bytesPerSerialized: number | null,
  opts: PostgresComparisonOptions,
): Promise<PgSide & { serializedBytes: number }> {
  const saver = PostgresSaver.fromConnString(url);
  try {
    await saver.setup();
    const { early, late } = timedRanges(steps);
    const middle = middleStep(steps);
    const thread = new LangGraphThread(saver, opts.seed, !sampled);
    await thread.putInput();
    const earlyMs: number[] = [];
    const lateMs: number[] = [];
    const allMs: number[] | null = sampled ? null : [];
    let middleId = '';
    for (const step of sampled ? sampledSchedule(steps) : fullSchedule(steps)) {
      const ms = await thread.step(step);
      if (step === middle) middleId = thread.latestId;
      if (step >= early.from && step <= early.to) earlyMs.push(ms);
      if (step >= late.from) lateMs.push(ms);
      allMs?.push(ms);
    }
    const measured = await relationBytes(url, LANGGRAPH_TABLES);
    const serializedBytes = sampled ? await serializedRunBytes(steps, opts.seed) : thread.serializedBytes;
    if (sampled && bytesPerSerialized === null) throw new Error(`a sampled PostgresSaver run of ${steps} steps needs a full run first`);
    const latest = await timeRead(opts.readRuns, 'getTuple (latest): checkpoint with the whole message list', () =>
      saver.getTuple({ configurable: { thread_id: thread.threadId } }),
    );
    const middleRead = await timeRead(opts.readRuns, `getTuple (checkpoint of step ${middle})`, () =>
      saver.getTuple({ configurable: { thread_id: thread.threadId, checkpoint_ns: '', checkpoint_id: middleId } }),
    );
    return {
      side: 'LangGraph PostgresSaver',
      saves: { early, late, earlyMs, lateMs, allMs },
      storageBytes: sampled ? Math.round(serializedBytes * bytesPerSerialized!) : measured,
      storageProjected: sampled,
      reads: { latest, middle: middleRead },
      serializedBytes,
    };
  } finally {
    await saver.end();
  }
}

/**
 * `runners` runners at once, each in a process of its own (pg-runner.ts: its own connections and task, as
 * on a machine of its own), `steps` saves each; timed from the first runner's first save to the last one's
 * last, once every runner has created its task and waits.
 */
async function concurrent(
  side: 'waystation' | 'langgraph',
  server: Server,
  url: string,
  runners: number,
  steps: number,
  seed: number,
): Promise<ConcurrencyFigure> {
  if (side === 'waystation') {
    // The schema made once, before the runners race to create their tasks.
    const store = openPostgresStore(url);
    await store.prepareForWrites();
    await store.close();
  } else {
    const saver = PostgresSaver.fromConnString(url);
    await saver.setup();
    await saver.end();
  }
  // Each runner its own payloads, as different tasks have: with one seed the eight saved the same results and
  // messages, the same content-addressed blobs, and each insert of a blob waited for another runner's commit.
  const children = Array.from({ length: runners }, (_, r) =>
    startBenchChild('compare/pg-runner.ts', [side, url, `concurrent-${runners}-${r}`, String(steps), String(seed + r)]),
  );
  try {
    await Promise.all(children.map((c) => c.next('ready')));
    const serverBefore = server.cpuMs();
    for (const c of children) c.send('go');
    const done = await Promise.all(children.map((c) => c.next<{ startAt: number; endAt: number; cpuMs: number }>('done', 600_000)));
    const serverAfter = server.cpuMs();
    const wallMs = Math.max(...done.map((d) => d.endAt)) - Math.min(...done.map((d) => d.startAt));
    const saves = runners * steps;
    return {
      side: side === 'waystation' ? 'Waystation' : 'LangGraph PostgresSaver',
      runners,
      saves,
      wallMs,
      savesPerSecond: (saves * 1000) / wallMs,
      runnerCpuMsPerSave: done.reduce((sum, d) => sum + d.cpuMs, 0) / saves,
      serverCpuMsPerSave: serverBefore !== null && serverAfter !== null ? (serverAfter - serverBefore) / saves : null,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

export async function listingFigure(location: string, open: () => CheckpointStore): Promise<ListingFigure> {
  const store = open();
  let storeListMs: number;
  try {
    const start = nowNs();
    await store.listTasks();
    storeListMs = msSince(start);
  } finally {
    await store.close();
  }
  const host = new HostService({ host: 'web', runner: null });
  try {
    const start = nowNs();
    await host.open(location);
    const rows = (await host.listTasks()).length;
    return { storeListMs, hostOpenAndListMs: msSince(start), rows };
  } finally {
    await host.close();
  }
}

/** Chromium's first task row from `location` (a database URL or a folder), measured as the inspector-at-scale benchmark does. */
async function firstRowsFigure(location: string, log: (line: string) => void, laterColdHosts?: number): Promise<FirstRowsFigure> {
  const host = startBenchChild('scale-host.mjs', [location]);
  let warmHost: FirstRowsFigure['warmHost'];
  let hostFrom: FirstRowsFigure['hostFrom'];
  try {
    const ready = await host.next<{ url: string; from: FirstRowsFigure['hostFrom'] }>('ready');
    hostFrom = ready.from;
    // The page asks for the list the host built on open, as a window opened on a running host does.
    warmHost = await firstRows(ready.url, log);
  } finally {
    await host.stop();
  }
  const cold = await coldHostRows(location, log, laterColdHosts);
  return { warmHost, coldHost: { hostStartToRowMs: cold.hostStartToRowMs, laterHostStartToRowMs: cold.laterHostStartToRowMs }, hostFrom };
}

/** Milliseconds from the start of each save on one store to its change reaching a host subscribed to another. */
async function liveLatency(location: string, writer: CheckpointStore, samples: number): Promise<number[]> {
  const host = new HostService({ host: 'web', runner: null });
  const waiting = new Map<number, () => void>();
  try {
    await writer.prepareForWrites();
    let cp = (await writer.create({ ...initialState(samples + 1), task_id: 'live-probe' })).checkpoint;
    await host.open(location);
    host.subscribe((e: HostEvent) => {
      if (e.type === 'task-changed' && e.taskId === 'live-probe' && e.version !== null) waiting.get(e.version)?.();
    });
    const out: number[] = [];
    for (let i = 0; i < samples; i++) {
      const version = cp.version + 1;
      let timer: NodeJS.Timeout | undefined;
      const seen = new Promise<void>((resolve, reject) => {
        waiting.set(version, resolve);
        // A change that never arrives is a broken feed, not a slow one: say so rather than wait forever.
        timer = setTimeout(() => reject(new Error(`version ${version} of the live probe never reached the host of ${location}`)), 15_000);
      }).finally(() => clearTimeout(timer));
      const start = nowNs();
      cp = (await writer.save('live-probe', { expectedVersion: cp.version, checkpoint: nextState(cp, i + 1, samples + 1, 1) })).checkpoint;
      await seen;
      out.push(msSince(start));
      waiting.delete(version);
      // Spaced out, as a runner's steps are: each save is a change of its own, not one of a burst.
      await new Promise((r) => setTimeout(r, 30));
    }
    return out;
  } finally {
    await host.close();
    await writer.close();
  }
}

/** Run the whole PostgreSQL section. */
export async function runPostgresComparison(opts: PostgresComparisonOptions, workDir: string): Promise<PostgresComparisonResult> {
  const server = await openServer(opts);
  try {
    const runs: PgRun[] = [];
    let bytesPerSerialized: number | null = null;
    if (opts.warmUpSteps > 0) {
      // Both sides' save paths compiled before anything is timed: the first tenth of a run is what "early" reports.
      opts.log(`PostgreSQL: warming up, a throwaway ${formatCount(opts.warmUpSteps)}-step task on each side`);
      await runWaystationPg(await server.database('ws_warm_up'), opts.warmUpSteps, opts);
      await runLangGraphPg(await server.database('lg_warm_up'), opts.warmUpSteps, false, null, opts);
    }
    for (const steps of [...opts.steps].sort((a, b) => a - b)) {
      const sampled = steps > opts.fullLangGraphUpTo;
      opts.log(`PostgreSQL, ${formatCount(steps)} steps: Waystation`);
      const waystation = await runWaystationPg(await server.database(`ws_${steps}`), steps, opts);
      opts.log(`  LangGraph PostgresSaver${sampled ? ' (sampled)' : ''}`);
      const langgraph = await runLangGraphPg(await server.database(`lg_${steps}`), steps, sampled, bytesPerSerialized, opts);
      if (!sampled) bytesPerSerialized = langgraph.storageBytes / langgraph.serializedBytes;
      runs.push({ steps, waystation, langgraph });
    }

    opts.log(`PostgreSQL: ${opts.runners} runners at once, ${opts.concurrentSteps} saves each, and one alone`);
    const wsUrl = await server.database('concurrent_ws');
    const lgUrl = await server.database('concurrent_lg');
    const concurrency = {
      waystation: [
        await concurrent('waystation', server, wsUrl, 1, opts.concurrentSteps, opts.seed),
        await concurrent('waystation', server, wsUrl, opts.runners, opts.concurrentSteps, opts.seed),
      ],
      langgraph: [
        await concurrent('langgraph', server, lgUrl, 1, opts.concurrentSteps, opts.seed),
        await concurrent('langgraph', server, lgUrl, opts.runners, opts.concurrentSteps, opts.seed),
      ],
    };

    opts.log(`PostgreSQL: the inspector's list at ${formatCount(opts.listTasks)} tasks (and a directory of as many)`);
    const listUrl = await server.database('listing');
    await stampPgTasks(listUrl, opts.listTasks);
    const fixture = await ensureScaleFixture({
      tasks: opts.listTasks,
      versionsPerTask: LIST_VERSIONS,
      cacheDir: opts.fixtureCacheDir,
      log: opts.log,
    });
    const listing = {
      tasks: opts.listTasks,
      postgres: await listingFigure(listUrl, () => openPostgresStore(listUrl)),
      directory: await listingFigure(fixture.root, () => openStore(fixture.root)),
    };

    opts.log(`PostgreSQL: the first rows in Chromium at ${formatCount(opts.listTasks)} tasks (and on the directory)`);
    const firstRowsAt = existsSync(CHROMIUM) && existsSync(path.join(REPO, 'dist-renderer', 'index.html'));
    if (!firstRowsAt) opts.log('  skipped: no Chromium or no built renderer (npm run build:renderer)');
    // A browser that fails under load (a page closed, a timeout) costs this table, not the figures measured before it.
    const firstRowsResult = firstRowsAt
      ? await (async () => ({
          postgres: await firstRowsFigure(listUrl, opts.log, opts.laterColdHosts),
          directory: await firstRowsFigure(fixture.root, opts.log, opts.laterColdHosts),
        }))().catch((err: unknown) => {
          opts.log(`  first rows: not measured (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
          return null;
        })
      : null;

    opts.log(`PostgreSQL: live-update latency over ${opts.liveSamples} saves (and on a directory)`);
    const liveUrl = await server.database('live');
    const liveStore: PostgresStore = openPostgresStore(liveUrl);
    const liveDir = `${workDir}/live-directory`;
    const live = {
      postgres: await liveLatency(liveUrl, liveStore, opts.liveSamples),
      directory: await liveLatency(liveDir, openStore(liveDir), opts.liveSamples),
    };
    return { server: server.shown, warmUpSteps: opts.warmUpSteps, runs, concurrency, listing, firstRows: firstRowsResult, live };
  } finally {
    server.close();
  }
}

const median = (xs: readonly number[]) => percentile(xs, 50);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** The section as Markdown, ratios against the baseline of the same run. */
export function formatPostgresComparison(r: PostgresComparisonResult): string {
  const warm =
    r.warmUpSteps > 0
      ? ` Each side saved a throwaway ${formatCount(r.warmUpSteps)}-step task first, not reported: "early" is a run's first tenth, not the process's first saves.`
      : " No warm-up: the first run's early saves are the process's first.";
  const out: string[] = ['## On PostgreSQL: Waystation against LangGraph PostgresSaver', '', `Server: ${r.server}.${warm}`, ''];
  out.push(
    formatTable(
      columns(
        ['steps', 'side'],
        'save p50 early',
        'save p99 early',
        'save p50 late',
        'save p99 late',
        'storage',
        'latest read',
        'middle read',
      ),
      r.runs.flatMap((run) =>
        [run.waystation, run.langgraph].map((s) => [
          formatCount(run.steps),
          s.side,
          formatMs(median(s.saves.earlyMs)),
          formatMs(percentile(s.saves.earlyMs, 99)),
          formatMs(median(s.saves.lateMs)),
          formatMs(percentile(s.saves.lateMs, 99)),
          `${formatBytes(s.storageBytes)}${s.storageProjected ? ' (projected)' : ''}`,
          formatMs(median(s.reads.latest.ms)),
          formatMs(median(s.reads.middle.ms)),
        ]),
      ),
    ),
  );
  out.push('', 'PostgresSaver ÷ Waystation (above 1: Waystation is faster or smaller):', '');
  out.push(
    formatTable(
      columns(
        'steps',
        'save p50 early',
        'save p50 late',
        'every save, summed',
        'storage',
        'latest read',
        'middle read',
        'Waystation late ÷ early',
      ),
      r.runs.map(({ steps, waystation: w, langgraph: l }) => [
        formatCount(steps),
        formatRatio(median(l.saves.earlyMs) / median(w.saves.earlyMs)),
        formatRatio(median(l.saves.lateMs) / median(w.saves.lateMs)),
        // The time a run of `steps` steps spends saving; a sampled side did not run every step.
        l.saves.allMs && w.saves.allMs ? formatRatio(sum(l.saves.allMs) / sum(w.saves.allMs)) : '(sampled)',
        formatRatio(l.storageBytes / w.storageBytes),
        formatRatio(median(l.reads.latest.ms) / median(w.reads.latest.ms)),
        formatRatio(median(l.reads.middle.ms) / median(w.reads.middle.ms)),
        formatRatio(median(w.saves.lateMs) / median(w.saves.earlyMs)),
      ]),
    ),
  );
  out.push('', '### Runners saving at once, each in a process of its own with its own connections', '');
  const conc = [...r.concurrency.waystation, ...r.concurrency.langgraph];
  out.push(
    formatTable(
      columns('side', 'runners', 'saves', 'wall', 'saves/s', '÷ one runner', 'runner CPU a save', 'server CPU a save'),
      conc.map((c) => {
        const alone = conc.find((o) => o.side === c.side && o.runners === 1)!;
        return [
          c.side,
          String(c.runners),
          formatCount(c.saves),
          formatMs(c.wallMs),
          c.savesPerSecond.toFixed(0),
          formatRatio(c.savesPerSecond / alone.savesPerSecond),
          formatMs(c.runnerCpuMsPerSave),
          c.serverCpuMsPerSave === null ? '(not measured)' : formatMs(c.serverCpuMsPerSave),
        ];
      }),
    ),
  );
  // Runners at once share the machine's cores with the server: a lone runner that keeps k cores busy (its
  // processor time and the server's, over its time a save) leaves room for about cores ÷ k of it, as long as a
  // save costs as much processor time among many as alone (commits grouped together make it somewhat less).
  for (const c of conc.filter((o) => o.runners === 1 && o.serverCpuMsPerSave !== null)) {
    const busy = (c.runnerCpuMsPerSave + c.serverCpuMsPerSave!) / (c.wallMs / c.saves);
    out.push(
      '',
      `${c.side} alone keeps ${busy.toFixed(2)} cores busy (runner and server processor time over the wall time of a save): ` +
        `on ${os.cpus().length} cores, runners at once can reach about ${formatRatio(os.cpus().length / busy)} its saves a second ` +
        '(more where saves made together cost less processor time each, as grouped commits do).',
    );
  }
  const many = (side: ConcurrencyFigure[]) => side[side.length - 1];
  out.push(
    '',
    `At ${many(r.concurrency.waystation).runners} runners Waystation saves ${formatRatio(many(r.concurrency.waystation).savesPerSecond / many(r.concurrency.langgraph).savesPerSecond)} as many steps a second as PostgresSaver.`,
  );
  const { listing } = r;
  out.push('', `### The inspector's task list at ${formatCount(listing.tasks)} tasks`, '');
  out.push(
    againstDirectory(
      ['PostgreSQL', 'directory'],
      [
        { header: 'store listTasks', postgres: listing.postgres.storeListMs, directory: listing.directory.storeListMs },
        { header: 'host open + listTasks', postgres: listing.postgres.hostOpenAndListMs, directory: listing.directory.hostOpenAndListMs },
        { header: 'rows', postgres: listing.postgres.rows, directory: listing.directory.rows, format: formatCount, ratio: false },
      ],
    ),
  );
  if (r.firstRows) {
    const { postgres: p, directory: d } = r.firstRows;
    out.push('', '### The first task rows in Chromium', '');
    out.push(
      againstDirectory(
        ['PostgreSQL', 'directory'],
        [
          { header: 'list built: first page load', postgres: p.warmHost.coldMs, directory: d.warmHost.coldMs },
          { header: 'list built: later loads (median)', postgres: p.warmHost.warmMs, directory: d.warmHost.warmMs },
          { header: 'host started for the page', postgres: p.coldHost.hostStartToRowMs, directory: d.coldHost.hostStartToRowMs },
          {
            header: 'later cold hosts (median)',
            postgres: median(p.coldHost.laterHostStartToRowMs),
            directory: median(d.coldHost.laterHostStartToRowMs),
          },
        ],
      ),
    );
    const fromSources = r.firstRows.postgres.hostFrom === 'sources' || r.firstRows.directory.hostFrom === 'sources';
    out.push(
      '',
      "From navigation start to the first row on a host whose list is built; from the host's start to the first row on a host started for the page (inspector-scale.ts). Target: under 1 s.",
      fromSources
        ? 'The hosts ran the TypeScript sources through tsx (dist/ was missing or stale: `npm run build:lib`): slower to start than `waystation serve`.'
        : 'The hosts ran the compiled dist/, as `waystation serve` does.',
    );
  }
  out.push('', '### Live updates: a save to the change reaching a host subscriber', '');
  const live = (xs: number[]) => ({ p50: median(xs), p95: percentile(xs, 95), max: Math.max(...xs) });
  const [lp, ld] = [live(r.live.postgres), live(r.live.directory)];
  out.push(
    againstDirectory(
      ['PostgreSQL (LISTEN/NOTIFY)', 'directory (file watcher)'],
      [
        { header: 'samples', postgres: r.live.postgres.length, directory: r.live.directory.length, format: String, ratio: false },
        { header: 'p50', postgres: lp.p50, directory: ld.p50 },
        { header: 'p95', postgres: lp.p95, directory: ld.p95 },
        { header: 'max', postgres: lp.max, directory: ld.max, ratio: false },
      ],
    ),
  );
  out.push('', `Target: p95 under 250 ms on PostgreSQL; measured ${formatMs(percentile(r.live.postgres, 95))}.`);
  return out.join('\n');
}

/** A table's columns: the first (or first few) name the row, the others hold figures, right-aligned. */
function columns(names: string | string[], ...figures: string[]): { header: string; align?: 'right' }[] {
  return [...[names].flat().map((header) => ({ header })), ...figures.map((header) => ({ header, align: 'right' as const }))];
}

/** One figure of each store, and how it is shown (milliseconds by default); `ratio: false` leaves the ratio row empty. */
interface Compared {
  header: string;
  postgres: number;
  directory: number;
  format?: (n: number) => string;
  ratio?: boolean;
}

/** A table of figures on PostgreSQL and on a directory, with a row of their ratios: each table of the section past the saves. */
function againstDirectory(names: [string, string], figures: readonly Compared[]): string {
  const shown = (c: Compared, n: number) => (c.format ?? formatMs)(n);
  return formatTable(columns('store', ...figures.map((c) => c.header)), [
    [names[0], ...figures.map((c) => shown(c, c.postgres))],
    [names[1], ...figures.map((c) => shown(c, c.directory))],
    ['PostgreSQL ÷ directory', ...figures.map((c) => (c.ratio === false ? '' : formatRatio(c.postgres / c.directory)))],
  ]);
}
