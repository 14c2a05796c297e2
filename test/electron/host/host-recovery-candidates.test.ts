/**
 * Opening a directory hands the runner the tasks its first listing found
 * worth recovering, so the runner does not list a large directory a second
 * time while the user waits for the first page.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ActionResult } from '../../../shared/api/contract.js';
import type { RecoveryMode, TaskStatus } from '../../../shared/checkpoint/schema.js';
import { HostService, type HostRunner } from '../../../electron/host/host-service.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { trustAll } from '../../support/trust-all.js';

let root: string;
let service: HostService | null = null;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-host-recovery-'));
});
afterEach(async () => {
  await service?.close();
  service = null;
  await fs.rm(root, { recursive: true, force: true });
});

async function writeTask(
  taskId: string,
  status: TaskStatus,
  mode: RecoveryMode,
  agent: string | null = 'checkpoint-demo',
  forkedFrom?: { task_id: string; version: number },
): Promise<void> {
  const store = await openStore(root);
  await store.create(
    makeCheckpoint(taskId, 3, {
      status,
      recovery: { mode },
      ...(agent ? { agent: { name: agent } } : {}),
      ...(forkedFrom ? { forked_from: forkedFrom, source: { kind: 'fork', forked_from: forkedFrom } } : {}),
    }),
  );
}

it('passes the runner the interrupted or failed auto and confirm tasks of its first listing', async () => {
  await writeTask('auto-interrupted', 'running', 'auto');
  await writeTask('auto-failed', 'failed', 'auto');
  await writeTask('confirm-interrupted', 'running', 'confirm');
  await writeTask('manual-interrupted', 'running', 'manual');
  await writeTask('auto-done', 'done', 'auto');
  await writeTask('auto-no-agent', 'running', 'auto', null);
  // A fork of a version mid-run waits for a person's first resume.
  await writeTask('auto-fork', 'running', 'auto', 'checkpoint-demo', { task_id: 'auto-interrupted', version: 1 });
  await fs.writeFile(path.join(root, 'torn.json'), '{"task_id": "torn", "status": "runn');

  const asked: Array<readonly string[] | undefined> = [];
  const result = (taskId: string): ActionResult => ({ taskId, version: null, message: 'ok' });
  const runner: HostRunner = {
    start: async (_root, req) => result(req.taskId ?? 'x'),
    resume: async (_root, id) => result(id),
    approve: async (_root, id) => result(id),
    reject: async (_root, id) => result(id),
    edit: async (_root, id) => result(id),
    stop: async (_root, id) => result(id),
    fork: async (_root, id) => result(id),
    rewind: async (_root, id) => result(id),
    recoverInterrupted: async (_root, candidates) => void asked.push(candidates),
    onEvent: () => () => {},
    shutdown: async () => {},
  };
  service = new HostService({ host: 'web', trust: trustAll, runner });
  await service.open(root);
  await service.recovered();

  expect(asked).toHaveLength(1);
  expect([...(asked[0] ?? [])].sort()).toEqual(['auto-failed', 'auto-interrupted', 'confirm-interrupted']);
});
