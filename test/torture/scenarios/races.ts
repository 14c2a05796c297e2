/**
 * Races: several runners started on the same task at once (one drives it,
 * the others refuse, clearly); another process writing versions while the
 * host reads the task the way the UI loads it; the directory's folders
 * deleted and the directory itself renamed and deleted under a running
 * watcher.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { HostService } from '../../../electron/host/host-service.js';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../../electron/store/store-test-helpers.js';
import { bundleCli, REPO } from '../lib/cli-bundle.js';
import { doneStepsRunAgain } from '../lib/task-audit.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { agentEnv, HangError, messageOf, pick, Tally, withTimeout, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';

const CHECKS = [
  'two runners drove the same task',
  'no runner drove the task',
  'unclear refusal',
  'done step executed again',
  'torn or failed read during a write',
  'version went backwards',
  'host crashed or hung when the directory changed under it',
  'host view did not follow the directory',
] as const;

/** How long the host may take to notice a folder gone: far beyond the watcher's 50 ms coalescing, for a loaded machine. */
const DIRECTORY_FOLLOW_MS = 15_000;

function run(cli: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** All three races; `runs` is split between them (a tenth rounds of runners, the rest reads and watcher rounds). */
export async function races(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('races (runners, writers, watcher)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-race-'));
  const bundle = await bundleCli();
  try {
    // A round of runners costs a few processes; a read costs a moment: a tenth of the runs are rounds of runners.
    await concurrentRunners(bundle.cli, base, Math.max(1, Math.round(opts.runs * 0.1)), random, tally, opts);
    await writerWhileReading(base, Math.max(3, Math.round(opts.runs * 0.7)), tally);
    await directoryUnderWatcher(base, Math.max(3, Math.round(opts.runs * 0.2)), random, tally);
  } finally {
    await bundle.dispose();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

/** A failed task, then 2 to 5 `waystation resume` processes at once. */
async function concurrentRunners(
  cli: string,
  base: string,
  rounds: number,
  random: () => number,
  tally: Tally,
  opts: ScenarioOptions,
): Promise<void> {
  const root = path.join(base, 'runners');
  await fs.mkdir(root);
  const env = agentEnv(20);
  for (let r = 0; r < rounds; r++) {
    const taskId = `race-${r}`;
    // Without SKIP_FAILURE the demo fails at its third step: a task left for a resume.
    await run(cli, ['run', root, 'checkpoint-demo', '--task', taskId], { ...env, SKIP_FAILURE: '' });
    const n = 2 + pick(random, 4);
    const results = await Promise.all(Array.from({ length: n }, () => run(cli, ['resume', root, taskId], { ...env, SKIP_FAILURE: '1' })));
    tally.runs++;
    tally.faults += n - 1;
    const history = await openStore(root).history(taskId);
    const drives = history.filter((h) => /^resumed/.test(h.source.note ?? '')).length;
    if (drives > 1) tally.violation('two runners drove the same task', `round ${r}: ${drives} resumes recorded by ${n} runners`);
    if (drives === 0)
      tally.violation(
        'no runner drove the task',
        `round ${r}: ${results.map((x) => `${x.code}: ${x.out.trim().split('\n').at(-1)}`).join(' | ')}`,
      );
    for (const x of results) {
      if (x.code === RunExit.busy) {
        tally.bump('runners refused (busy)');
        if (!/being driven by another runner \(pid \d+/.test(x.out) || !/nothing was written/.test(x.out))
          tally.violation('unclear refusal', `round ${r}: ${x.out.trim()}`);
      } else if (x.code === RunExit.done) {
        tally.bump(/already done/.test(x.out) ? 'runners that found it already done' : 'runners that drove it');
      } else {
        tally.violation('unclear refusal', `round ${r}: a runner exited ${x.code}: ${x.out.trim()}`);
      }
    }
    for (const v of await doneStepsRunAgain(root, taskId)) tally.violation('done step executed again', `round ${r}: ${v}`);
    if ((await openStore(root).getTask(taskId))?.checkpoint?.status !== 'done')
      tally.violation('no runner drove the task', `round ${r}: the task is not done`);
    if ((r + 1) % 20 === 0) opts.log(`races: ${r + 1}/${rounds} rounds of concurrent runners`);
  }
}

/** Another process saves versions as fast as it can while the host answers getTask, getHistory and listTasks. */
async function writerWhileReading(base: string, reads: number, tally: Tally): Promise<void> {
  const root = path.join(base, 'writer');
  await fs.mkdir(root);
  const bundled = path.join(REPO, '.waystation-tmp', `race-writer-${process.pid}.mjs`);
  await build({
    entryPoints: [path.join(REPO, 'test/torture/lib/steady-writer.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: bundled,
    packages: 'external',
    logLevel: 'error',
  });
  const writer = spawn(process.execPath, [bundled, root], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const service = new HostService({ host: 'web', runner: null });
  try {
    await new Promise<void>((resolve, reject) => {
      writer.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      writer.on('exit', (code) => reject(new Error(`the writer exited (${code}) before it was ready`)));
    });
    await service.open(root);
    let last = 0;
    let first = -1;
    let held: { version: number; updated_at: string; bytes: number }[] = [];
    for (let i = 0; i < reads; i++) {
      tally.runs++;
      tally.faults++;
      // Spread over the writer's saves, so reads land before, during and after many of them.
      await new Promise((resolve) => setTimeout(resolve, i % 4));
      try {
        // The first getHistory replays every version, so it is asked one time in ten; the UI loads through the other two.
        const which = i % 10 === 9 ? 1 : i % 2 === 0 ? 0 : 2;
        if (which === 0) {
          const detail = await service.getTask({ taskId: 'steady' });
          const errors = detail.problems.filter((p) => p.severity === 'error');
          if (!detail.checkpoint || errors.length > 0)
            tally.violation('torn or failed read during a write', `read ${i}: ${errors.map((p) => `${p.file}: ${p.message}`).join('; ')}`);
          const v = detail.checkpoint?.version ?? 0;
          if (v < last) tally.violation('version went backwards', `read ${i}: version ${v} after ${last}`);
          last = Math.max(last, v);
          if (first < 0) first = v;
        } else if (which === 1) {
          // As the app asks: after the last entry it holds, keeping its own up to the version answered.
          const lastHeld = held.at(-1);
          const answer = await service.getHistory(
            lastHeld
              ? { taskId: 'steady', after: { version: lastHeld.version, updated_at: lastHeld.updated_at, bytes: lastHeld.bytes } }
              : { taskId: 'steady' },
          );
          held = answer.after > 0 ? [...held.filter((h) => h.version <= answer.after), ...answer.versions] : answer.versions;
          const numbers = held.map((h) => h.version);
          if (numbers.some((n, k) => n !== k + 1))
            tally.violation('torn or failed read during a write', `read ${i}: history ${numbers.slice(0, 5).join(',')}...`);
        } else {
          const list = await service.listTasks();
          const t = list.find((s) => s.task_id === 'steady');
          const errors = t?.problems.filter((p) => p.severity === 'error') ?? [];
          if (!t || errors.length > 0)
            tally.violation(
              'torn or failed read during a write',
              `read ${i}: listTasks: ${t ? errors.map((p) => `${p.file}: ${p.message}`).join('; ') : 'the task is missing'}`,
            );
        }
      } catch (err) {
        tally.violation('torn or failed read during a write', `read ${i}: ${messageOf(err)}`);
      }
    }
    tally.figures['versions the other process wrote during the reads'] = last - first;
  } finally {
    writer.kill('SIGKILL');
    await service.close();
    await fs.rm(bundled, { force: true });
  }
}

/** Task folders deleted, then the directory renamed away and deleted, while the host watches it and a store writes into it. */
async function directoryUnderWatcher(base: string, rounds: number, random: () => number, tally: Tally): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    const root = path.join(base, `watched-${r}`);
    await fs.mkdir(root);
    const store = openStore(root);
    for (const id of ['a', 'b', 'c']) await store.create(makeCheckpoint(id));
    const service = new HostService({ host: 'web', runner: null, watch: { quietMs: 10, maxDelayMs: 50 } });
    const what = ['task folder deleted', 'directory renamed', 'directory deleted'][r % 3];
    tally.runs++;
    tally.faults++;
    try {
      await withTimeout(service.open(root), 10_000, 'opening the directory');
      const removed = new Set<string>();
      const unsubscribe = service.subscribe((e) => {
        if (e.type === 'task-removed') removed.add(e.taskId);
      });
      const writes = (async () => {
        for (let k = 0; k < 20; k++) {
          const cp = (await store.getTask('a'))?.checkpoint;
          if (!cp) return;
          const { version: _v, ...rest } = cp;
          await store.save('a', { expectedVersion: cp.version, checkpoint: { ...rest, phase: `p${k}` } }).catch(() => undefined);
        }
      })();
      await new Promise((res) => setTimeout(res, pick(random, 30)));
      const gone = what === 'task folder deleted' ? ['b'] : ['a', 'b', 'c'];
      const removeThem = async () => {
        if (what === 'task folder deleted') await removeTree(path.join(root, 'b'));
        else if (what === 'directory renamed') {
          await fs.rename(root, `${root}-moved`).catch(() => undefined);
          // A save racing the rename may have recreated part of the old path.
          await removeTree(root);
        } else await removeTree(root);
      };
      await removeThem();
      await writes;
      // The writer may have been mid-save under the old path: what is gone stays gone from here on.
      await removeThem();
      // The host's view must follow within a generous bound: the gone tasks leave the list and each is announced removed.
      const followed = await pollUntil(DIRECTORY_FOLLOW_MS, async () => {
        const listed = await withTimeout(listedIds(service), 10_000, 'listTasks');
        const stillListed = gone.filter((id) => listed.includes(id));
        const unannounced = gone.filter((id) => !removed.has(id));
        return stillListed.length === 0 && unannounced.length === 0
          ? null
          : `still listed: [${stillListed.join(', ')}]; no task-removed event for: [${unannounced.join(', ')}]`;
      });
      if (followed !== null)
        tally.violation('host view did not follow the directory', `round ${r} (${what}): after ${DIRECTORY_FOLLOW_MS} ms, ${followed}`);
      if (what === 'task folder deleted') {
        const kept = await listedIds(service);
        if (!kept.includes('a') || !kept.includes('c'))
          tally.violation(
            'host view did not follow the directory',
            `round ${r}: the tasks left in place are not all listed: [${kept.join(', ')}]`,
          );
      }
      unsubscribe();
      await withTimeout(service.close(), 10_000, 'closing the host');
      tally.bump(`rounds: ${what}`);
    } catch (err) {
      tally.violation(
        'host crashed or hung when the directory changed under it',
        `round ${r} (${what}): ${err instanceof HangError ? '' : 'threw '}${messageOf(err)}`,
      );
      await service.close().catch(() => undefined);
    }
    await removeTree(root);
    await removeTree(`${root}-moved`);
  }
}

/** The task ids the host lists; none when it answers with a typed error (the directory itself is gone). */
async function listedIds(service: HostService): Promise<string[]> {
  try {
    return (await service.listTasks()).map((t) => t.task_id);
  } catch (err) {
    if (err instanceof Error && 'code' in err) return [];
    throw err;
  }
}

/** Ask `check` until it answers null (met) or `ms` have passed; returns its last answer. */
async function pollUntil(ms: number, check: () => Promise<string | null>): Promise<string | null> {
  const deadline = Date.now() + ms;
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    const unmet = await check();
    if (unmet === null || Date.now() >= deadline) return unmet;
    await new Promise((res) => setTimeout(res, wait));
  }
}

/** Delete a tree that a writer may still be adding to: rm gives ENOTEMPTY when a file lands mid-way, so try again. */
async function removeTree(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.rm(dir, { recursive: true, force: true });
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
    }
  }
}
