/**
 * Fault injection: SIGKILL the worker process at random points, resume, and
 * check that no done step ran again, every side effect happened exactly once,
 * the artifacts are intact, and the final result equals an uncrashed run's.
 *
 * WAYSTATION_CRASH_RUNS raises the number of runs (default 50; the torture run's
 * crashes scenario, `npm run torture`, kills hundreds of runs more);
 * WAYSTATION_CRASH_SEED replays a sequence of kill points.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Runner, type RunOutcome } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { verifyTask } from '../../../electron/verify/verify-task.js';
import type { WorkerJob } from '../../../electron/runtime/worker-protocol.js';
import { startFakePublishService, type FakePublishService } from '../../fakes/fake-publish-service.js';
import { bundleWorker, type WorkerBundle } from '../../fakes/worker-bundle.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';

const RUNS = Number(process.env.WAYSTATION_CRASH_RUNS ?? 50);
const PARALLEL = Math.max(2, Math.min(6, os.cpus().length * 2));

interface FinalState {
  results: Record<string, { text: string; published?: { key?: string } }>;
  artifacts: Record<string, string>;
}

describe('SIGKILL at random points, then resume', () => {
  let root: string;
  let service: FakePublishService;
  let runner: Runner;
  let bundle: WorkerBundle;
  let agentModule: string;
  const seed = Number(process.env.WAYSTATION_CRASH_SEED ?? Date.now() % 1_000_000);

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-crash-'));
    service = await startFakePublishService();
    bundle = await bundleWorker(['test/fakes/crash-agent.ts']);
    agentModule = bundle.modules['test/fakes/crash-agent.ts'];
    runner = new Runner({
      root,
      workerLaunch: bundle.workerLaunch,
      env: { ...process.env, OPENAI_API_KEY: '', WAYSTATION_OFFLINE_LATENCY_MS: '15', SKIP_FAILURE: '' },
    });
  });
  afterAll(async () => {
    runner?.killAll('SIGKILL');
    await service?.close();
    await bundle?.dispose();
    await fs.rm(root, { recursive: true, force: true });
  });

  const startJob = (taskId: string): WorkerJob => ({
    kind: 'start',
    root,
    taskId,
    agentRef: { name: 'crash-agent', module: agentModule, export: 'default' },
    options: { ledger: path.join(root, `${taskId}.ledger`), out: path.join(root, 'out', taskId), publishUrl: service.url },
  });

  /** Run a job, killing the worker after `killAfterMs` from its first output line (or from spawn when negative). */
  async function runAndMaybeKill(job: WorkerJob, killAfterMs: number | null): Promise<RunOutcome> {
    const { child, done } = runner.spawnWorker(job);
    if (killAfterMs !== null) {
      const kill = () => setTimeout(() => child.kill('SIGKILL'), Math.abs(killAfterMs));
      if (killAfterMs < 0) kill();
      else child.stdout?.once('data', kill);
    }
    return done;
  }

  async function finalState(taskId: string): Promise<FinalState> {
    const store = openStore(root);
    const cp = (await store.getTask(taskId))!.checkpoint!;
    const results: FinalState['results'] = {};
    for (const s of cp.plan) results[s.id] = (await store.readBlob(taskId, s.result_ref!)) as FinalState['results'][string];
    const artifacts: Record<string, string> = {};
    for (const a of cp.artifacts) artifacts[path.basename(a.path)] = a.sha256;
    return { results, artifacts };
  }

  /** The parts of a final state that must not depend on the task id or on crashes. */
  function comparable(state: FinalState, taskId: string) {
    return {
      artifacts: state.artifacts,
      results: Object.fromEntries(
        Object.entries(state.results).map(([id, r]) => [
          id,
          { text: r.text, publishedKey: r.published?.key?.replace(`${taskId}:`, '') ?? null },
        ]),
      ),
    };
  }

  it(`keeps every guarantee across ${RUNS} killed runs`, { timeout: 600_000 }, async () => {
    // The uncrashed reference run also measures how long a drive takes on this machine, from its first output line.
    const { child, done } = runner.spawnWorker(startJob('reference'));
    const firstLine = new Promise<number>((resolve) => child.stdout?.once('data', () => resolve(Date.now())));
    const reference = await done;
    const workMs = Math.max(100, Date.now() - (await firstLine));
    expect(reference.status).toBe('done');
    const expected = comparable(await finalState('reference'), 'reference');

    // Seeded, so a failing sequence of kill points can be replayed with WAYSTATION_CRASH_SEED.
    const random = seededRandom(seed);
    let kills = 0;
    let crashed = 0;
    let resumes = 0;
    const failures: string[] = [];

    const one = async (i: number) => {
      const taskId = `crash-${i}`;
      const r = random();
      // One run in eight is killed during start-up (before or while version 1 is created).
      let outcome = await runAndMaybeKill(startJob(taskId), r < 0.125 ? -Math.floor(random() * 400) : Math.floor(random() * workMs));
      kills++;
      if (outcome.crashed) crashed++;
      for (let attempt = 0; outcome.status !== 'done'; attempt++) {
        if (attempt > 12) {
          failures.push(`${taskId}: still ${outcome.status} after ${attempt} resumes: ${outcome.message}`);
          return;
        }
        const entry = await openStore(root).getTask(taskId);
        const job: WorkerJob = entry?.checkpoint ? { kind: 'resume', root, taskId, trigger: 'human' } : startJob(taskId);
        // Later resumes are killed too, less often, so recovery from a crash during a resume is exercised.
        const killAgain = random() < 0.2 ? Math.floor(random() * workMs) : null;
        if (killAgain !== null) kills++;
        resumes++;
        outcome = await runAndMaybeKill(job, killAgain);
        if (outcome.error && outcome.error !== 'not-found') {
          failures.push(`${taskId}: ${outcome.error}: ${outcome.message}`);
          return;
        }
      }
      const ledger = await fs.readFile(path.join(root, `${taskId}.ledger`), 'utf8').catch(() => '');
      if (ledger.includes('VIOLATION'))
        failures.push(
          `${taskId}: ${ledger
            .split('\n')
            .filter((l) => l.startsWith('VIOLATION'))
            .join('; ')}`,
        );
      for (const step of ['publish-draft', 'publish-final']) {
        const key = `${taskId}:${step}`;
        if (service.applied.get(key) !== 1) failures.push(`${taskId}: ${key} applied ${service.applied.get(key) ?? 0} times`);
        if (service.duplicates.has(key)) failures.push(`${taskId}: ${key} was POSTed again after it was applied`);
      }
      const cp = (await openStore(root).getTask(taskId))!.checkpoint!;
      const report = await verifyTask(root, cp);
      if (!report.ok)
        failures.push(
          `${taskId}: verification failed: ${JSON.stringify({ artifacts: report.artifacts.filter((a) => a.status !== 'ok'), uncertain: report.uncertain_effects, invariants: report.invariant_problems })}`,
        );
      const actual = comparable(await finalState(taskId), taskId);
      try {
        expect(actual).toEqual(expected);
      } catch {
        failures.push(`${taskId}: final result differs from the uncrashed run`);
      }
    };

    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < RUNS) await one(next++);
      }),
    );
    expect(failures, `seed ${seed}`).toEqual([]);
    expect(kills).toBeGreaterThanOrEqual(RUNS);
    // Most first kills must land before the drive finished, or the test would prove little.
    expect(crashed, `${crashed} of ${RUNS} first kills interrupted the task (drive ≈ ${workMs} ms)`).toBeGreaterThanOrEqual(RUNS * 0.5);
    expect(resumes).toBeGreaterThan(0);
  });
});
