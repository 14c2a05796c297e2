/**
 * A command agent's script is held to the rule of a module agent's code: a
 * task records the hash of the files its command names in the directory, the
 * task's agent status says when they changed, and a confirm-mode resume puts
 * the change in its plan, so a person approves running the new code; the
 * resume that runs it records the new hash beside the old.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Runner } from '../../electron/runtime/runner.js';
import { agentStatus } from '../../electron/runtime/agent-status.js';
import { hashCommand } from '../../electron/runtime/command-files.js';
import { openStore } from '../../electron/store/directory-store.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let root: string;

const agentSource = (greeting: string) => `
import os, sys
import waystation
from waystation import PlannedStep

def run(t):
    t.step("greet", lambda: "${greeting}")
    def check():
        if not os.path.exists(os.path.join(t.root, "ok")):
            raise RuntimeError("no ok file yet")
        return "checked"
    t.step("check", check)

agent = waystation.Agent(name="py-code", plan=[PlannedStep("greet", "greet"), PlannedStep("check", "check")], goal="greet", run=run)
sys.exit(waystation.main(agent))
`;

function runner(): Runner {
  return new Runner({
    root,
    env: { ...process.env, PYTHONPATH: path.join(repo, 'python'), WAYSTATION_OFFLINE_LATENCY_MS: '0' },
    backoffMs: 0,
    actor: 'grace',
  });
}

async function task(id: string) {
  return (await openStore(root).getTask(id))!.checkpoint!;
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-py-code-'));
  await fs.writeFile(path.join(root, 'code.py'), agentSource('hello'));
  await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ name: 'py-code', command: ['python3', 'code.py'] }] }));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("a command agent's script", () => {
  it('is hashed when a task starts, and a change is shown, put in the confirm-mode plan and recorded when run', async () => {
    const original = await hashCommand(root, ['python3', 'code.py']);
    const first = await runner().startRun({ agent: 'py-code', taskId: 'c', mode: 'confirm' });
    expect(first.status, first.message).toBe('waiting_approval');
    let cp = await task('c');
    expect(cp.agent).toMatchObject({ name: 'py-code', command: ['python3', 'code.py'], command_sha256: original });
    expect(cp.recovery.pending_approval!.plan.module_changed).toBeUndefined();
    expect(await agentStatus(root, cp)).toMatchObject({ kind: 'command', available: true, module_changed: false });

    // The script changes while the task waits: its status says so, and approving the old plan runs nothing.
    await fs.writeFile(path.join(root, 'code.py'), agentSource('hi there'));
    const changed = await hashCommand(root, ['python3', 'code.py']);
    expect(await agentStatus(root, cp)).toMatchObject({
      kind: 'command',
      module_changed: true,
      recorded_sha256: original,
      current_sha256: changed,
      problem: expect.stringContaining('changed since the task recorded them'),
    });
    await fs.writeFile(path.join(root, 'ok'), '');
    const stale = await runner().approve('c');
    expect(stale.status, stale.message).toBe('waiting_approval');
    cp = await task('c');
    const plan = cp.recovery.pending_approval!.plan;
    expect(plan).toMatchObject({ rerun_step: 'check', module_changed: true });
    expect(cp.plan.map((s) => s.attempts)).toEqual([1, 1]);
    expect(stale.message).toContain("the files of the agent's command changed since the task recorded them (python3 code.py)");

    // Approving the plan that names the change runs the new code and records the new hash beside the old.
    const approved = await runner().approve('c');
    expect(approved.status, approved.message).toBe('done');
    cp = await task('c');
    expect(cp.agent).toMatchObject({ command_sha256: changed, previous_command_sha256: original });
    expect(cp.plan.map((s) => s.attempts)).toEqual([1, 2]);
    expect(await agentStatus(root, cp)).toMatchObject({ kind: 'command', module_changed: false });
  }, 60_000);
});
