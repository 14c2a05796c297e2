/**
 * Confinement over real HTTP, with the real host service behind the loopback
 * host: a task folder and a root file that are symbolic links out of the
 * checkpoint directory are listed as such, and every request that would read
 * or act through them is refused, without saying where they lead.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostService } from '../../../electron/host/host-service.js';
import { recordingRunner, type RecordedAction } from '../../support/recording-runner.js';
import { startHttpHost, type HttpHost } from '../../../electron/host/http-host.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { makeCheckpoint } from '../store/store-test-helpers.js';
import { trustAll } from '../../support/trust-all.js';

let base: string;
let outside: string;
let service: HostService;
let host: HttpHost;
const runnerCalls: RecordedAction[] = [];

beforeAll(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-http-confine-')));
  outside = path.join(base, 'elsewhere');
  const root = path.join(base, 'root');
  await openStore(outside).create(makeCheckpoint('escape'));
  await fs.writeFile(
    path.join(outside, 'secret.json'),
    JSON.stringify({ task_id: 'leak', task_name: 'secret plans', current_step: 1, total_steps: 2, results: {} }),
  );
  await openStore(root).create(makeCheckpoint('inside'));
  await fs.symlink(path.join(outside, 'escape'), path.join(root, 'escape'));
  await fs.symlink(path.join(outside, 'secret.json'), path.join(root, 'leak.json'));
  service = new HostService({ host: 'web', trust: trustAll, runner: recordingRunner(runnerCalls), recoverOnOpen: false });
  await service.open(root);
  host = await startHttpHost({ service, staticDir: null });
});

afterAll(async () => {
  await host?.close();
  await service?.close();
  await fs.rm(base, { recursive: true, force: true });
});

async function get(route: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${host.origin}${route}`, { headers: { Authorization: `Bearer ${host.token}` } });
  return { status: res.status, text: await res.text() };
}

async function rpc(method: string, input: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${host.origin}/api/rpc/${method}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${host.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(input),
  });
  return { status: res.status, text: await res.text() };
}

describe('tasks symlinked out of the root, over HTTP', () => {
  it('are listed as links out of the root, with nothing read from behind them', async () => {
    const listed = JSON.parse((await get('/api/tasks')).text) as Array<{
      task_id: string;
      location: string;
      display_status: string;
      task_name: string | null;
      problems: { reason: string }[];
    }>;
    const byLocation = new Map(listed.map((t) => [t.location, t]));
    for (const location of ['escape', 'leak.json']) {
      expect(byLocation.get(location)).toMatchObject({ display_status: 'unreadable', task_name: null });
      expect(byLocation.get(location)?.problems.map((p) => p.reason)).toEqual(['outside-root']);
    }
    expect(listed.some((t) => t.task_name === 'secret plans' || t.task_name === 'task escape')).toBe(false);
    expect((await get('/api/tasks/inside')).status).toBe(200);
  });

  const reads: Array<[string, () => Promise<{ status: number; text: string }>]> = [];
  for (const taskId of ['escape', 'leak']) {
    reads.push(
      [`GET /api/tasks/${taskId}`, () => get(`/api/tasks/${taskId}`)],
      [`GET /api/tasks/${taskId}?version=1`, () => get(`/api/tasks/${taskId}?version=1`)],
      [`GET /api/tasks/${taskId}/history`, () => get(`/api/tasks/${taskId}/history`)],
      [`getMessages ${taskId}`, () => rpc('getMessages', { taskId })],
      [`getStepResult ${taskId}`, () => rpc('getStepResult', { taskId, stepId: 's1' })],
      [`diffVersions ${taskId}`, () => rpc('diffVersions', { taskId, a: 1, b: 1 })],
      [`verifyTask ${taskId}`, () => rpc('verifyTask', { taskId })],
      [`resumeTask ${taskId}`, () => rpc('resumeTask', { taskId })],
      [`approveResume ${taskId}`, () => rpc('approveResume', { taskId })],
      [`editStepResult ${taskId}`, () => rpc('editStepResult', { taskId, stepId: 's1', value: 1 })],
      [`startTask ${taskId}`, () => rpc('startTask', { agent: 'checkpoint-demo', taskId })],
    );
  }

  it.each(reads)('%s is refused with 403, naming the link but not where it leads', async (_what, send) => {
    const reply = await send();
    expect(reply.status).toBe(403);
    const body = JSON.parse(reply.text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.message).toContain('outside the checkpoint directory');
    expect(reply.text).not.toContain(outside);
    expect(reply.text).not.toContain('secret');
    expect(runnerCalls).toEqual([]);
  });
});
