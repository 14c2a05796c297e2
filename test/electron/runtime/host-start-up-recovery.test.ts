/**
 * Start-up recovery as the app and `waystation serve` do it: opening a
 * directory in the host service, with the real runner behind it, resumes an
 * interrupted auto-mode task to the end. Real worker processes, offline model.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HostService } from '../../../electron/host/host-service.js';
import { createHostRunner } from '../../../electron/host/host-runner.js';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { trustAll } from '../../support/trust-all.js';

let root: string;
let service: HostService | null = null;
useOfflineWorkers({ SKIP_FAILURE: '1', WAYSTATION_OFFLINE_LATENCY_MS: '150' });
beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-host-recovery-')));
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

const latest = async (id: string) => (await openStore(root).getTask(id))!.checkpoint!;

describe('opening a directory in the host', () => {
  it('resumes an interrupted auto-mode task and leaves a manual one waiting', { timeout: 60_000 }, async () => {
    // Two tasks killed mid-run: one in auto mode, one in manual mode.
    for (const [taskId, mode] of [
      ['auto-task', 'auto'],
      ['manual-task', 'manual'],
    ] as const) {
      const first = new Runner({ root });
      const { child, done } = first.spawnWorker({ kind: 'start', root, taskId, agentRef: { name: 'checkpoint-demo' }, options: {}, mode });
      let lines = 0;
      first.onEvent((e) => {
        if (e.type === 'line' && ++lines === 3) child.kill('SIGKILL');
      });
      expect((await done).crashed).toBe(true);
    }
    const before = await latest('auto-task');
    expect(before.status).toBe('running');
    expect(before.plan.some((s) => s.status !== 'done')).toBe(true);
    const manualVersion = (await latest('manual-task')).version;

    service = new HostService({ host: 'web', trust: trustAll, runner: createHostRunner() });
    await service.open(root);
    await service.recovered();

    const after = await latest('auto-task');
    expect(after.status).toBe('done');
    // Resumed, not restarted: the first step ran once.
    expect(after.plan[0].attempts).toBe(1);
    expect((await openStore(root).history('auto-task')).some((h) => h.source.note?.startsWith('resumed (auto)'))).toBe(true);
    const manual = await latest('manual-task');
    expect(manual.status).toBe('running');
    expect(manual.version).toBe(manualVersion);
  });
});
