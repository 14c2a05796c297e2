/**
 * The PostgreSQL server stops while `waystation run` works on a task, or a
 * save's connection drops and the save is found not committed: one line says
 * what happened to the database (named without its password), that the task
 * is interrupted at its last saved version and which command continues it; no
 * stack trace; the exit code of an interrupted run. Once the server is back,
 * that command finishes the task. A start that stored nothing says so, and
 * gives the command that starts it again, with the exit code of a store that
 * could not be written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import { openLocation } from '../../../electron/store/open-location.js';
import {
  clusterUrl,
  startCluster,
  startServer,
  stopClusterSync,
  stopServer,
  TEST_PASSWORD,
  withClient,
  withoutPassword,
  type ClusterInfo,
} from '../../support/postgres-cluster.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { startCutProxy, type CutProxy } from '../../support/pg-cut-proxy.js';
import { captureCli } from './capture-cli.js';
import { RUNTIME_INDEX_URL } from '../runtime/agent-project.js';

// Slow model replies, so the server can be stopped between two saves.
useOfflineWorkers({ SKIP_FAILURE: '1', WAYSTATION_OFFLINE_LATENCY_MS: '1000' });

// A cluster of this file's own: stopping the shared one would cut the other files' connections.
let info: ClusterInfo;
let url: string;
let folder: string;
let cwd: string;
beforeAll(async () => {
  info = await startCluster();
  await withClient(clusterUrl(info, 'postgres'), (c) => c.query('CREATE DATABASE down'));
  url = clusterUrl(info, 'down');
  // The folder the runner stands in is the database's artifact folder, which a resume must trust.
  cwd = process.cwd();
  folder = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-pg-down-')));
  process.chdir(folder);
});
afterAll(async () => {
  process.chdir(cwd);
  await fs.rm(folder, { recursive: true, force: true });
  stopClusterSync(info);
});

/** How many versions of `taskId` the database holds (0 when it cannot be asked). */
async function versions(taskId: string): Promise<number> {
  return withClient(url, async (c) => {
    const r = await c.query<{ n: string }>('SELECT count(*) AS n FROM waystation_versions WHERE task_id = $1', [taskId]);
    return Number(r.rows[0].n);
  }).catch(() => 0);
}

describe('the server stops under a run', () => {
  it('one line: the database named, the task interrupted, the command that continues it; exit 7; resumed once it is back', async () => {
    expect((await captureCli('db', 'init', url)).code).toBe(0);
    const running = captureCli('run', url, 'checkpoint-demo', '--task', 'down2');
    // A step's result saved, the next step waiting on its model reply: stop the server there.
    await expect.poll(() => versions('down2'), { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(3);
    await stopServer(info);
    const r = await running;
    const shown = `postgres://postgres@127.0.0.1:${info.port}/down`;

    const said = r.err.split('\n').filter((line) => line.startsWith('waystation: '));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      new RegExp(`^waystation: (cannot reach the PostgreSQL server of|the connection to) ${shown.replace(/[./]/g, '\\$&')}`),
    );
    expect(said[0]).toContain(
      `Task down2 is left interrupted at its last saved version; once the server is back, continue it: waystation resume ${shown} down2`,
    );
    // The worker's error is a sentence, not a crash: no stack frames.
    expect(r.out + r.err).not.toMatch(/^\s+at /m);
    expect(r.out + r.err).not.toContain(TEST_PASSWORD);
    expect(r.code).toBe(RunExit.crashed);

    await startServer(info);
    const resumed = await captureCli('resume', url, 'down2', '--trust');
    expect(resumed.out).toContain('down2 done');
    expect(resumed.code).toBe(RunExit.done);
  }, 90_000);

  it('before a start stored anything: says nothing of the task was stored, and to start it again', async () => {
    // An agent that takes its time to load, saying when it starts to: the runner loads it twice (to describe it, then
    // in the worker that starts the task), and the server stops while the second load waits.
    const loads = path.join(folder, 'loads.txt');
    const agent = path.join(folder, 'slow-load.mjs');
    await fs.writeFile(
      agent,
      `import { appendFileSync } from 'node:fs';
import { defineAgent, z } from '${RUNTIME_INDEX_URL}';
appendFileSync(${JSON.stringify(loads)}, 'load;');
await new Promise((r) => setTimeout(r, 3000));
export default defineAgent({ name: 'slow-load', description: 'loads slowly', options: z.object({}), goal: () => 'g',
  plan: () => [{ id: 'a', name: 'a' }], async run(ctx) { await ctx.step('a', () => 'done'); } });
`,
    );
    const running = captureCli('run', url, agent, '--task', 'early');
    const loaded = () =>
      fs.readFile(loads, 'utf8').then(
        (t) => t.split(';').filter(Boolean).length,
        () => 0,
      );
    await expect.poll(loaded, { timeout: 30_000, interval: 100 }).toBe(2);
    await stopServer(info);
    const r = await running;
    await startServer(info);

    const said = r.err.split('\n').filter((line) => line.startsWith('waystation: '));
    expect(said).toHaveLength(1);
    const shown = `postgres://postgres@127.0.0.1:${info.port}/down`;
    expect(said[0]).toContain(`cannot reach the PostgreSQL server of ${shown}`);
    // No task to resume: the command is the start, as it was given, with the task's id.
    const again = `waystation run ${shown} ${agent} --task early`;
    expect(said[0]).toContain(`Nothing of task early was stored; once the server is back, start it again: ${again}`);
    expect(said[0]).not.toContain('resume');
    expect(r.out + r.err).not.toMatch(/^\s+at /m);
    expect(r.out + r.err).not.toContain(TEST_PASSWORD);
    expect(r.code).toBe(RunExit.failed);
    expect(await versions('early')).toBe(0);

    // That command, run as printed (its password from the environment, as docs/POSTGRES.md advises), starts the task.
    const started = await withPassword(() => captureCli(...again.split(' ').slice(1)));
    expect(started.out).toContain('early done');
    expect(started.code).toBe(RunExit.done);
  }, 90_000);
});

/** `fn` with PGPASSWORD set to the test cluster's password: a URL printed without it logs in. */
async function withPassword<T>(fn: () => Promise<T>): Promise<T> {
  const saved = process.env.PGPASSWORD;
  process.env.PGPASSWORD = TEST_PASSWORD;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.PGPASSWORD;
    else process.env.PGPASSWORD = saved;
  }
}

describe("a save's connection drops and the save is found not committed", () => {
  let proxy: CutProxy;
  beforeAll(async () => {
    proxy = await startCutProxy(info.port);
  });
  afterAll(async () => {
    await proxy.close();
  });

  /** The status the newest version of `taskId` stores (read directly, not through the proxy). */
  async function storedStatus(taskId: string): Promise<string | undefined> {
    const store = openLocation(url);
    try {
      return (await store.getTask(taskId))?.checkpoint?.status;
    } finally {
      await store.close();
    }
  }

  it('in a run, then in the resume: each time one line with the command that continues it, exit 7; then it finishes', async () => {
    const through = proxy.url(url);
    const shown = withoutPassword(through);
    const expectInterrupted = (r: { code: number; out: string; err: string }, where: string) => {
      const said = r.err.split('\n').filter((line) => line.startsWith('waystation: '));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(`the connection to ${shown} was lost`);
      const versionsSaid = /before version (\d+) of task cut was committed; nothing was written and version (\d+) is intact\./.exec(
        said[0],
      );
      expect(versionsSaid).not.toBeNull();
      expect(Number(versionsSaid![2])).toBe(Number(versionsSaid![1]) - 1);
      expect(said[0]).toContain(where);
      expect(r.out + r.err).not.toMatch(/^\s+at /m);
      expect(r.out + r.err).not.toContain(TEST_PASSWORD);
      expect(r.code).toBe(RunExit.crashed);
    };

    // A step's save cut off inside the run: the run ends there, recording no failure of the agent.
    const running = captureCli('run', through, 'checkpoint-demo', '--task', 'cut');
    await expect.poll(() => versions('cut'), { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    const cut = proxy.armCommitCut('withhold', { target: 'save' });
    const r = await running;
    await cut;
    expectInterrupted(
      r,
      `Task cut is left interrupted at its last saved version; the server answered since, so continue it: waystation resume ${shown} cut`,
    );
    // Interrupted, not failed (a model reply saved on its own may follow the cut save: it is the run's, and kept).
    expect(await storedStatus('cut')).toBe('running');

    // The resume's first save (its record of the resume, before any step) cut off the same way.
    const kept = await versions('cut');
    const resumeCut = proxy.armCommitCut('withhold', { target: 'save' });
    const resumed = await captureCli('resume', through, 'cut', '--trust');
    await resumeCut;
    // Cut off before it saved anything, the resume changed nothing: the task is as it was, and said so.
    expectInterrupted(
      resumed,
      `Nothing of this resume was saved: task cut is as it was before it; the server answered since, so resume it again: waystation resume ${shown} cut`,
    );
    expect(resumed.err).toContain(`before version ${kept + 1} of task cut was committed`);
    expect(await versions('cut')).toBe(kept);

    const finished = await captureCli('resume', url, 'cut');
    expect(finished.out).toContain('cut done');
    expect(finished.code).toBe(RunExit.done);
  }, 90_000);

  it("a start's first save cut off, and the server out of reach since: whether it was stored is unknown, said so, exit 1", async () => {
    const through = proxy.url(url);
    const shown = withoutPassword(through);
    const running = captureCli('run', through, 'checkpoint-demo', '--task', 'unknown');
    // The first save is the task's creation; from then on the proxy lets no connection through, so it cannot be asked about.
    await proxy.armCommitCut('withhold', { target: 'save', thenRefuse: true });
    const r = await running;

    const said = r.err.split('\n').filter((line) => line.startsWith('waystation: '));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`the connection to ${shown} was lost while version 1 of task unknown was being committed`);
    // Not "nothing was stored": the command given starts the task, or resumes it if it was stored after all.
    expect(said[0]).not.toContain('Nothing of task unknown was stored');
    expect(said[0]).toContain(
      `Once the server is back, \`waystation run ${shown} checkpoint-demo --task unknown\` resumes task unknown if its first version ` +
        'was stored, and starts it again otherwise.',
    );
    expect(r.out + r.err).not.toMatch(/^\s+at /m);
    expect(r.out + r.err).not.toContain(TEST_PASSWORD);
    expect(r.code).toBe(RunExit.failed);
  }, 90_000);
});
