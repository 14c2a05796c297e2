/**
 * The inspector at scale: a directory of many tasks opened by the real web
 * host in its own process, measured the way a user meets it, each figure
 * beside a baseline measured in the same run.
 *
 * - listing: the app's `listTasks` call over HTTP, first and warm, and the
 *   scripts' `GET /api/tasks` (the same rows with each task's plan), against the raw cost
 *   of reading and parsing every `checkpoint.json` (the floor any listing
 *   pays) and a naive reader that parses every version of every task; the
 *   first is timed from the moment the host starts, not from when it serves;
 * - first rows: Chromium from navigation start to the first task row, on a
 *   host whose list is already built and on a host started cold for it
 *   (timed from the host's start as well);
 * - diff: `structuredDiff` + `summarizeChange` of two ~5 MB versions, and the
 *   `diffVersions` call over HTTP, against a generic deep diff (microdiff) and
 *   JSON.stringify of both;
 * - events: a write of a new version by another writer until its HostEvent
 *   reaches an SSE subscriber, against the raw fs.watch notification of the
 *   same write;
 * - memory: the host process, against a process that only holds every parsed
 *   checkpoint.
 */
import { spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import diff from 'microdiff';
import { openStore } from '../../electron/store/directory-store.js';
import { mapLimit } from '../../electron/store/directory-scan.js';
import type { HostEvent } from '../../shared/api/contract.js';
import type { TaskSummary } from '../../shared/checkpoint/task-summary.js';
import { structuredDiff, summarizeChange } from '../../shared/diff/semantic-summary.js';
import { HostClient, startBenchChild, type MemoryReport } from './host-client.js';
import { largeCheckpoint, largeCheckpointAfter } from './large-checkpoint.js';
import { percentile, summarize, type SampleSummary } from './percentile.js';
import { ensureScaleFixture, scaleInitialCheckpoint, type ScaleFixture } from './scale-fixture.js';
import { timeAsync, timeRepeated } from './timing.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHROMIUM = '/usr/bin/chromium';

export interface InspectorScaleOptions {
  tasks: number;
  versionsPerTask: number;
  /** Size of each of the two diffed versions, bytes. */
  diffBytes: number;
  /** Versions written while measuring event latency, and the pause between them. */
  writes: number;
  writeSpacingMs: number;
  /** Repetitions of warm measurements (median reported). */
  runs: number;
  /** Measure first rows in Chromium (skipped when it is not installed). */
  browser: boolean;
  /** Hosts started cold after the first one, for the median of the cold-host first rows (default LATER_COLD_HOSTS). */
  laterColdHosts?: number;
  cacheDir?: string;
  log?: (line: string) => void;
}

export interface InspectorScaleResult {
  fixture: ScaleFixture;
  /** What the host processes ran: the compiled dist/ (as `waystation serve` does when it is current) or the sources through tsx. */
  hostFrom: 'dist' | 'sources';
  listing: {
    tasks: number;
    /** Baseline: fs.readFile + JSON.parse of every checkpoint.json. */
    rawHotReadMs: number;
    /** Baseline: a naive reader that reads and parses every version file. */
    naiveAllVersionsMs: number;
    /** Host process spawned until it listens (the directory opens meanwhile, and requests wait for it). */
    spawnToListenMs: number;
    /** The first listTasks call (the app's list), sent as soon as the host serves: the cold build included. */
    apiFirstMs: number;
    /** The host starting (its startWebServer call) until that first answer is in: the figure the target is about. */
    hostStartToListMs: number;
    /** The host process spawned until that first answer is in (Node and the TypeScript loader starting included). */
    spawnToListMs: number;
    apiWarm: SampleSummary;
    responseBytes: number;
    /** GET /api/tasks, warm: what `waystation ls --json` prints, each task's plan included. */
    restWarm: SampleSummary;
    restBytes: number;
    problemsListed: number;
    /** `waystation ls DIR`, process start to exit, median of `runs` (what the CLI pays: Node, the listing, the printing). */
    cliLs: SampleSummary;
    /** `waystation ls DIR --json`, the same. */
    cliLsJson: SampleSummary;
  };
  /** Chromium on the host measured above, whose task list was already built by the API calls. */
  firstRows: { coldMs: number; warmMs: number } | null;
  /** Chromium on a host started for it alone: nothing asked for the list before the page did. */
  coldHostRows: {
    navigationToRowMs: number;
    hostStartToRowMs: number;
    spawnToRowMs: number;
    /** More hosts started cold (LATER_COLD_HOSTS unless told), one after the other, in the same browser: host start to first row, each. */
    laterHostStartToRowMs: number[];
  } | null;
  diff: {
    bytesA: number;
    bytesB: number;
    entries: number;
    stepTransitions: number;
    inProcess: SampleSummary;
    /** The first diffVersions call: both versions rebuilt from their files. */
    apiFirstMs: number;
    /** Later calls of the same diff (the host keeps recently rebuilt versions). */
    api: SampleSummary;
    stringifyBoth: SampleSummary;
    microdiff: SampleSummary;
    microdiffChanges: number;
  };
  events: {
    writes: number;
    /** Write start until the first HostEvent naming the new version. */
    host: SampleSummary;
    hostP95: number;
    /** Write start until fs.watch on the task folder reported anything. */
    rawWatch: SampleSummary;
    rawWatchP95: number;
    write: SampleSummary;
    missed: number;
  };
  memory: { host: MemoryReport; baseline: MemoryReport & { held: number } };
}

const median = (ms: number[]) => summarize(ms).p50;

async function rawHotRead(root: string, names: string[]): Promise<number> {
  const { ms } = await timeAsync(() =>
    mapLimit(names, 32, async (n) => JSON.parse(await fs.readFile(path.join(root, n, 'checkpoint.json'), 'utf8')) as unknown),
  );
  return ms;
}

async function naiveAllVersions(root: string, names: string[]): Promise<number> {
  const { ms } = await timeAsync(() =>
    mapLimit(names, 32, async (n) => {
      const dir = path.join(root, n, 'versions');
      const out: unknown[] = [];
      // Each version's envelope is its first line; the blobs it carries follow on lines of their own.
      for (const f of (await fs.readdir(dir)).sort())
        out.push(JSON.parse((await fs.readFile(path.join(dir, f), 'utf8')).split('\n', 1)[0]));
      return out;
    }),
  );
  return ms;
}

/** `waystation ls` (and `--json`) as a user runs it, process start to exit, `runs` times each, alternating. */
async function cliLs(root: string, runs: number): Promise<{ cliLs: SampleSummary; cliLsJson: SampleSummary }> {
  const once = (args: string[]) =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, [path.join(REPO, 'bin', 'waystation.mjs'), 'ls', root, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('error', reject);
      // Exit status 1 says some task has an error-level problem: still a listing.
      child.once('exit', (code) =>
        code === 0 || code === 1 ? resolve(performance.now() - t0) : reject(new Error(`waystation ls exited ${code}: ${stderr}`)),
      );
    });
  const plain: number[] = [];
  const json: number[] = [];
  for (let i = 0; i < runs; i++) {
    plain.push(await once([]));
    json.push(await once(['--json']));
  }
  return { cliLs: summarize(plain), cliLsJson: summarize(json) };
}

type Browser = Awaited<ReturnType<(typeof import('playwright-core'))['chromium']['launch']>>;

async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
}

/** A fresh browser tab, opened before the page it will load is served, as a window is opened beside its host. */
interface ReadyTab {
  /** Load `url` and wait for the first task row; when it appeared, in ms since navigation start and on the wall clock. */
  loadUntilFirstRow(url: string): Promise<{ sinceNavigationMs: number; at: number }>;
  close(): Promise<void>;
}

/**
 * Open a tab in a fresh context, with a script that records the moment the
 * first task row is in the DOM (performance.now(), ms since navigation
 * start). Creating a context and a page takes Playwright and Chromium
 * 100-300 ms, which is no part of what a user waits for; `coldHostRows` does it
 * before it starts the host.
 */
async function openTab(browser: Browser): Promise<ReadyTab> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  // Page-side code as text: this file is typed for Node, without the DOM.
  await page.addInitScript({
    content: `(() => {
      const check = () => {
        if (window.__firstRow === undefined && document.querySelector('[role="listbox"] [role="option"]')) window.__firstRow = performance.now();
      };
      new MutationObserver(check).observe(document, { childList: true, subtree: true });
    })();`,
  });
  return {
    async loadUntilFirstRow(url) {
      await page.goto(url);
      await page.getByRole('listbox', { name: 'Task list' }).getByRole('option').first().waitFor({ timeout: 120_000 });
      const [sinceNavigationMs, origin] = (await page.evaluate('[window.__firstRow ?? performance.now(), performance.timeOrigin]')) as [
        number,
        number,
      ];
      return { sinceNavigationMs, at: origin + sinceNavigationMs };
    },
    close: () => context.close(),
  };
}

/** Load `url` in a fresh tab and wait for the first task row (see `openTab`). */
async function loadUntilFirstRow(browser: Browser, url: string): Promise<{ sinceNavigationMs: number; at: number }> {
  const tab = await openTab(browser);
  try {
    return await tab.loadUntilFirstRow(url);
  } finally {
    await tab.close();
  }
}

/** A page load against nothing, so that Chromium's own start-up (its first renderer process) is not counted as the inspector's. */
async function blankPageLoad(browser: Browser): Promise<void> {
  const blank = await browser.newContext();
  await (await blank.newPage()).goto('about:blank');
  await blank.close();
}

/**
 * Chromium on a running host: navigation start to the first task row, first page load and later ones. The
 * PostgreSQL section (postgres-comparison.ts) measures the same on a database, as coldHostRows.
 */
export async function firstRows(url: string, log: (l: string) => void): Promise<{ coldMs: number; warmMs: number }> {
  const browser = await launchChromium();
  try {
    await blankPageLoad(browser);
    const coldMs = (await loadUntilFirstRow(browser, url)).sinceNavigationMs;
    log(`  first rows (first page load): ${coldMs.toFixed(0)} ms`);
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) warm.push((await loadUntilFirstRow(browser, url)).sinceNavigationMs);
    return { coldMs, warmMs: median(warm) };
  } finally {
    await browser.close();
  }
}

/**
 * Hosts started cold after the first: a cold host's first rows vary by 100 to 300 ms from one start to the next on
 * a busy two-core machine, so the figure a target is read from is the median of several.
 */
export const LATER_COLD_HOSTS = 5;

/**
 * Chromium on a host started for it: the browser and an empty tab are up
 * first, the host is spawned, and the page is loaded in that tab the moment
 * the host serves, as the desktop app opens its window while its host starts
 * and `waystation serve --open-url` hands the URL to a browser already running;
 * so the first
 * listing the host does is the one the page asks for. The first such load is
 * the browser's first of this page (its scripts compiled afresh); `laterHosts`
 * more hosts are then started cold, one after the other, as when the app is
 * opened again.
 */
export async function coldHostRows(
  root: string,
  log: (l: string) => void,
  laterHosts = LATER_COLD_HOSTS,
): Promise<NonNullable<InspectorScaleResult['coldHostRows']>> {
  const browser = await launchChromium();
  const once = async () => {
    const tab = await openTab(browser);
    const spawnedAt = performance.timeOrigin + performance.now();
    const host = startBenchChild('scale-host.mjs', [root]);
    try {
      const ready = await host.next<{ url: string; hostStartAt: number }>('ready');
      const row = await tab.loadUntilFirstRow(ready.url);
      return { navigationToRowMs: row.sinceNavigationMs, hostStartToRowMs: row.at - ready.hostStartAt, spawnToRowMs: row.at - spawnedAt };
    } finally {
      await Promise.all([host.stop(), tab.close()]);
    }
  };
  try {
    await blankPageLoad(browser);
    const first = await once();
    const laterHostStartToRowMs: number[] = [];
    for (let i = 0; i < laterHosts; i++) laterHostStartToRowMs.push((await once()).hostStartToRowMs);
    log(
      `  first rows (cold host): ${first.hostStartToRowMs.toFixed(0)} ms from host start (${first.navigationToRowMs.toFixed(0)} ms from navigation); ` +
        `later cold hosts ${laterHostStartToRowMs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    );
    return { ...first, laterHostStartToRowMs };
  } finally {
    await browser.close();
  }
}

/** Two versions of a ~`bytes` task written by the store, diffed in process, over HTTP and by the baselines. */
async function diffBench(bytes: number, runs: number): Promise<InspectorScaleResult['diff']> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-diff-bench-'));
  try {
    const store = openStore(tmp);
    const v1 = largeCheckpoint('large', bytes);
    const { version: _a, ...first } = v1;
    await store.create(first);
    const { version: _b, ...second } = largeCheckpointAfter(v1, 3);
    await store.save('large', { expectedVersion: 1, checkpoint: second });
    // Read back as the host does: two independent objects, nothing shared between them.
    const a = await store.readVersion('large', 1);
    const b = await store.readVersion('large', 2);
    const run = (fn: () => unknown) => {
      fn();
      const ms: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        fn();
        ms.push(performance.now() - t0);
      }
      return summarize(ms);
    };
    let entries = 0;
    let transitions = 0;
    const inProcess = run(() => {
      entries = structuredDiff(a, b).length;
      transitions = summarizeChange(a, b).step_transitions.length;
    });
    let microChanges = 0;
    const micro = run(() => (microChanges = diff(a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>).length));
    const stringify = run(() => JSON.stringify(a).length + JSON.stringify(b).length);
    // The host in a process of its own, as everywhere else in this benchmark: a host in this process would share
    // it with the benchmark's own TypeScript loader and its watcher thread would compile its modules through it.
    const server = startBenchChild('scale-host.mjs', [tmp]);
    try {
      const client = new HostClient((await server.next<{ url: string }>('ready')).url);
      const first = await timeAsync(() => client.rpc('diffVersions', { taskId: 'large', a: 1, b: 2 }));
      const api = await timeRepeated(runs, () => client.rpc<{ entries: unknown[] }>('diffVersions', { taskId: 'large', a: 1, b: 2 }));
      if (api.result.entries.length !== entries)
        throw new Error(`diffVersions over HTTP gave ${api.result.entries.length} entries, in process ${entries}`);
      return {
        bytesA: JSON.stringify(a).length,
        bytesB: JSON.stringify(b).length,
        entries,
        stepTransitions: transitions,
        inProcess,
        apiFirstMs: first.ms,
        api: summarize(api.ms),
        stringifyBoth: stringify,
        microdiff: micro,
        microdiffChanges: microChanges,
      };
    } finally {
      await server.stop();
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** The task the event measurement writes to: created for it and removed after, so the cached fixture stays as generated. */
export const EVENT_PROBE_TASK = 'zz-event-probe';

/**
 * Write `writes` versions of a probe task, as another writer would, and time
 * each until the host's SSE stream names the new version, and until a raw
 * fs.watch on the task folder fires.
 */
async function eventBench(root: string, client: HostClient, writes: number, spacingMs: number): Promise<InspectorScaleResult['events']> {
  const taskId = EVENT_PROBE_TASK;
  const store = openStore(root);
  await fs.rm(path.join(root, taskId), { recursive: true, force: true });
  const { version: _v, ...probe } = scaleInitialCheckpoint(taskId, 1, 3);
  await store.create(probe);
  // The new folder's own events settle before the first measured write.
  await new Promise((r) => setTimeout(r, 1000));
  try {
    return await measureEvents(root, store, client, taskId, writes, spacingMs);
  } finally {
    await fs.rm(path.join(root, taskId), { recursive: true, force: true });
  }
}

async function measureEvents(
  root: string,
  store: ReturnType<typeof openStore>,
  client: HostClient,
  taskId: string,
  writes: number,
  spacingMs: number,
): Promise<InspectorScaleResult['events']> {
  const arrivals = new Map<number, number>();
  const sub = await client.subscribe((e: HostEvent, at: number) => {
    const v =
      e.type === 'task-changed' && e.taskId === taskId
        ? e.version
        : e.type === 'task-event' && e.taskId === taskId
          ? e.event.version
          : undefined;
    if (typeof v === 'number' && !arrivals.has(v)) arrivals.set(v, at);
  });
  let rawAt: number | null = null;
  const raw = watch(path.join(root, taskId), () => {
    rawAt ??= performance.now();
  });
  const host: number[] = [];
  const rawMs: number[] = [];
  const writeMs: number[] = [];
  let missed = 0;
  try {
    for (let i = 0; i < writes; i++) {
      const entry = await store.getTask(taskId);
      if (!entry?.checkpoint) throw new Error(`event bench: ${taskId} cannot be read`);
      const { version, ...rest } = entry.checkpoint;
      rawAt = null;
      const t0 = performance.now();
      await store.save(taskId, {
        expectedVersion: version,
        checkpoint: { ...rest, resume_hint: `bench write ${i}`, source: { kind: 'human-edit', actor: 'bench', note: `write ${i}` } },
      });
      writeMs.push(performance.now() - t0);
      const deadline = t0 + 5000;
      while (!arrivals.has(version + 1) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      const at = arrivals.get(version + 1);
      if (at === undefined) missed++;
      else host.push(at - t0);
      if (rawAt !== null) rawMs.push(rawAt - t0);
      await new Promise((r) => setTimeout(r, spacingMs));
    }
  } finally {
    raw.close();
    sub.close();
  }
  if (host.length === 0 || rawMs.length === 0)
    throw new Error(`event bench: of ${writes} writes, ${host.length} reached the subscriber and ${rawMs.length} fired fs.watch`);
  return {
    writes,
    host: summarize(host),
    hostP95: percentile(host, 95),
    rawWatch: summarize(rawMs),
    rawWatchP95: percentile(rawMs, 95),
    write: summarize(writeMs),
    missed,
  };
}

/** Run the inspector-at-scale benchmark. */
export async function runInspectorScale(opts: InspectorScaleOptions): Promise<InspectorScaleResult> {
  const log = opts.log ?? (() => {});
  log(`inspector at scale: ${opts.tasks} tasks x ${opts.versionsPerTask} versions`);
  const fixture = await ensureScaleFixture({ tasks: opts.tasks, versionsPerTask: opts.versionsPerTask, cacheDir: opts.cacheDir, log });
  log(`  fixture ${fixture.root} (${fixture.cached ? 'cached' : `written in ${(fixture.writeMs / 1000).toFixed(1)} s`})`);
  const names = (await fs.readdir(fixture.root)).filter((n) => !n.startsWith('.')).sort();

  const rawHotReadMs = await rawHotRead(fixture.root, names);
  const naiveAllVersionsMs = await naiveAllVersions(fixture.root, names);
  log(`  baselines: raw checkpoint.json read ${rawHotReadMs.toFixed(0)} ms, naive all-versions read ${naiveAllVersionsMs.toFixed(0)} ms`);
  const ls = await cliLs(fixture.root, Math.min(opts.runs, 3));
  log(`  waystation ls: ${ls.cliLs.p50.toFixed(0)} ms, --json ${ls.cliLsJson.p50.toFixed(0)} ms (median, process start to exit)`);

  const spawnedAt = performance.now();
  const host = startBenchChild('scale-host.mjs', [fixture.root]);
  let hostFrom: InspectorScaleResult['hostFrom'];
  let result: Omit<InspectorScaleResult, 'coldHostRows'>;
  try {
    const ready = await host.next<{ url: string; listenMs: number; hostStartAt: number; from: InspectorScaleResult['hostFrom'] }>('ready');
    const spawnToListenMs = performance.now() - spawnedAt;
    hostFrom = ready.from;
    log(
      ready.from === 'dist'
        ? '  host: the compiled dist/, as `waystation serve` runs'
        : '  host: the TypeScript sources through tsx (dist/ is missing or older than the sources: npm run build:lib)',
    );
    const client = new HostClient(ready.url);
    const first = await timeAsync(() => client.rpc<TaskSummary[]>('listTasks'));
    const listedAt = performance.timeOrigin + performance.now();
    const hostStartToListMs = listedAt - ready.hostStartAt;
    const spawnToListMs = listedAt - (performance.timeOrigin + spawnedAt);
    const opened = await host.next<{ openMs: number }>('opened');
    log(
      `  host listening after ${spawnToListenMs.toFixed(0)} ms (${ready.listenMs.toFixed(0)} ms of its own; the directory open after ${opened.openMs.toFixed(0)} ms); first listTasks ${first.ms.toFixed(0)} ms, ${hostStartToListMs.toFixed(0)} ms from host start`,
    );
    if (first.result.length !== opts.tasks) throw new Error(`listTasks listed ${first.result.length} tasks, expected ${opts.tasks}`);
    const warm = await timeRepeated(opts.runs, () => client.rpc<TaskSummary[]>('listTasks'));
    const rest = await timeRepeated(opts.runs, () => client.get<TaskSummary[]>('/api/tasks'));
    const listing: InspectorScaleResult['listing'] = {
      tasks: first.result.length,
      rawHotReadMs,
      naiveAllVersionsMs,
      spawnToListenMs,
      apiFirstMs: first.ms,
      hostStartToListMs,
      spawnToListMs,
      apiWarm: summarize(warm.ms),
      responseBytes: JSON.stringify(first.result).length,
      restWarm: summarize(rest.ms),
      restBytes: JSON.stringify(rest.result).length,
      problemsListed: first.result.filter((t) => t.problems.length > 0).length,
      ...ls,
    };

    let rows: InspectorScaleResult['firstRows'] = null;
    if (opts.browser && existsSync(CHROMIUM) && existsSync(path.join(REPO, 'dist-renderer', 'index.html')))
      rows = await firstRows(ready.url, log);
    else if (opts.browser) log('  first rows: skipped (no Chromium or no built renderer: npm run build:renderer)');

    const events = await eventBench(fixture.root, client, opts.writes, opts.writeSpacingMs);
    log(`  events: p50 ${events.host.p50.toFixed(0)} ms, p95 ${events.hostP95.toFixed(0)} ms over ${events.writes} writes`);

    host.send('gc');
    const hostMem = await host.next<MemoryReport>('mem');
    const holder = startBenchChild('parsed-checkpoints-holder.mjs', [fixture.root]);
    const baseline = await holder.next<MemoryReport & { held: number }>('mem');
    await holder.stop();

    const diffResult = await diffBench(opts.diffBytes, opts.runs);
    log(
      `  diff: ${diffResult.inProcess.p50.toFixed(1)} ms in process, ${diffResult.apiFirstMs.toFixed(1)} ms over HTTP (first), ${diffResult.api.p50.toFixed(1)} ms (p50 after)`,
    );
    result = { fixture, hostFrom, listing, firstRows: rows, diff: diffResult, events, memory: { host: hostMem, baseline } };
  } finally {
    await host.stop();
  }
  // After the host above has stopped, so the two never compete for the machine.
  const coldRows = result.firstRows ? await coldHostRows(fixture.root, log, opts.laterColdHosts) : null;
  return { ...result, coldHostRows: coldRows };
}
