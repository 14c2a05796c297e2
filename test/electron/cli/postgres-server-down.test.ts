/**
 * The PostgreSQL server stops while `waystation run` works on a task: one
 * line says the database could not be reached (named without its password),
 * that the task is interrupted at its last saved version and which command
 * continues it; no stack trace; the exit code of an interrupted run. Once the
 * server is back, that command finishes the task.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunExit } from '../../../electron/runtime/worker-protocol.js';
import {
  clusterUrl,
  startCluster,
  startServer,
  stopClusterSync,
  stopServer,
  TEST_PASSWORD,
  withClient,
  type ClusterInfo,
} from '../../support/postgres-cluster.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
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
    expect(said[0]).toContain(`cannot reach the PostgreSQL server of postgres://postgres@127.0.0.1:${info.port}/down`);
    expect(said[0]).toContain('Nothing of task early was stored; once the server is back, start it again.');
    expect(r.out + r.err).not.toMatch(/^\s+at /m);
    expect(r.code).toBe(RunExit.crashed);
    expect(await versions('early')).toBe(0);
  }, 90_000);
});
