// hello-agent's own test: run it, kill it mid-run, resume it, and check that
// nothing done before the kill was done again. Run with `npm test` (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { openStore, Runner, RunExit, verifyTask } from 'waystation';

const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// No API key: the deterministic offline model answers.
const env = { ...process.env, OPENAI_API_KEY: '', WAYSTATION_OFFLINE_LATENCY_MS: '0' };

async function waitFor(check, what) {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a killed run resumes where it stopped', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'hello-agent-'));
  try {
    const store = openStore(root);
    const taskId = 'hello-1';

    // Slow steps leave time to kill the worker once the first step is saved.
    const first = new Runner({ root, env: { ...env, HELLO_STEP_DELAY_MS: '400' } });
    const started = first.startRun({ agent: './agent.ts', cwd: project, taskId, options: { name: 'Ada' } });
    await waitFor(async () => (await store.getTask(taskId))?.checkpoint?.plan[0].status === 'done', 'the first step to be saved');
    first.killAll('SIGKILL');
    const killed = await started;
    assert.equal(killed.exitCode, RunExit.crashed);
    const interrupted = (await store.getTask(taskId)).checkpoint;
    assert.equal(interrupted.agent.module, 'agent.ts');
    assert.notEqual(interrupted.plan[2].status, 'done');

    const resumed = await new Runner({ root, env }).resume(taskId);
    assert.equal(resumed.exitCode, RunExit.done, resumed.message);
    const cp = (await store.getTask(taskId)).checkpoint;
    assert.equal(cp.status, 'done');
    assert.equal(cp.plan[0].attempts, 1, 'the composed greeting was not composed again');
    const outbox = (await fs.readFile(path.join(root, 'outbox.jsonl'), 'utf8')).trim().split('\n');
    assert.equal(outbox.length, 1, 'published exactly once');
    const report = await verifyTask(root, cp);
    assert.equal(report.ok, true);
    await fs.rm(path.join(project, 'greetings', `${taskId}.txt`), { force: true });
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
