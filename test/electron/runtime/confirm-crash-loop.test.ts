/**
 * A confirm-mode task whose resume process keeps crashing: the runner retries
 * preparing the resume plan with backoff, a bounded number of times, and then
 * stops with the task left interrupted. Real worker processes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Runner } from '../../../electron/runtime/runner.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { useOfflineWorkers } from '../../support/offline-workers.js';
import { RUNTIME_INDEX_URL as runtimeIndex, writeAgentProject } from './agent-project.js';

/** Crashes in its step, and from then on dies as soon as it is loaded. */
const CRASHY = (marker: string) => `
import { existsSync, writeFileSync } from 'node:fs';
import { defineAgent, z } from '${runtimeIndex}';
if (existsSync(${JSON.stringify(marker)})) process.exit(1);
export default defineAgent({
  name: 'crashy',
  description: 'crashes in its step, then at every load',
  options: z.object({}),
  goal: () => 'crash',
  plan: () => [{ id: 'a', name: 'a' }],
  async run(ctx) {
    await ctx.step('a', () => {
      writeFileSync(${JSON.stringify(marker)}, 'x');
      process.exit(9);
    });
  },
});
`;

let tmp: string;
useOfflineWorkers();
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-confirm-loop-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('confirm mode, when preparing the resume plan crashes every time', () => {
  it('retries a bounded number of times, then stops with the task interrupted', { timeout: 60_000 }, async () => {
    const { project, root, moduleFile } = await writeAgentProject(tmp, 'crashy.mjs', CRASHY(path.join(tmp, 'crashed.marker')));
    const runner = new Runner({ root, backoffMs: 5 });
    const spawned: string[] = [];
    const retries: number[] = [];
    runner.onEvent((e) => {
      if (e.type === 'spawned') spawned.push(e.job);
      if (e.type === 'retrying') retries.push(e.attempt);
    });
    const outcome = await runner.startRun({ agent: moduleFile, cwd: project, taskId: 'c', mode: 'confirm', maxAutoAttempts: 2 });

    expect(spawned).toEqual(['start', 'resume', 'resume']);
    expect(retries).toEqual([2]);
    expect(outcome.crashed).toBe(true);
    expect(outcome.message).toContain('preparing a resume plan crashed 2 time(s) in a row');
    expect(outcome.next).toContain('waystation resume');
    const cp = (await openStore(root).getTask('c'))!.checkpoint!;
    expect(cp.status).toBe('running');
    expect(cp.recovery.pending_approval).toBeNull();
  });
});
