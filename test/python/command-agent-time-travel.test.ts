/**
 * Time travel on a Python command agent: `waystation stop` stops it at its
 * next step (it saves the stop, lets the lease go, exits 8) and a person's
 * resume continues it; a rewind or a fork the TypeScript runtime writes is
 * resumed by Python with the ledger rule (a kept effect is not repeated, a
 * redo runs once under its new key), counted by the fake publish service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Runner, type RunnerEvent } from '../../electron/runtime/runner.js';
import { RunExit } from '../../electron/runtime/worker-protocol.js';
import { openStore } from '../../electron/store/directory-store.js';
import { readLeaseState } from '../../electron/store/file-lease-state.js';
import { runCli } from '../../electron/cli/main.js';
import { startFakePublishService, type FakePublishService } from '../fakes/fake-publish-service.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let root: string;
let service: FakePublishService;

/** Three steps, each sleeping `step_ms`; the second publishes once with an Idempotency-Key, and can be probed. */
const AGENT = `
import json, sys, time, urllib.error, urllib.request
import waystation
from waystation import PlannedStep

def publish(url, key, linger):
    req = urllib.request.Request(url, data=b'{"step":"two"}', method="POST",
                                 headers={"Idempotency-Key": key, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as res:
        answer = json.loads(res.read())
    time.sleep(linger)  # published, its outcome not yet recorded
    return answer

def probe(effect, options):
    try:
        with urllib.request.urlopen(options["publish_url"] + "?key=" + effect["idempotency_key"], timeout=10) as res:
            return {"happened": True, "outcome": json.loads(res.read())}
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return {"happened": False}
        raise

def run(t):
    pause = t.options["step_ms"] / 1000
    def step(sid):
        def body():
            time.sleep(pause)
            if sid != "two":
                return sid
            linger = t.options["linger_ms"] / 1000
            return t.effect("http-publish", key=f"{t.task_id}:two", perform=lambda key: publish(t.options["publish_url"], key, linger))
        return body
    for sid in ("one", "two", "three"):
        t.step(sid, step(sid))

agent = waystation.Agent(
    name="py-slow",
    options={"type": "object", "properties": {"step_ms": {"type": "integer", "default": 0}, "linger_ms": {"type": "integer", "default": 0}, "publish_url": {"type": "string"}}, "required": ["publish_url"]},
    plan=[PlannedStep(s, s) for s in ("one", "two", "three")],
    goal="take its time",
    probes={"http-publish": probe},
    run=run,
)
sys.exit(waystation.main(agent))
`;

function runner(events: RunnerEvent[] = []): Runner {
  const r = new Runner({
    root,
    env: { ...process.env, PYTHONPATH: path.join(repo, 'python'), WAYSTATION_OFFLINE_LATENCY_MS: '0' },
    backoffMs: 10,
    actor: 'grace',
  });
  r.onEvent((e) => events.push(e));
  return r;
}

async function task(id: string) {
  return (await openStore(root).getTask(id))!.checkpoint!;
}

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(args, { out: (s) => void (out += s), err: (s) => void (out += s), color: false });
  return { code, out };
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** Wait until step `id` of the task has started under a live lease. */
async function untilRunning(taskId: string, id: string): Promise<void> {
  const store = openStore(root);
  for (let i = 0; i < 1200; i++) {
    const started = (await store.readEvents(taskId).catch(() => [])).some((e) => e.type === 'step-start' && e.step_id === id);
    if (started && (await readLeaseState(path.join(root, taskId))).held) return;
    await sleep(25);
  }
  throw new Error(`step ${id} of ${taskId} never started`);
}

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-py-time-'));
  service = await startFakePublishService();
  await fs.writeFile(path.join(root, 'slow.py'), AGENT);
  await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ name: 'py-slow', command: ['python3', 'slow.py'] }] }));
});
afterAll(async () => {
  await service.close();
  await fs.rm(root, { recursive: true, force: true });
});

describe('a Python command agent', () => {
  it('is stopped by `waystation stop` at its next step, left interrupted, and resumed to the end by a person', async () => {
    const events: RunnerEvent[] = [];
    const run = runner(events).startRun({ agent: 'py-slow', taskId: 'stop-me', mode: 'auto', options: { step_ms: 700, publish_url: service.url } });
    await untilRunning('stop-me', 'one');
    const stopped = await cli('stop', root, 'stop-me', '--reason', 'wrong input', '--by', 'grace', '--wait', '30');
    // The stop itself succeeded; the run it stopped exits with its own code.
    expect(stopped.code, stopped.out).toBe(0);
    expect(stopped.out).toContain('task stop-me stopped by grace');
    const outcome = await run;
    expect(outcome).toMatchObject({ stopped: true, exitCode: RunExit.stopped, status: 'running' });
    // Auto mode does not retry a run a person stopped.
    expect(events.some((e) => e.type === 'retrying')).toBe(false);

    const cp = await task('stop-me');
    expect(cp.status).toBe('running');
    expect(cp.recovery.stopped).toMatchObject({ by: 'grace', reason: 'wrong input' });
    expect(cp.source).toMatchObject({ kind: 'stop', actor: 'grace', note: 'stopped: wrong input' });
    // Step one finished; the stop landed before step two started, so its effect was never asked for.
    expect(cp.plan.map((s) => s.status)).toEqual(['done', 'pending', 'pending']);
    expect(cp.side_effects).toEqual([]);
    expect((await readLeaseState(path.join(root, 'stop-me'))).held).toBe(false);
    const verify = await cli('verify', root, 'stop-me');
    expect(verify.code, verify.out).toBe(0);
    // A host opening the directory leaves it alone.
    expect(await runner().recoverInterrupted()).toEqual([]);

    const resumed = await runner().resume('stop-me');
    expect(resumed, resumed.message).toMatchObject({ status: 'done', exitCode: RunExit.done });
    const final = await task('stop-me');
    expect(final.recovery.stopped ?? null).toBeNull();
    expect(final.plan.map((s) => s.attempts)).toEqual([1, 1, 1]);
    expect(service.applied.get('stop-me:two')).toBe(1);
  }, 60_000);

  it('is ended by a forced stop mid-effect, and its resume probes the effect instead of repeating it', async () => {
    const events: RunnerEvent[] = [];
    const run = runner(events).startRun({
      agent: 'py-slow',
      taskId: 'force-me',
      mode: 'auto',
      options: { linger_ms: 30_000, publish_url: service.url },
    });
    // Published, its outcome not recorded: the effect is in flight.
    for (let i = 0; i < 1200 && !service.applied.get('force-me:two'); i++) await sleep(25);
    expect(service.applied.get('force-me:two')).toBe(1);
    const stopped = await cli('stop', root, 'force-me', '--force', '--by', 'grace');
    expect(stopped.code, stopped.out).toBe(0);
    const outcome = await run;
    // Ended by the stop a person asked for: stopped (exit 8), as a run that stopped at a boundary is.
    expect(outcome.exitCode, JSON.stringify(events.filter((e) => e.type !== 'line'))).toBe(RunExit.stopped);
    expect(outcome.stopped).toBe(true);
    expect(events.some((e) => e.type === 'retrying')).toBe(false);
    const cp = await task('force-me');
    expect(cp.recovery.stopped).toMatchObject({ by: 'grace' });
    expect(cp.side_effects).toEqual([expect.objectContaining({ idempotency_key: 'force-me:two', status: 'intent' })]);
    expect(await runner().recoverInterrupted()).toEqual([]);

    const resumed = await runner().resume('force-me');
    expect(resumed.status, resumed.message).toBe('done');
    expect(service.applied.get('force-me:two')).toBe(1);
    expect(service.probes.get('force-me:two')).toBe(1);
    expect((await task('force-me')).side_effects[0]).toMatchObject({ status: 'done', reconciliation: 'probed-done' });
  }, 60_000);

  it('resumes a rewind TypeScript wrote: a kept effect is not repeated, a redo runs once under its new key', async () => {
    const first = await runner().startRun({ agent: 'py-slow', taskId: 'rew', options: { publish_url: service.url } });
    expect(first.status, first.message).toBe('done');
    expect(service.applied.get('rew:two')).toBe(1);

    // Keep (the default): steps two and three rerun, the publication is not repeated.
    const kept = await cli('rewind', root, 'rew', 'two', '--yes', '--by', 'grace');
    expect(kept.code, kept.out).toBe(0);
    expect((await runner().resume('rew')).status).toBe('done');
    let cp = await task('rew');
    expect(cp.plan.map((s) => [s.attempts, s.reruns ?? 0])).toEqual([
      [1, 0],
      [2, 1],
      [2, 1],
    ]);
    expect(service.applied.get('rew:two')).toBe(1);
    expect(cp.side_effects).toHaveLength(1);

    // Redo, chosen for that effect: it runs once more under a new key, the old entry stays as it was.
    const effect = cp.side_effects[0].id;
    const redo = await cli('rewind', root, 'rew', 'two', '--redo', effect, '--yes', '--by', 'grace');
    expect(redo.code, redo.out).toBe(0);
    expect((await runner().resume('rew')).status).toBe('done');
    cp = await task('rew');
    expect(service.applied.get('rew:two')).toBe(1);
    expect(service.applied.get('rew:two-redo2')).toBe(1);
    expect(cp.side_effects).toEqual([
      expect.objectContaining({ id: effect, status: 'done', idempotency_key: 'rew:two', superseded_by: 'effect-2' }),
      expect.objectContaining({ id: 'effect-2', status: 'done', idempotency_key: 'rew:two-redo2', asked_key: 'rew:two', attempts: 1 }),
    ]);
    const resumeVersion = (await openStore(root).history('rew')).map((v) => v.version);
    const plans = await Promise.all(resumeVersion.map((v) => openStore(root).readVersion('rew', v)));
    expect(plans.some((v) => v.resume_hint.includes('perform again, under a new key'))).toBe(true);
    const verify = await cli('verify', root, 'rew');
    expect(verify.code, verify.out).toBe(0);
  }, 60_000);

  it('resumes a fork TypeScript made after the parent published: the fork does not publish again', async () => {
    const store = openStore(root);
    const parent = await task('stop-me');
    // The version at which the publication was done but step two had not finished yet.
    let at = 0;
    for (const { version } of await store.history('stop-me')) {
      const v = await store.readVersion('stop-me', version);
      if (v.side_effects[0]?.status === 'done' && v.plan[1].status !== 'done') at = version;
    }
    expect(at).toBeGreaterThan(0);
    const forked = await cli('fork', root, 'stop-me', String(at), '--task', 'forked', '--by', 'grace');
    expect(forked.code, forked.out).toBe(0);
    const fork = await task('forked');
    expect(fork.forked_from).toEqual({ task_id: 'stop-me', version: at });
    expect(fork.side_effects[0]).toMatchObject({ idempotency_key: 'stop-me:two', asked_key: 'forked:two', status: 'done' });

    const before = total(service.applied);
    const resumed = await runner().resume('forked');
    expect(resumed, resumed.message).toMatchObject({ status: 'done' });
    expect(total(service.applied)).toBe(before);
    const done = await task('forked');
    expect(done.plan.map((s) => s.status)).toEqual(['done', 'done', 'done']);
    expect(done.side_effects).toHaveLength(1);
    // The parent was only read.
    expect((await task('stop-me')).version).toBe(parent.version);
  }, 60_000);
});
