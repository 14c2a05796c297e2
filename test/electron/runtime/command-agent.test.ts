/**
 * Agents in any language: a Python program registered in waystation.config.json
 * as a command is listed without running it, started, resumed, approved,
 * rejected and edited through the runner like a module agent, its output
 * reaches the runner's events, a kill is recorded as an interruption, and an
 * interrupted auto-mode task is resumed at start-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Runner, type RunnerEvent } from '../../../electron/runtime/runner.js';
import { listAvailableAgents, readAgentsConfig } from '../../../electron/runtime/agent-catalog.js';
import { agentStatus } from '../../../electron/runtime/agent-status.js';
import { resolveCommand } from '../../../electron/runtime/command-agent.js';
import { hashCommand } from '../../../electron/runtime/command-files.js';
import { openStore } from '../../../electron/store/directory-store.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let root: string;

const AGENT = `
import os, sys, time
import waystation
from waystation import PlannedStep

def run(t):
    name = t.step("greet", lambda: "hello " + t.options["who"])
    def check():
        if os.path.exists(os.path.join(t.root, "sleep")):
            print("sleeping in check", flush=True)
            time.sleep(30)
        if not os.path.exists(os.path.join(t.root, "ok")):
            raise RuntimeError("no ok file yet")
        return name.upper()
    t.step("check", check)

agent = waystation.Agent(
    name="py-greeter",
    description="greets, then checks",
    options={"type": "object", "properties": {"who": {"type": "string", "default": "world"}}},
    plan=[PlannedStep("greet", "greet", {"type": "string"}), PlannedStep("check", "check", {"type": "string"})],
    goal=lambda o: "greet " + o["who"],
    run=run,
)
sys.exit(waystation.main(agent))
`;

function runner(events: RunnerEvent[] = []): Runner {
  const r = new Runner({
    root,
    env: { ...process.env, PYTHONPATH: path.join(repo, 'python'), WAYSTATION_OFFLINE_LATENCY_MS: '0', WAYSTATION_AUTO_BACKOFF_MS: '0' },
    backoffMs: 0,
    actor: 'tester',
  });
  r.onEvent((e) => events.push(e));
  return r;
}

async function task(id: string) {
  return (await openStore(root).getTask(id))!.checkpoint!;
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-command-'));
  await fs.writeFile(path.join(root, 'greeter.py'), AGENT);
  await fs.writeFile(path.join(root, 'no-library.sh'), 'echo "ModuleNotFoundError: No module named \'waystation\'" >&2\nexit 1\n');
  await fs.writeFile(
    path.join(root, 'waystation.config.json'),
    JSON.stringify({
      agents: [
        {
          name: 'py-greeter',
          command: ['python3', 'greeter.py'],
          description: 'greets, then checks',
          options: { type: 'object', properties: { who: { type: 'string' } } },
        },
        { name: 'misnamed', command: ['python3', 'greeter.py'] },
        // A program that dies before it writes anything, as Python does when the library is not importable.
        { name: 'no-library', command: ['sh', 'no-library.sh'] },
      ],
    }),
  );
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('a command agent', () => {
  it('is listed from the configuration without running anything', async () => {
    const config = await readAgentsConfig(root);
    expect(config.problem).toBeNull();
    expect(config.commands.map((c) => c.name)).toEqual(['py-greeter', 'misnamed', 'no-library']);
    const catalog = await listAvailableAgents(root);
    const listed = catalog.agents.find((a) => a.name === 'py-greeter')!;
    expect(listed).toMatchObject({
      origin: 'registered',
      description: 'greets, then checks',
      command: ['python3', 'greeter.py'],
      options_schema: { type: 'object' },
    });
    expect(listed.problem).toBeUndefined();
    expect(resolveCommand(root, ['python3', 'greeter.py'])).toEqual(['python3', path.join(root, 'greeter.py')]);
  });

  it('registered twice under one name, is refused a start and listed with the reason: no order in the file picks one', async () => {
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-command-twice-'));
    try {
      await fs.writeFile(
        path.join(other, 'waystation.config.json'),
        JSON.stringify({
          agents: [
            { name: 'dup', command: ['sh', 'one.sh'] },
            { name: 'dup', command: ['sh', 'two.sh'] },
          ],
        }),
      );
      const listed = (await listAvailableAgents(other)).agents.filter((a) => a.name === 'dup');
      expect(listed).toHaveLength(2);
      for (const a of listed) expect(a.problem).toContain('"dup" is registered more than once in waystation.config.json');
      const started = await new Runner({ root: other }).startRun({ agent: 'dup', taskId: 'd1' });
      expect(started).toMatchObject({ error: 'invalid', exitCode: 2 });
      expect(started.message).toContain('registered more than once');
      expect(await openStore(other).getTask('d1')).toBeNull();
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });

  it('refuses a configuration entry that is neither a module nor a command', async () => {
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-command-bad-'));
    await fs.writeFile(path.join(other, 'waystation.config.json'), JSON.stringify({ agents: [{ name: 'x', command: [] }] }));
    const config = await readAgentsConfig(other);
    expect(config.problem).toContain('does not fit the expected shape');
    expect(config.commands).toEqual([]);
    await fs.rm(other, { recursive: true, force: true });
  });

  it('starts, fails, shows its output live, and resumes where it failed', async () => {
    const events: RunnerEvent[] = [];
    const first = await runner(events).startRun({ agent: 'py-greeter', taskId: 'g1', options: { who: 'ana' } });
    expect(first).toMatchObject({ status: 'failed', exitCode: 1 });
    const lines = events.filter((e) => e.type === 'line').map((e) => (e as { line: string }).line);
    expect(lines).toContain('greet (greet): started (attempt 1)');
    expect(events.some((e) => e.type === 'spawned')).toBe(true);
    const cp = await task('g1');
    expect(cp.agent).toMatchObject({ name: 'py-greeter', command: ['python3', 'greeter.py'], project_root: '.', options: { who: 'ana' } });
    // The task recorded the hash of the script its command names; unchanged, the status says so.
    const sha = await hashCommand(root, ['python3', 'greeter.py']);
    expect(cp.agent).toMatchObject({ command_sha256: sha });
    expect(await agentStatus(root, cp)).toEqual({
      kind: 'command',
      available: true,
      module_changed: false,
      recorded_sha256: sha,
      current_sha256: sha,
    });

    await fs.writeFile(path.join(root, 'ok'), '');
    const second = await runner().resume('g1');
    expect(second).toMatchObject({ status: 'done', exitCode: 0 });
    const done = await task('g1');
    expect(done.plan.map((s) => s.attempts)).toEqual([1, 2]);
    expect(await openStore(root).readBlob('g1', done.plan[1].result_ref!)).toBe('HELLO ANA');
    await fs.rm(path.join(root, 'ok'));
  });

  it('is approved and rejected in confirm mode, and edited, like any agent', async () => {
    const r = runner();
    expect(await r.startRun({ agent: 'py-greeter', taskId: 'c1', mode: 'confirm' })).toMatchObject({
      status: 'waiting_approval',
      exitCode: 4,
    });
    await fs.writeFile(path.join(root, 'ok'), '');
    expect(await r.approve('c1')).toMatchObject({ status: 'done' });
    expect((await task('c1')).recovery.decisions[0]).toMatchObject({ decision: 'approved', by: 'tester' });
    await fs.rm(path.join(root, 'ok'));

    expect(await r.startRun({ agent: 'py-greeter', taskId: 'c2', mode: 'confirm' })).toMatchObject({ status: 'waiting_approval' });
    expect(await r.reject('c2', 'not now')).toMatchObject({ status: 'halted' });
    const halted = await r.resume('c2');
    expect(halted).toMatchObject({ status: 'halted', exitCode: 5 });
    expect(halted.message).toContain('halted');

    expect(await r.startRun({ agent: 'py-greeter', taskId: 'e1' })).toMatchObject({ status: 'failed' });
    expect(await r.edit('e1', 'check', 'SET BY HAND')).toMatchObject({ status: 'done' });
    expect((await task('e1')).source.kind).toBe('human-edit');
  });

  it('refuses bad options and a name that is not the program agent’s, writing nothing', async () => {
    const r = runner();
    const bad = await r.startRun({ agent: 'py-greeter', taskId: 'b1', options: { who: 3 } });
    expect(bad).toMatchObject({ error: 'invalid', exitCode: 2 });
    expect(bad.message).toContain('invalid options');
    const misnamed = await r.startRun({ agent: 'misnamed', taskId: 'b2' });
    expect(misnamed).toMatchObject({ error: 'invalid' });
    expect(misnamed.message).toContain("registered as agent 'misnamed'");
    expect(await openStore(root).getTask('b1')).toBeNull();
    expect(await openStore(root).getTask('b2')).toBeNull();
  });

  it('that ends before it writes the task, refuses the start with what it said: there is no task to resume', async () => {
    const ended = await runner().startRun({ agent: 'no-library', taskId: 'n1', mode: 'auto' });
    expect(ended).toMatchObject({ error: 'agent-unavailable', exitCode: 2, status: null, version: null, next: null });
    expect(ended.crashed).toBeUndefined();
    expect(ended.message).toContain('exited with code 1');
    expect(ended.message).toContain("No module named 'waystation'");
    expect(ended.message).toContain('nothing was written');
    expect(await openStore(root).getTask('n1')).toBeNull();
  });

  it('killed mid-step, is recorded as interrupted and, in auto mode, resumed at start-up', async () => {
    await fs.writeFile(path.join(root, 'sleep'), '');
    const events: RunnerEvent[] = [];
    const r = runner(events);
    r.onEvent((e) => {
      if (e.type === 'line' && e.line === 'sleeping in check') r.killAll('SIGKILL');
    });
    const killed = await r.startRun({ agent: 'py-greeter', taskId: 'k1', mode: 'auto' });
    expect(killed).toMatchObject({ crashed: true, exitCode: 7, status: 'running', signal: 'SIGKILL' });
    await fs.rm(path.join(root, 'sleep'));
    await fs.writeFile(path.join(root, 'ok'), '');
    const recovered = await runner().recoverInterrupted(['k1']);
    expect(recovered).toEqual([expect.objectContaining({ task_id: 'k1', status: 'done' })]);
    const cp = await task('k1');
    expect(cp.plan[0].attempts).toBe(1);
    expect(cp.recovery.auto_attempts).toBe(0);
    await fs.rm(path.join(root, 'ok'));
  }, 60_000);

  it('whose registration is gone, is refused a resume with the reason, its task untouched', async () => {
    const config = path.join(root, 'waystation.config.json');
    const saved = await fs.readFile(config, 'utf8');
    await fs.writeFile(config, JSON.stringify({ agents: [] }));
    try {
      const cp = await task('e1');
      expect(await agentStatus(root, cp)).toMatchObject({ kind: 'command', available: false });
      const refusal = await runner().resume('e1');
      expect(refusal).toMatchObject({ error: 'agent-unavailable', exitCode: 2 });
      expect(refusal.message).toContain('no longer registers');
      expect((await task('e1')).version).toBe(cp.version);
    } finally {
      await fs.writeFile(config, saved);
    }
  });
});
